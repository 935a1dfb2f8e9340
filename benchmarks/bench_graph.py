"""nn.Graph (lazy mode) against eager mode on the CPU.

    make build && PYTHONPATH=python /usr/bin/python3 benchmarks/bench_graph.py [--quick]

One row per model: the three training steps of the front-end benchmark (MLP 784-1024-1024-10 at
batch 128 with SGD momentum; a CNN conv32 3x3-relu-maxpool-conv64 3x3-relu-maxpool-linear10 at
batch 64 on 1x28x28; a TransformerEncoderLayer d_model 256, 4 heads, seq 128, batch 8 with an MSE
loss) and an inference-only MLP forward (batch 128, no grad). Columns:
  eager ms / graph ms: milliseconds per step, median over samples of a few steps each followed by
      a full sync (flow.sync()); eager and graph samples are interleaved so load hits both;
  speedup: eager / graph;
  compile s: trace + lower + compile (HLO passes, buffer assignment, thunk emission, kernel JIT;
      the JIT's disk cache is warm after the first run of this script);
  eager peak MB / graph peak MB: the CPU caching allocator's peak during two steps (reset
      before them); for the graph, plus its executable's temp arena (allocated outside the
      caching allocator), so both count everything a step needs beyond what was live before;
  arena MB / lower bound MB: buffer assignment's temp arena (the simulated peak of the chosen
      schedule, packed best-fit) and the largest set of temporaries live at once;
  kernel calls: ops without an HLO lowering, run as "ofl.kernel.<op>" custom calls;
  GEMM GFLOP: the floating-point work of the graph's GEMM thunks (2*batch*m*n*k summed over the
      thunk dump; convolutions are not counted);
  eager GEMM ms / graph GEMM ms: time per step inside the f32 GEMM (device/cpu/gemm.cc, which
      eager matmuls and the graph's GEMM thunks share), measured over 3 more steps of each;
  ceiling: eager ms / eager GEMM ms, the speedup a compiled step would reach if it removed every
      non-GEMM cost and ran the same GEMMs as eager ("-" when the model has no GEMMs, or has
      convolutions, whose oneDNN time is not counted).
A model whose ops our runtime lacks prints "missing: ..." in its row.
"""
import os
import statistics
import sys
import time

import numpy as np

import oneflow_like as flow

QUICK = "--quick" in sys.argv
SAMPLES = 5 if QUICK else 9
STEPS_PER_SAMPLE = 2 if QUICK else 3
BUDGET_S = 8.0 if QUICK else 25.0  # per model, both modes together


def _mlp():
    nn = flow.nn
    return nn.Sequential(
        nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def _cnn():
    nn = flow.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 5 * 5, 10),
    )


def _transformer():
    return flow.nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)


def _cls(rng, shape):
    return (
        flow.tensor(rng.standard_normal(shape, dtype=np.float32)),
        flow.tensor(rng.integers(0, 10, size=(shape[0],), dtype=np.int64)),
    )


def _reg(rng, shape):
    return (
        flow.tensor(rng.standard_normal(shape, dtype=np.float32)),
        flow.tensor(rng.standard_normal(shape, dtype=np.float32)),
    )


MODELS = [
    ("MLP 784-1024-1024-10 b128 train", _mlp, lambda r: _cls(r, (128, 784)), "cross_entropy", True),
    (
        "CNN conv32-conv64-linear b64 train",
        _cnn,
        lambda r: _cls(r, (64, 1, 28, 28)),
        "cross_entropy",
        True,
    ),
    (
        "TransformerEncoderLayer d256 h4 8x128 train",
        _transformer,
        lambda r: _reg(r, (8, 128, 256)),
        "mse_loss",
        True,
    ),
    ("MLP 784-1024-1024-10 b128 inference", _mlp, lambda r: _cls(r, (128, 784)), None, False),
]


def make_steps(build, data, loss_name, train):
    """(eager_step, graph, x, y) over two identical copies of the model."""
    F = flow.nn.functional
    rng = np.random.default_rng(0)
    x, y = data(rng)
    flow.manual_seed(0)
    m_eager = build()
    flow.manual_seed(0)
    m_graph = build()
    if not train:
        m_eager.eval()
        m_graph.eval()

        def eager_step(x, y):
            with flow.no_grad():
                return m_eager(x)

        class Infer(flow.nn.Graph):
            def __init__(self):
                super().__init__()
                self.model = m_graph

            def build(self, x, y):
                return self.model(x)

        return eager_step, Infer(), x, y

    loss_fn = getattr(F, loss_name)
    opt_e = flow.optim.SGD(m_eager.parameters(), lr=0.01, momentum=0.9)
    opt_g = flow.optim.SGD(m_graph.parameters(), lr=0.01, momentum=0.9)

    def eager_step(x, y):
        opt_e.zero_grad()
        loss = loss_fn(m_eager(x), y)
        loss.backward()
        opt_e.step()
        return loss

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = m_graph
            self.add_optimizer(opt_g)

        def build(self, x, y):
            loss = loss_fn(self.model(x), y)
            loss.backward()
            return loss

    return eager_step, Train(), x, y


def sample(step, x, y):
    t0 = time.perf_counter()
    for _ in range(STEPS_PER_SAMPLE):
        step(x, y)
    flow.sync()
    return (time.perf_counter() - t0) / STEPS_PER_SAMPLE


def peak_mb(step, x, y):
    flow.sync()
    flow._C._cpu_reset_peak()
    for _ in range(2):
        step(x, y)
    flow.sync()
    stats = flow._C._cpu_memory_stats()
    return stats["peak_allocated"] / 2**20


def gemm_rate_gflops():
    """GFLOP/s of a 1024^3 f32 matmul: the machine's best GEMM rate in this process (the fastest
    of 12 runs, so that load on the shared machine hardly moves it)."""
    a, b = flow.randn(1024, 1024), flow.randn(1024, 1024)
    c = a @ b
    times = []
    for _ in range(12):
        flow.sync()
        t0 = time.perf_counter()
        c = a @ b
        flow.sync()
        times.append(time.perf_counter() - t0)
    del c
    return 2 * 1024**3 / min(times) / 1e9


def gemm_gflop(thunks):
    """Sum of 2*batch*m*n*k over the GEMM thunks of a thunk dump."""
    total = 0
    for line in thunks.splitlines():
        if line.strip().startswith("gemm "):
            f = dict(
                kv.split("=", 1)
                for kv in line.split()
                if kv.split("=", 1)[0] in ("batch", "m", "n", "k")
            )
            total += 2 * int(f["batch"]) * int(f["m"]) * int(f["n"]) * int(f["k"])
    return total / 1e9


def bench_model(name, build, data, loss_name, train):
    eager_step, graph, x, y = make_steps(build, data, loss_name, train)
    t0 = time.perf_counter()
    out_g = graph(x, y)  # trace + lower + compile (+ first run)
    flow.sync()
    first_call = time.perf_counter() - t0
    st = graph.stats()
    compile_s = st["trace_seconds"] + st["lower_seconds"] + st["compile_seconds"]
    out_e = eager_step(x, y)
    if train:  # same parameters before the first step: the first losses agree
        diff = abs(out_g.item() - out_e.item())
        check = f"{out_e.item():.4f}/{out_g.item():.4f}"
    else:
        diff = float(np.abs(out_g.detach().numpy() - out_e.detach().numpy()).max())
        check = f"max|diff| {diff:.1e}"
    for _ in range(2):  # warm-up
        eager_step(x, y)
        graph(x, y)
    flow.sync()
    e_samples, g_samples = [], []
    t_start = time.perf_counter()
    while len(e_samples) < SAMPLES and (
        len(e_samples) < 3 or time.perf_counter() - t_start < BUDGET_S
    ):
        e_samples.append(sample(eager_step, x, y))
        g_samples.append(sample(graph, x, y))
    e_ms, g_ms = statistics.median(e_samples) * 1e3, statistics.median(g_samples) * 1e3
    c = graph.compiled
    # The graph's temporaries live in its executable's arena (allocated once, outside the
    # caching allocator): its peak is the allocator's (inputs, parameters, outputs) + the arena.
    e_peak, g_peak = peak_mb(eager_step, x, y), peak_mb(graph, x, y) + c.arena_bytes / 2**20
    kc = sorted(set(st["kernel_call_ops"]))
    gflop = gemm_gflop(c.thunks)
    e_gemm, g_gemm = gemm_ms_per_step(eager_step, x, y), gemm_ms_per_step(graph, x, y)
    has_conv = any(op.startswith("conv") for op in kc) or "convolution" in c.thunks
    return [
        name,
        f"{e_ms:.1f}",
        f"{g_ms:.1f}",
        f"{e_ms / g_ms:.2f}x",
        f"{compile_s:.2f}",
        f"{e_peak:.1f}",
        f"{g_peak:.1f}",
        f"{c.arena_bytes / 2**20:.1f}",
        f"{c.lower_bound_bytes / 2**20:.1f}",
        check,
        f"{gflop:.2f}",
        f"{e_gemm:.1f}",
        f"{g_gemm:.1f}",
        f"{e_ms / e_gemm:.2f}x" if e_gemm > 0 and not has_conv else "-",
        ",".join(kc) if kc else "-",
    ]


def gemm_ms_per_step(step, x, y, steps=3):
    """Milliseconds per step spent inside the f32 GEMM (device/cpu/gemm.cc times every call;
    eager matmuls and graph GEMM thunks run the same code)."""
    flow.sync()
    flow._C._cpu_reset_gemm_stats()
    for _ in range(steps):
        step(x, y)
    flow.sync()
    return flow._C._cpu_gemm_stats()["seconds"] / steps * 1e3


HEADERS = [
    "model",
    "eager ms",
    "graph ms",
    "speedup",
    "compile s",
    "eager peak MB",
    "graph peak MB",
    "arena MB",
    "lower bound MB",
    "loss eager/graph (step 1)",
    "GEMM GFLOP",
    "eager GEMM ms",
    "graph GEMM ms",
    "ceiling",
    "kernel calls",
]
GEMM_RATE = None  # GFLOP/s, measured in main()


def print_table(rows):
    widths = [max(len(str(r[i])) for r in [HEADERS] + rows) for i in range(len(HEADERS))]
    line = (
        lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    )  # noqa: E731
    print(line(HEADERS))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(line(r))


def main():
    global GEMM_RATE
    GEMM_RATE = gemm_rate_gflops()
    print(
        f"nn.Graph vs eager, CPU; {os.cpu_count()} CPUs; {'quick' if QUICK else 'full'} run; "
        f"load average {os.getloadavg()[0]:.2f}; GEMM rate {GEMM_RATE:.0f} GFLOP/s (1024^3 f32)\n",
        flush=True,
    )
    rows = []
    for name, build, data, loss_name, train in MODELS:
        try:
            rows.append(bench_model(name, build, data, loss_name, train))
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            rows.append([name, "missing: " + msg[:100]] + ["-"] * (len(HEADERS) - 2))
        print_table(rows[-1:]) if os.environ.get("BENCH_VERBOSE") else None
    print_table(rows)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
