"""Memory stays flat: 100k create/compute/drop cycles (eager ops, autograd, views, host copies)
must not grow the process's resident set beyond a small allowance once the caches are warm."""
import gc

import numpy as np

import oneflow_like as flow


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def cycle(i):
    x = flow.full((64,), float(i % 7))
    y = (x * 2 + 1).relu()
    z = y[::2].sum()
    if i % 10 == 0:
        w = flow.ones(8, requires_grad=True)
        (w * x[:8]).sum().backward()
        _ = w.grad
    if i % 100 == 0:
        _ = z.item()
        _ = flow.from_numpy(np.ones(16, dtype=np.float32)) + 1


def test_no_growth_over_100k_create_drop_cycles():
    for i in range(5000):  # warm the allocator caches, kernel tables, autograd pools
        cycle(i)
    flow.sync()
    gc.collect()
    before = rss_bytes()
    for i in range(100_000):
        cycle(i)
    flow.sync()
    gc.collect()
    grown = rss_bytes() - before
    # A leak of even 64 bytes per cycle would show as 6.4 MB; allow allocator noise below that.
    assert grown < 4 * 1024 * 1024, f"resident set grew by {grown / 2**20:.1f} MB over 100k cycles"
