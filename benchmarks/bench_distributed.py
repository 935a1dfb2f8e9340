"""Data-parallel figures (issue 16), 2 processes on 127.0.0.1:

1. all_reduce bus bandwidth, 1 KB .. 256 MB (float32 sum), ours against raw Gloo in the same
   processes, interleaved call by call on one tensor:
     raw Gloo        gloo::allreduce (ring, the same reduce function) called directly on the
                     group's own Gloo context, timed in C++ (`_time_raw_all_reduce`): no VM, no
                     signature check, no Python;
     ours            dist.all_reduce(t): Python, the VM instruction, the signature check (the
                     default path: exchanged when a collective's signature changes, so once
                     per size here, as in a training loop; Note [Signature checks]);
     ours, no check  the group's all_reduce(t, check=False), waited for in the call, as
                     dist.all_reduce does under ONEFLOW_LIKE_DIST_CHECK=0 (DDP's buckets skip
                     the check too: their layout is verified once at construction).
   Each iteration runs the three once, rotating which goes first; per size the median per-call
   time of each, the overhead = median(ours) / median(raw) - 1, and the spread: the 25th-75th
   percentiles of the per-iteration ratios ours_i / raw_i (the machine is shared: a burst of
   load hits the three calls of one iteration alike), and the fastest-call overhead
   min(ours) / min(raw) - 1. Bus bandwidth = bytes / time * 2 (n-1) / n.
2. DDP training throughput of an MLP (784-1024-1024-10, batch 128 per process) on 1 and 2
   processes, and the scaling efficiency (2-process samples/s / (2 x 1-process samples/s)).
3. The same DDP step on 2 processes, eager vs nn.Graph (the bucket all-reduces compiled into
   the graph as asynchronous start/done custom-calls), with 25 MB buckets (one) and 1 MB
   buckets (eight, which overlap backward): ms per step.

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_distributed.py [--quick] [--allreduce-only]
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QUICK = "--quick" in sys.argv
SIZES = [1 << k for k in range(10, 29, 2)]  # 1 KB .. 256 MB
if QUICK:
    SIZES = [1 << 10, 1 << 16, 1 << 20, 1 << 24]


def iters_for(nbytes):
    """Iterations (of the three calls each) per size: ~512 MB moved per column, 30 to 200."""
    lo = 5 if QUICK else 30
    hi = 50 if QUICK else 200
    return max(lo, min(hi, (512 << 20) // max(nbytes, 1)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(cmds_env):
    procs = [subprocess.Popen(c, env=e, stdout=subprocess.PIPE, text=True) for c, e in cmds_env]
    outs = [p.communicate(timeout=900)[0] for p in procs]
    for p in procs:
        if p.returncode != 0:
            raise SystemExit(f"a benchmark worker failed ({p.returncode})")
    return outs[0]


def env_for(rank, world, port, **extra):
    e = dict(os.environ)
    e.update(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    e["PYTHONPATH"] = os.path.join(ROOT, "python")
    e.pop("ONEFLOW_LIKE_DIST_CHECK", None)  # the "ours" column is the default path
    e.update(extra)
    return e


def allreduce_table(world):
    """{size: {"raw": [s...], "ours": [...], "nocheck": [...]}} from one pair of processes."""
    port = free_port()
    cmd = [sys.executable, __file__, "--worker-allreduce"] + [str(s) for s in SIZES]
    out = launch([(cmd, env_for(r, world, port)) for r in range(world)])
    rows = {}
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            rows[row["size"]] = row
    return rows


def worker_allreduce(sizes):
    import oneflow_like as flow
    import oneflow_like.distributed as dist

    dist.init_process_group("gloo")
    pg = dist._default_group("bench_distributed")  # the _C._ProcessGroupGloo
    clock = time.perf_counter

    def raw(t):
        return pg._time_raw_all_reduce(t, 1)[0]

    def ours(t):
        t0 = clock()
        dist.all_reduce(t)
        return clock() - t0

    def nocheck(t):
        t0 = clock()
        pg.all_reduce(t, 0, False, wait=True)
        return clock() - t0

    sides = [("raw", raw), ("ours", ours), ("nocheck", nocheck)]
    for s in sizes:
        t = flow.zeros(s // 4)  # zeros: the sums stay 0 (no overflow to inf over the iterations)
        for f in (ours, nocheck, raw):  # warm-up; ours first: it waits for the fill of t
            f(t)
        dist.barrier()
        samples = {k: [] for k, _ in sides}
        for i in range(iters_for(s)):
            for k, f in sides[i % 3 :] + sides[: i % 3]:  # every rank runs the same order
                samples[k].append(f(t))
        if dist.get_rank() == 0:
            print(json.dumps({"size": s, **samples}), flush=True)
    dist.destroy_process_group()


def quartiles(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return q[0], q[2]


def worker_ddp(steps, mode="eager"):
    import numpy as np

    import oneflow_like as flow
    import oneflow_like.distributed as dist
    import oneflow_like.nn as nn
    import oneflow_like.nn.functional as F

    dist.init_process_group("gloo")
    flow.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )
    cap = float(os.environ.get("BENCH_BUCKET_CAP_MB", "25"))
    model = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap)
    opt = flow.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = flow.randn(128, 784)
    y = flow.tensor(np.random.default_rng(dist.get_rank()).integers(0, 10, 128))

    def eager_step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    class Step(nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            return loss

    step = eager_step if mode == "eager" else (lambda g=Step(): g(x, y))

    for _ in range(3):
        step()
    flow.sync()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    loss.item()
    dt = time.perf_counter() - t0
    if dist.get_rank() == 0:
        print("DDP", f"{steps * 128 * dist.get_world_size() / dt:.1f}", f"{dt / steps * 1e3:.2f}")
    dist.destroy_process_group()


def ddp(world, steps, mode="eager", bucket_cap_mb=25):
    """(samples/s, ms per step)"""
    port = free_port()
    cmd = [sys.executable, __file__, "--worker-ddp", str(steps), mode]
    cap = {"BENCH_BUCKET_CAP_MB": str(bucket_cap_mb)}
    out = launch([(cmd, env_for(r, world, port, **cap)) for r in range(world)])
    line = [l for l in out.splitlines() if l.startswith("DDP")][0].split()
    return float(line[1]), float(line[2])


def human(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TB"


def main():
    world = 2
    bus = 2 * (world - 1) / world
    load = open("/proc/loadavg").read().split()[:3]
    print(f"all_reduce float32 sum, {world} processes on 127.0.0.1 (load average {' '.join(load)})")
    print("bus bandwidth GB/s of the median call; overhead = median(ours) / median(raw Gloo) - 1;")
    print("spread = 25th..75th percentile of the per-iteration ratios ours_i / raw_i - 1;")
    print("fastest = min(ours) / min(raw Gloo) - 1 (what is left when the load spares a call)")
    rows = allreduce_table(world)
    print(
        f"{'size':>8} {'iters':>5} {'raw Gloo':>9} {'ours':>7} {'no check':>9} "
        f"{'overhead':>9} {'spread':>17} {'fastest':>8} {'no check':>9} {'spread':>17} {'fastest':>8}"
    )
    for s in SIZES:
        r = rows[s]
        med = {k: statistics.median(r[k]) for k in ("raw", "ours", "nocheck")}
        gbs = {k: s / v * bus / 1e9 if v > 0 else float("nan") for k, v in med.items()}
        cells = []
        for k in ("ours", "nocheck"):
            lo, hi = quartiles([a / b - 1 for a, b in zip(r[k], r["raw"])])
            fast = (min(r[k]) / min(r["raw"]) - 1) * 100
            spread = "%+.1f..%+.1f%%" % (lo * 100, hi * 100)
            cells.append(f"{(med[k] / med['raw'] - 1) * 100:>+8.1f}% {spread:>17} {fast:>+7.1f}%")
        print(
            f"{human(s):>8} {len(r['raw']):>5} {gbs['raw']:>9.3f} {gbs['ours']:>7.3f} "
            f"{gbs['nocheck']:>9.3f} {cells[0]} {cells[1]}"
        )
    if "--allreduce-only" in sys.argv:
        return
    steps = 5 if QUICK else 20
    one = ddp(1, steps)[0]
    two = ddp(2, steps)[0]
    print(f"\nDDP MLP 784-1024-1024-10, batch 128 per process, {steps} steps")
    print(f"  1 process : {one:8.1f} samples/s")
    print(f"  2 processes: {two:8.1f} samples/s  scaling efficiency {two / (2 * one) * 100:.0f}%")
    graph_vs_eager(steps)


def graph_vs_eager(steps):
    # Interleaved, best of 3 (the machine is shared). With 25 MB buckets the MLP's 7.45 MB of
    # gradients are one bucket, reduced after the whole backward; with 1 MB buckets (8) each
    # bucket's all-reduce can overlap the gradients of the layers before it, in eager DDP (the
    # collective stream) and in nn.Graph (the asynchronous start/done pair) alike.
    print(f"\nDDP step on 2 processes, same MLP and batch (ms per step, best of runs)")
    for cap in (25, 1):
        best = {"eager": float("inf"), "graph": float("inf")}
        for _ in range(1 if QUICK else 3):
            for mode in best:
                best[mode] = min(best[mode], ddp(2, steps, mode, cap)[1])
        print(
            f"  buckets of {cap:>2} MB: eager DDP {best['eager']:8.2f} ms, nn.Graph "
            f"{best['graph']:8.2f} ms ({best['eager'] / best['graph']:.2f}x)"
        )


if __name__ == "__main__":
    if "--worker-allreduce" in sys.argv:
        worker_allreduce([int(a) for a in sys.argv[sys.argv.index("--worker-allreduce") + 1 :]])
    elif "--worker-ddp" in sys.argv:
        i = sys.argv.index("--worker-ddp")
        worker_ddp(int(sys.argv[i + 1]), sys.argv[i + 2])
    elif "--graph-vs-eager" in sys.argv:
        graph_vs_eager(5 if QUICK else 20)
    else:
        main()
