"""Cost of flow.profiler on a small eager op loop: profiling off (the anchor) beside on.

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_profiler.py [--quick]

Each sample is N calls of `x + x` on a 16-element tensor followed by flow.sync(); the figure is
the median over samples, in microseconds per op, of the process's CPU time (time.process_time:
the machine is shared, and CPU time is what the recording adds; wall time is printed too). Rows: the op running inline on the caller's
thread (the VM's small-op fast path) and, in a child process with ONEFLOW_LIKE_VM_INLINE_LIMIT=0,
every op queued as an instruction to the compute stream's worker. Columns: "off, before" is the
loop before any profiler ran in the process (the build's baseline: nothing was ever enabled),
"off, after" the same loop after profiling stopped (off must cost nothing measurable: these two
agree within noise), "on" the loop inside profile(record_shapes=False), and the overhead per
instruction in ns = the median over the interleaved (off, on) sample pairs of (on - off), divided
by the instructions per op, counted from the recorded trace (the worker path also runs a
release_tensor instruction per op: the result dies while its add is in flight). Off and on
samples alternate so that a burst of load on the shared machine hits both alike; the median of
the pairs' differences is steadier under load than the difference of the medians.
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import QUICK  # noqa: E402  (sets sys.path for oneflow_like)

import oneflow_like as flow  # noqa: E402
from oneflow_like.profiler import profile  # noqa: E402

N = 2000 if QUICK else 5000
SAMPLES = 9 if QUICK else 41


def sample(x):
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(N):
        x + x
    flow.sync()
    return (time.process_time() - c0) / N * 1e6, (time.perf_counter() - w0) / N * 1e6


def median(samples, i):
    return statistics.median(s[i] for s in samples)


def measure():
    """(cpu off before, off after, on; wall off, on; instructions and events per op; the median
    of the pairs' cpu (on - off))."""
    x = flow.ones(16)
    for _ in range(3):
        sample(x)  # warm-up: allocator cache, kernel lookup
    before = [sample(x) for _ in range(SAMPLES)]
    off, on = [], []
    instructions = None
    with profile():  # the first session allocates the threads' buffers; later ones reuse them
        sample(x)
    for _ in range(SAMPLES):
        off.append(sample(x))
        with profile() as prof:
            on.append(sample(x))
        if instructions is None:  # every instruction the loop ran: the adds and the releases
            spans = prof.events()
            instructions = sum(1 for s in spans if s.category == "instruction") / N
            events = (len(spans) + len(prof._trace.counters)) / N
    return (
        median(before, 0),
        median(off, 0),
        median(on, 0),
        median(off, 1),
        median(on, 1),
        instructions,
        events,
        statistics.median(b[0] - a[0] for a, b in zip(off, on)),
    )


def main():
    if "--child" in sys.argv:
        print(*measure())
        return
    rows = [("inline on the caller's thread", measure())]
    env = dict(os.environ, ONEFLOW_LIKE_VM_INLINE_LIMIT="0")
    args = [sys.executable, os.path.abspath(__file__), "--child"] + (["--quick"] if QUICK else [])
    out = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=600, check=True
    ).stdout
    rows.append(("queued to the compute worker", tuple(float(v) for v in out.split())))
    print(f"profiler overhead: {N} x (x + x) on 16 floats, median of {SAMPLES} samples, us per op")
    head = (
        f"{'path':<32}{'cpu off, before':>16}{'cpu off, after':>15}{'cpu on':>9}"
        f"{'wall off':>10}{'wall on':>9}{'instr/op':>10}{'events/op':>11}"
        f"{'overhead ns/instr (cpu)':>25}"
    )
    print(head)
    print("-" * len(head))
    for name, (before, off, on, woff, won, instr, events, paired) in rows:
        per_instr = paired * 1000 / max(instr, 1e-9)
        print(
            f"{name:<32}{before:>16.3f}{off:>15.3f}{on:>9.3f}{woff:>10.3f}{won:>9.3f}{instr:>10.2f}"
            f"{events:>11.2f}{per_instr:>25.0f}"
        )
    print(
        "events/op: spans (launches, instructions) and allocator counters (flow starts not"
        " counted); the last column divides the whole per-op cost (median of the (off, on) pairs'"
        " differences) by the instructions per op"
    )


if __name__ == "__main__":
    main()
