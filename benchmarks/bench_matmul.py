"""GFLOP/s of matmul (square f32 1024-4096, the MLP's linear shapes forward and backward) and GB/s
of row reductions, ours beside PyTorch (Debian's python3-torch, 2 threads) in the same run and
beside the machine's limits (TOOLCHAIN.md: 421 GFLOP/s f32 FMA peak on 2 cores, STREAM triad
27.7 GB/s on 2 threads).

    make build && PYTHONPATH=python OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 benchmarks/bench_matmul.py [--quick]
"""
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # PyTorch's OpenMP threads spin otherwise
import numpy as np

import oneflow_like as flow

try:
    import torch

    torch.set_num_threads(2)
except ImportError:
    torch = None

PEAK_GFLOPS, STREAM_GBS = 421.0, 27.7
QUICK = "--quick" in sys.argv


def timeit(fn, sync, min_time=0.3 if QUICK else 1.0, max_iters=200):
    fn()
    sync()
    best, iters, start = float("inf"), 0, time.perf_counter()
    while iters < max_iters and (iters < 3 or time.perf_counter() - start < min_time):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
        iters += 1
    return best


def row(name, work, unit, ours, theirs, limit):
    o = work / ours / 1e9
    t = f"{work / theirs / 1e9:8.1f}" if theirs else "       -"
    ratio = f"{(work / theirs) / (work / ours):5.2f}x" if theirs else "    -"
    print(f"{name:<34} {o:8.1f} {t}  {ratio}   {unit} (limit {limit:.0f})")


def both(make, op_flow, op_torch):
    arrays = make()
    fa = [flow.tensor(a) for a in arrays]
    ours = timeit(lambda: op_flow(*fa), flow.sync)
    theirs = None
    if torch is not None:
        ta = [torch.from_numpy(a) for a in arrays]
        theirs = timeit(lambda: op_torch(*ta), lambda: None)
    return ours, theirs


def main():
    rng = np.random.default_rng(0)
    r = lambda *s: rng.standard_normal(s, dtype=np.float32)
    print(f"{'case':<34} {'ours':>8} {'torch':>8}  torch/ours")
    sizes = [1024, 2048] if QUICK else [1024, 2048, 4096]
    for n in sizes:
        o, t = both(lambda: (r(n, n), r(n, n)), flow.matmul, torch.matmul if torch else None)
        row(f"matmul {n}x{n}x{n}", 2.0 * n**3, "GFLOP/s", o, t, PEAK_GFLOPS)
    # The MLP 784-1024-1024-10 at batch 128: forward linear (x @ W^T + b), and its two backward GEMMs.
    for b, k, n in [(128, 784, 1024), (128, 1024, 1024), (128, 1024, 10)]:
        o, t = both(
            lambda: (r(b, k), r(n, k), r(n)),
            flow.linear,
            torch.nn.functional.linear if torch else None,
        )
        row(f"linear fwd {b}x{k} @ ({n}x{k})^T+b", 2.0 * b * k * n, "GFLOP/s", o, t, PEAK_GFLOPS)
        o, t = both(lambda: (r(b, n), r(n, k)), flow.matmul, torch.matmul if torch else None)
        row(f"  grad_x {b}x{n} @ {n}x{k}", 2.0 * b * k * n, "GFLOP/s", o, t, PEAK_GFLOPS)
        o, t = both(
            lambda: (r(b, n), r(b, k)),
            lambda g, x: g.t() @ x,
            (lambda g, x: g.t() @ x) if torch else None,
        )
        row(f"  grad_W ({b}x{n})^T @ {b}x{k}", 2.0 * b * k * n, "GFLOP/s", o, t, PEAK_GFLOPS)
    o, t = both(lambda: (r(4, 4), r(4, 4)), flow.matmul, torch.matmul if torch else None)
    print(f"{'matmul 4x4 (us per call)':<34} {o * 1e6:8.2f} {t * 1e6 if t else float('nan'):8.2f}")
    o, t = both(lambda: (r(32, 128, 64), r(32, 64, 128)), flow.bmm, torch.bmm if torch else None)
    row("bmm 32x(128x64 @ 64x128)", 2.0 * 32 * 128 * 64 * 128, "GFLOP/s", o, t, PEAK_GFLOPS)
    # Reductions: bytes read / time.
    for name, shape, dim in [
        ("sum rows 4096x4096 dim=-1", (4096, 4096), -1),
        ("sum cols 4096x4096 dim=0", (4096, 4096), 0),
        ("sum all 16M", (1 << 24,), None),
        ("amax rows 4096x4096", (4096, 4096), -1),
        ("logsumexp rows 4096x4096", (4096, 4096), -1),
        ("var rows 4096x4096", (4096, 4096), -1),
    ]:
        op = name.split()[0]
        fo = {
            "sum": lambda x: x.sum(dim),
            "amax": lambda x: x.amax(dim),
            "logsumexp": lambda x: x.logsumexp(dim),
            "var": lambda x: x.var(dim),
        }[op]
        to = {
            "sum": lambda x: x.sum(dim) if dim is not None else x.sum(),
            "amax": lambda x: x.amax(dim),
            "logsumexp": lambda x: x.logsumexp(dim),
            "var": lambda x: x.var(dim),
        }[op]
        o, t = both(lambda: (r(*shape),), fo, to if torch else None)
        row(name, 4.0 * np.prod(shape), "GB/s", o, t, STREAM_GBS)


if __name__ == "__main__":
    main()
