"""Eager training steps with the CPU cores oversubscribed: K busy background processes (pure-Python
spin loops) run while ours and PyTorch's steps are timed interleaved in the same run, K = 0, 1, 2, 4.

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_contention.py [--quick] [--k 0,1,2,4]
                                                                      [--threads N]

Models (SGD + momentum, cross entropy, float32): the MLP 784-1024-1024-10 (batch 128), a small CNN
(conv3x3 3->16, ReLU, maxpool, conv3x3 16->32, ReLU, maxpool, linear to 10; batch 32 of 3x32x32)
and the TransformerEncoderLayer(256, 4, 1024, batch_first, dropout 0) on [32, 64, 256] with a
mean-pooled linear head (the step of bench_amp.py). Both sides use the same number of intra-op
threads (--threads, default 2: torch.set_num_threads and flow.set_num_threads).

The spinners are started with PR_SET_PDEATHSIG (they die with this process even if it is killed)
and are also killed on exit, on an exception and on SIGINT/SIGTERM. The anchor is torch's step in
the same run and under the same load: the ratio column is ours/torch (lower is better), and
"slowdown" is each side's time at K divided by its time at K = 0.
"""
import atexit
import ctypes
import os
import signal
import subprocess
import sys
import time

from _common import QUICK, Table, import_torch, interleaved, per_call, ratio

import numpy as np

import oneflow_like as flow


def _arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        if i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return default


THREADS = int(_arg("--threads", "2"))
KS = [int(k) for k in _arg("--k", "0,1,2,4").split(",")]
torch = import_torch(THREADS)
flow.set_num_threads(THREADS)

_SPIN = "while True:\n    pass\n"
_spinners = []


def _die_with_parent():
    # Runs in the child between fork and exec: SIGKILL it when this process dies.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def runnable():
    """Threads running or runnable right now, machine-wide (procs_running in /proc/stat)."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def start_spinners(k):
    for _ in range(k):
        _spinners.append(
            subprocess.Popen(
                [sys.executable, "-c", _SPIN],
                preexec_fn=_die_with_parent,
                stdin=subprocess.DEVNULL,
            )
        )
    time.sleep(0.3 if k else 0)  # let them get going (and the load settle)


def stop_spinners():
    while _spinners:
        p = _spinners.pop()
        if p.poll() is None:
            p.kill()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _on_signal(signum, _frame):
    stop_spinners()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


atexit.register(stop_spinners)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


def make(lib, kind):
    nn = lib.nn
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    if kind == "mlp":
        model = nn.Sequential(
            nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
        )
        x = rng.standard_normal((128, 784)).astype(np.float32)
        y = rng.integers(0, 10, 128)
        fwd = model
    elif kind == "cnn":
        model = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 8 * 8, 10),
        )
        x = rng.standard_normal((32, 3, 32, 32)).astype(np.float32)
        y = rng.integers(0, 10, 32)
        fwd = model
    else:
        enc = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
        head = nn.Linear(256, 10)
        model = nn.ModuleList([enc, head])
        x = rng.standard_normal((32, 64, 256)).astype(np.float32)
        y = rng.integers(0, 10, 32)

        def fwd(t):
            return head(enc(t).mean(1))

    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = lib.tensor(x), lib.tensor(y)
    F = lib.nn.functional

    def step():
        loss = F.cross_entropy(fwd(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    models = ["mlp", "cnn", "transformer"]
    steps = {"mlp": 10, "cnn": 10, "transformer": 4}
    repeats = 5 if QUICK else 9
    budget = 3.0 if QUICK else 8.0
    sides = {}
    for kind in models:
        ours = make(flow, kind)
        for _ in range(3):
            ours()
        flow.sync()
        sides[f"ours {kind}"] = lambda f=ours, n=steps[kind]: per_call(f, flow.sync, n)
        if torch is not None:
            theirs = make(torch, kind)
            for _ in range(3):
                theirs()
            sides[f"torch {kind}"] = lambda f=theirs, n=steps[kind]: per_call(f, lambda: None, n)
    table = Table(
        f"Training step under CPU contention, ms per step ({os.cpu_count()} cores, {THREADS} "
        f"intra-op threads each; K busy spinner processes)",
        [
            "model",
            "K",
            "runnable",
            "ours",
            "torch",
            "ours/torch",
            "ours slowdown",
            "torch slowdown",
        ],
        note="runnable: procs_running at the end of the K block (this process included). "
        "ours/torch: lower is better; slowdown: time at K / time at K = 0 of the same side.",
    )
    base = {}
    results = {}
    try:
        for k in KS:
            start_spinners(k)
            try:
                for kind in models:
                    pair = {n: f for n, f in sides.items() if n.endswith(" " + kind)}
                    r = interleaved(pair, repeats, budget_s=budget)
                    results[(kind, k)] = r
            finally:
                load = runnable()
                stop_spinners()
            for kind in models:
                r = results[(kind, k)]
                o, t = r.get(f"ours {kind}"), r.get(f"torch {kind}")
                if k == KS[0]:
                    base[kind] = (o, t)

                def ms(v):
                    return f"{v * 1e3:.1f}" if isinstance(v, float) else "-"

                def slow(v, b):
                    return f"{v / b:.2f}x" if isinstance(v, float) and isinstance(b, float) else "-"

                table.add(
                    kind,
                    k,
                    load,
                    ms(o),
                    ms(t),
                    ratio(o, t),
                    slow(o, base[kind][0]),
                    slow(t, base[kind][1]),
                )
    finally:
        stop_spinners()
    table.print()


if __name__ == "__main__":
    main()
