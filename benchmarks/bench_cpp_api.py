"""The C++ API beside our Python front end: per-op overhead and the digits MLP training step.

    make build && PYTHONPATH=python /usr/bin/python3 benchmarks/bench_cpp_api.py [--quick]

Runs benchmarks/bench_cpp_api.cc (built here with Bazel when missing) and the same measurements
in Python, alternating rounds so both see the same machine load (these machines are shared);
each figure is the median over the rounds. Rows: microseconds per 1-element add (N calls, then
one sync), with and without requires_grad inputs, and milliseconds per digits-MLP training step
(64-128-64-10, dropout 0.1, batch 64, Adam with weight decay; zero_grad, forward, loss,
backward, step, loss.item()). The libtorch column runs the same three measurements through
libtorch's C++ API (benchmarks/bench_libtorch.cc, compiled here with g++ against Debian's
libtorch-dev, which python3-torch depends on). Ratios: C++ / libtorch (the issue's target for the
per-op overhead: <= 0.5x) and C++ / Python (target for the MLP step: <= 1.00x); lower is better.
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import QUICK, Table, per_call  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import oneflow_like as flow  # noqa: E402
import oneflow_like.nn.functional as F  # noqa: E402
from train_digits import make_mlp  # noqa: E402  (the model examples/cpp/train_digits.cc builds)

BINARY = os.path.join(ROOT, "bazel-bin", "benchmarks", "bench_cpp_api")
TORCH_SRC = os.path.join(ROOT, "benchmarks", "bench_libtorch.cc")
TORCH_BINARY = os.path.join(ROOT, "build", "bench_libtorch")  # git-ignored
TORCH_INCLUDE = "/usr/include/torch/csrc/api/include"
ROUNDS = 3 if QUICK else 7
CALLS = 500 if QUICK else 2000


def _binary():
    if not os.path.exists(BINARY):
        flags = ["--disk_cache=" + os.path.expanduser("~/.cache/oneflow_like/bazel-disk-v2")]
        if os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
            flags.append("--config=cuda")
        subprocess.run(
            ["bazel", "build", *flags, "//benchmarks:bench_cpp_api"], cwd=ROOT, check=True
        )
    return BINARY


def _torch_binary():
    if not os.path.isdir(TORCH_INCLUDE):
        sys.exit(
            "bench_cpp_api: libtorch's headers are missing (%s): apt-get install libtorch-dev"
            % TORCH_INCLUDE
        )
    sources = (TORCH_SRC, os.path.join(os.path.dirname(TORCH_SRC), "bench_timing.h"))
    if not os.path.exists(TORCH_BINARY) or os.path.getmtime(TORCH_BINARY) < max(
        os.path.getmtime(s) for s in sources
    ):
        print("compiling %s against libtorch (about a minute)" % TORCH_SRC, file=sys.stderr)
        os.makedirs(os.path.dirname(TORCH_BINARY), exist_ok=True)
        cmd = [
            "g++",
            "-O2",
            "-std=c++17",
            TORCH_SRC,
            "-I" + TORCH_INCLUDE,
            "-I" + os.path.dirname(TORCH_SRC),
            "-o",
            TORCH_BINARY,
        ]
        subprocess.run(cmd + ["-ltorch", "-ltorch_cpu", "-lc10"], check=True)
    return TORCH_BINARY


def _run(binary):
    out = subprocess.run([binary, "--quick"], capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def cpp_round():
    return _run(_binary())


def libtorch_round():
    return _run(_torch_binary())


def python_round():
    res = {}
    for rg, key in ((False, "add_us"), (True, "add_grad_us")):
        a, b = flow.ones(1, requires_grad=rg), flow.ones(1, requires_grad=rg)
        flow.add(a, b)
        flow.sync()
        res[key] = (
            statistics.median(per_call(lambda: flow.add(a, b), flow.sync, CALLS) for _ in range(5))
            * 1e6
        )
    flow.manual_seed(0)
    model = make_mlp()
    opt = flow.optim.Adam(model.parameters(), lr=2e-3, weight_decay=1e-4)
    x, y = flow.randn(64, 64), flow.randint(0, 10, (64,))

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()

    for _ in range(5):
        step()
    res["mlp_step_ms"] = statistics.median(per_call(step, flow.sync, 5) for _ in range(5)) * 1e3
    return res


def _torch_version():
    try:
        with open(os.path.join(TORCH_INCLUDE, "torch", "version.h")) as f:
            v = dict(line.split()[1:3] for line in f if line.startswith("#define TORCH_VERSION_"))
        return "%s.%s.%s" % (
            v["TORCH_VERSION_MAJOR"],
            v["TORCH_VERSION_MINOR"],
            v["TORCH_VERSION_PATCH"],
        )
    except (OSError, KeyError, ValueError):
        pass
    return "(version unknown)"


def main():
    samples = {"C++": [], "libtorch": [], "Python": []}
    _binary(), _torch_binary()  # build both before the first round
    for _ in range(ROUNDS):
        samples["C++"].append(cpp_round())
        samples["libtorch"].append(libtorch_round())
        samples["Python"].append(python_round())
    med = {
        side: {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        for side, rounds in samples.items()
    }
    table = Table(
        "C++ API vs Python front end (median of %d alternating rounds)" % ROUNDS,
        ["case", "C++", "libtorch", "Python", "C++/libtorch", "C++/Python"],
        note="libtorch %s from C++ (Debian's libtorch-dev), default threads" % _torch_version(),
    )
    for key, name in (
        ("add_us", "add, 1 element (us/call)"),
        ("add_grad_us", "add, 1 element, requires_grad (us/call)"),
        ("mlp_step_ms", "digits MLP step, batch 64, Adam (ms)"),
    ):
        c, t, p = med["C++"][key], med["libtorch"][key], med["Python"][key]
        table.add(name, f"{c:.2f}", f"{t:.2f}", f"{p:.2f}", f"{c / t:.2f}x", f"{c / p:.2f}x")
    table.print()


if __name__ == "__main__":
    t0 = time.time()
    main()
    print(f"({time.time() - t0:.0f}s)", file=sys.stderr)
