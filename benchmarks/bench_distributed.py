"""Data-parallel figures (issue 16), 2 processes on 127.0.0.1:

1. all_reduce bus bandwidth, 1 KB .. 256 MB (float32 sum): ours (flow.distributed.all_reduce,
   a VM instruction on the collective stream, with and without the per-op signature check)
   against raw Gloo (benchmarks/gloo_allreduce_bench.cc: the same store, transport and sum, no
   VM) in the same run, interleaved; each side reports its fastest iteration (the machine
   is shared: means swing with the load, minima do not), best of 3 runs per size. Bus bandwidth = bytes / time *
   2 (n - 1) / n. DDP's bucket all-reduces skip the signature check (the layout is verified
   once at construction), so the "no check" column is what DDP pays.
2. DDP training throughput of an MLP (784-1024-1024-10, batch 128 per process) on 1 and 2
   processes, and the scaling efficiency (2-process samples/s / (2 x 1-process samples/s)).
3. The same DDP step on 2 processes, eager vs nn.Graph (the bucket all-reduces compiled into
   the graph as asynchronous start/done custom-calls), with 25 MB buckets (one) and 1 MB
   buckets (eight, which overlap backward): ms per step.

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_distributed.py [--quick]

Needs bazel-bin/benchmarks/gloo_allreduce_bench (bazel build //benchmarks:gloo_allreduce_bench).
"""
import os
import socket
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
    return max(3, min(300, (64 << 20) // max(nbytes, 1)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(cmds_env):
    procs = [subprocess.Popen(c, env=e, stdout=subprocess.PIPE, text=True) for c, e in cmds_env]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for p in procs:
        if p.returncode != 0:
            raise SystemExit(f"a benchmark worker failed ({p.returncode})")
    return outs[0]


def env_for(rank, world, port, **extra):
    e = dict(os.environ)
    e.update(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    e["PYTHONPATH"] = os.path.join(ROOT, "python")
    e.update(extra)
    return e


def parse(out):
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            rows[int(parts[0])] = float(parts[1])
    return rows


def ours(world, check):
    port = free_port()
    sizes = [str(s) for s in SIZES]
    extra = {} if check else {"ONEFLOW_LIKE_DIST_CHECK": "0"}
    cmd = [sys.executable, __file__, "--worker-allreduce"] + sizes
    return parse(launch([(cmd, env_for(r, world, port, **extra)) for r in range(world)]))


def raw_gloo(world):
    exe = os.path.join(ROOT, "bazel-bin", "benchmarks", "gloo_allreduce_bench")
    if not os.path.exists(exe):
        return None
    port = free_port()
    outs = {}
    for s in SIZES:  # one size per run: each its own iteration count
        cmd = lambda r: [exe, str(r), str(world), str(port), str(iters_for(s)), str(s)]
        outs.update(parse(launch([(cmd(r), env_for(r, world, port)) for r in range(world)])))
        port = free_port()
    return outs


def worker_allreduce(sizes):
    import oneflow_like as flow
    import oneflow_like.distributed as dist

    dist.init_process_group("gloo")
    for s in sizes:
        t = flow.ones(s // 4)
        dist.all_reduce(t)  # warm-up (allocates)
        dist.barrier()
        dt = float("inf")
        for _ in range(iters_for(s)):  # the fastest iteration, as the raw Gloo side reports
            t0 = time.perf_counter()
            dist.all_reduce(t)
            dt = min(dt, time.perf_counter() - t0)
        if dist.get_rank() == 0:
            print(s, f"{dt:.9f}", flush=True)
    dist.destroy_process_group()


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
    print(f"all_reduce float32 sum, {world} processes on 127.0.0.1 (bus bandwidth GB/s)")
    # The machine is shared: the three columns run interleaved, best of `runs` per size.
    runs = 1 if QUICK else 3
    raw, mine, nocheck = {}, {}, {}
    for _ in range(runs):
        for best, fn in (
            (raw, raw_gloo),
            (mine, lambda w: ours(w, True)),
            (nocheck, lambda w: ours(w, False)),
        ):
            for s, t in (fn(world) or {}).items():
                best[s] = min(best.get(s, float("inf")), t)
    raw = raw or None
    print(
        f"{'size':>8} {'raw Gloo':>10} {'ours':>10} {'ours, no check':>15} {'overhead':>9} {'no check':>9}"
    )
    for s in SIZES:
        g = raw.get(s) if raw else None
        cols = [s / t * bus / 1e9 if t else float("nan") for t in (g, mine.get(s), nocheck.get(s))]
        over = f"{(mine[s] / g - 1) * 100:+.1f}%" if g else "n/a"
        over2 = f"{(nocheck[s] / g - 1) * 100:+.1f}%" if g else "n/a"
        print(
            f"{human(s):>8} {cols[0]:>10.3f} {cols[1]:>10.3f} {cols[2]:>15.3f} {over:>9} {over2:>9}"
        )
    if raw is None:
        print("(raw Gloo column missing: bazel build //benchmarks:gloo_allreduce_bench)")
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
