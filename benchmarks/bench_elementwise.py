"""Elementwise kernels: GB/s of add/mul/relu (and a few more) on 16M floats, and microseconds per
call of 1-element add/relu from Python, beside PyTorch (torch.set_num_threads(2)) measured in the
same run, interleaved, medians of the repeats. The machine is shared: the load average is printed.

    make build && PYTHONPATH=python /usr/bin/python3 benchmarks/bench_elementwise.py [--quick]
"""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch spins up OpenMP
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python")
)

import numpy as np  # noqa: E402

import oneflow_like as flow  # noqa: E402

QUICK = "--quick" in sys.argv
try:
    import torch

    torch.set_num_threads(2)
except ImportError:
    torch = None


def timed(fn, sync, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls


def interleaved(sides, repeats):
    """{name: median seconds}, measuring the sides alternately so load bursts hit both."""
    samples = {k: [] for k in sides}
    for _ in range(repeats):
        for k, f in sides.items():
            samples[k].append(f())
    return {k: statistics.median(v) for k, v in samples.items()}


def main():
    n = (1 << 22) if QUICK else (1 << 24)
    repeats = 3 if QUICK else 7
    a_np = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    b_np = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    ours = {"a": flow.tensor(a_np), "b": flow.tensor(b_np)}
    theirs = (
        {"a": torch.from_numpy(a_np.copy()), "b": torch.from_numpy(b_np.copy())} if torch else None
    )
    mb = n * 4 / 1e6
    print(
        f"elementwise, {n / 2**20:.0f}M f32 elements, load average {os.getloadavg()[0]:.2f}, "
        f"torch {'%s (2 threads)' % torch.__version__ if torch else 'not installed'}"
    )
    # (name, bytes moved in MB, ours, theirs)
    big = [
        ("add", 3 * mb, lambda t: flow.add(t["a"], t["b"]), lambda t: torch.add(t["a"], t["b"])),
        ("mul", 3 * mb, lambda t: t["a"] * t["b"], lambda t: t["a"] * t["b"]),
        ("mul scalar", 2 * mb, lambda t: t["a"] * 2.0, lambda t: t["a"] * 2.0),
        ("relu", 2 * mb, lambda t: flow.relu(t["a"]), lambda t: torch.relu(t["a"])),
        ("add_ (in place)", 3 * mb, lambda t: t["a"].add_(t["b"]), lambda t: t["a"].add_(t["b"])),
        ("gt", 2.25 * mb, lambda t: t["a"] > t["b"], lambda t: t["a"] > t["b"]),
        (
            "where",
            3.25 * mb,
            lambda t: flow.where(t["a"] > 0, t["a"], t["b"]),
            lambda t: torch.where(t["a"] > 0, t["a"], t["b"]),
        ),
        ("sigmoid", 2 * mb, lambda t: flow.sigmoid(t["a"]), lambda t: torch.sigmoid(t["a"])),
        ("exp", 2 * mb, lambda t: flow.exp(t["a"]), lambda t: torch.exp(t["a"])),
        ("gelu", 2 * mb, lambda t: flow.gelu(t["a"]), lambda t: torch.nn.functional.gelu(t["a"])),
    ]
    print(f"\n{'op':<18}{'ours GB/s':>11}{'torch GB/s':>12}{'ours/torch time':>17}")
    for name, mbytes, f_ours, f_theirs in big:
        calls = 3 if QUICK else 10
        sides = {"ours": lambda: timed(lambda: f_ours(ours), flow.sync, calls)}
        if torch:
            sides["torch"] = lambda: timed(lambda: f_theirs(theirs), lambda: None, calls)
        for f in sides.values():
            f()  # warm up (allocator caches, page faults)
        r = interleaved(sides, repeats)
        gbs = {k: mbytes / 1e3 / v for k, v in r.items()}
        ratio = f"{r['ours'] / r['torch']:.2f}x" if torch else "-"
        print(f"{name:<18}{gbs['ours']:>11.1f}{gbs.get('torch', float('nan')):>12.1f}{ratio:>17}")
    print(
        "(bytes counted: inputs read + output written; STREAM triad here: ~14 GB/s on 1 core, ~28 on 2)"
    )

    one = {"a": flow.tensor([1.0]), "b": flow.tensor([2.0])}
    one_t = {"a": torch.tensor([1.0]), "b": torch.tensor([2.0])} if torch else None
    tiny = [
        ("add 1 elem", lambda t: flow.add(t["a"], t["b"]), lambda t: torch.add(t["a"], t["b"])),
        ("relu 1 elem", lambda t: flow.relu(t["a"]), lambda t: torch.relu(t["a"])),
        ("mul scalar 1 elem", lambda t: t["a"] * 2.0, lambda t: t["a"] * 2.0),
    ]
    print(f"\n{'op':<18}{'ours us':>11}{'torch us':>12}{'ours/torch':>17}")
    for name, f_ours, f_theirs in tiny:
        calls = 2000 if QUICK else 20000
        sides = {"ours": lambda: timed(lambda: f_ours(one), flow.sync, calls)}
        if torch:
            sides["torch"] = lambda: timed(lambda: f_theirs(one_t), lambda: None, calls)
        for f in sides.values():
            f()
        r = interleaved(sides, repeats)
        ratio = f"{r['ours'] / r['torch']:.2f}x" if torch else "-"
        print(
            f"{name:<18}{r['ours'] * 1e6:>11.2f}{r.get('torch', float('nan')) * 1e6:>12.2f}{ratio:>17}"
        )


if __name__ == "__main__":
    main()
