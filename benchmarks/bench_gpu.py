"""GPU figures of issue 17, each beside PyTorch measured in the same run on the same GPU.

    PYTHONPATH=python python3 benchmarks/bench_gpu.py [--quick]

Rows: per-op time of a tiny op from Python (eager dispatch + launch + completion, averaged over a
loop ended by one synchronize), large elementwise add in GB/s (bytes read + written) against the
device copy bandwidth measured by torch, GEMM TFLOP/s in f32 and TF32, and one training step
(forward, backward, SGD) of an MLP, a CNN and a TransformerEncoderLayer, eager, eager under
autocast(float16) with a GradScaler, and as nn.Graph
(against torch eager and torch.compile(mode="reduce-overhead"); --no-torch-compile skips the
latter, whose compilation takes a while). Needs a CUDA
device and torch with CUDA; prints why and exits 0 when either is missing (CI has no GPU).
"""
import argparse
import statistics
import sys
import time

import numpy as np

import oneflow_like as flow


def timed(fn, sync, iters, repeats=5, warmup=2):
    """Median seconds per call of fn over `repeats` timings of `iters` calls each."""
    for _ in range(warmup):
        fn()
    sync()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        runs.append((time.perf_counter() - t0) / iters)
    return statistics.median(runs)


def models(lib):
    nn = lib.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 32, 3, padding=1)
            self.c2 = nn.Conv2d(32, 64, 3, padding=1)
            self.fc = nn.Linear(64 * 8 * 8, 10)

        def forward(self, x):
            x = lib.nn.functional.max_pool2d(lib.relu(self.c1(x)), 2)
            x = lib.nn.functional.max_pool2d(lib.relu(self.c2(x)), 2)
            return self.fc(x.flatten(1))

    return {
        "MLP 784-1024-1024-10, batch 256": (
            lambda: nn.Sequential(
                nn.Linear(784, 1024),
                nn.ReLU(),
                nn.Linear(1024, 1024),
                nn.ReLU(),
                nn.Linear(1024, 10),
            ),
            (256, 784),
            "ce",
        ),
        "CNN 2 conv + fc, 64x3x32x32": (CNN, (64, 3, 32, 32), "ce"),
        "TransformerEncoderLayer d256 h8, 32x64": (
            lambda: nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True),
            (32, 64, 256),
            "mse",
        ),
    }


def _setup(lib, spec, device):
    make, shape, loss_kind = spec
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    model = make().to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32)).to(device)
    if loss_kind == "ce":
        y = lib.tensor(rng.integers(0, 10, size=shape[0]).astype(np.int64)).to(device)
        loss_fn = lib.nn.CrossEntropyLoss()
    else:
        y = lib.tensor(rng.standard_normal(shape).astype(np.float32)).to(device)
        loss_fn = lib.nn.MSELoss()
    return model, opt, x, y, loss_fn


def train_step_time(lib, name, spec, device, iters, amp=None):
    """Seconds per eager training step; amp: a low-precision dtype name ("float16") runs the
    forward and loss under lib.autocast("cuda", dtype) with a GradScaler, as AMP scripts do."""
    model, opt, x, y, loss_fn = _setup(lib, spec, device)
    if amp is None:

        def step():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()

        return timed(step, lib.cuda.synchronize, iters)
    dtype = getattr(lib, amp)
    scaler = lib.amp.GradScaler("cuda")

    def step():
        opt.zero_grad()
        with lib.autocast("cuda", dtype=dtype):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return timed(step, lib.cuda.synchronize, iters)


def graph_step_time(spec, device, iters):
    """Seconds per nn.Graph training step (forward, backward, SGD in one compiled graph), and
    the compiled graph."""
    model, opt, x, y, loss_fn = _setup(flow, spec, device)

    class TrainStep(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = loss_fn(self.model(x), y)
            loss.backward()
            return loss

    g = TrainStep()
    t = timed(lambda: g(x, y), flow.cuda.synchronize, iters, warmup=3)
    return t, g._last_entry.compiled


def torch_compiled_step_time(torch, spec, device, iters):
    """Seconds per step with the model under torch.compile(mode="reduce-overhead") (CUDA graphs
    for its forward and backward), the loss, backward call and SGD step as a script writes them,
    after enough calls to record the graphs."""
    model, opt, x, y, loss_fn = _setup(torch, spec, device)
    compiled = torch.compile(model, mode="reduce-overhead")

    def step():
        # a new CUDA-graph step each call: the previous step's outputs may be overwritten
        torch.compiler.cudagraph_mark_step_begin()
        # set_to_none: last step's gradients are outputs of the backward's CUDA graph, which
        # this step's replay overwrites; accumulating into them is refused
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(compiled(x), y)
        loss.backward()
        opt.step()

    return timed(step, torch.cuda.synchronize, iters, warmup=6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    ap.add_argument(
        "--no-torch-compile",
        action="store_true",
        help="skip the torch.compile anchor (slow to compile)",
    )
    args = ap.parse_args()
    if not flow.cuda.is_available():
        print("bench_gpu: SKIPPED (no CUDA device)")
        return 0
    try:
        import torch
    except ImportError:
        print("bench_gpu: SKIPPED (torch is not installed; it is the anchor)")
        return 0
    if not torch.cuda.is_available():
        print("bench_gpu: SKIPPED (torch has no CUDA)")
        return 0
    q = 0.25 if args.quick else 1.0
    rows = []

    def row(metric, ours, theirs, unit, target, better="higher"):
        ratio = ours / theirs if theirs else float("nan")
        rows.append((metric, ours, theirs, unit, ratio, target, better))
        # as it is measured too, so a run cut short by a time limit keeps what it measured
        print(f"  {metric}: {ours:.3f} vs {theirs:.3f} {unit}", flush=True)

    fsync, tsync = flow.cuda.synchronize, torch.cuda.synchronize
    dev = "cuda"

    # Tiny op: per-op time from Python.
    a = flow.ones(16).to(dev)
    ta = torch.ones(16, device=dev)
    n = int(2000 * q) or 1
    ours = timed(lambda: flow.add(a, a), fsync, n) * 1e6
    theirs = timed(lambda: torch.add(ta, ta), tsync, n) * 1e6
    row("tiny add (16 floats), per op", ours, theirs, "us", "<= torch", "lower")

    # Large elementwise against the copy bandwidth.
    N = 1 << 26
    x = flow.ones(N).to(dev)
    y = flow.ones(N).to(dev)
    tx, ty = torch.ones(N, device=dev), torch.ones(N, device=dev)
    tz = torch.empty(N, device=dev)
    it = max(int(20 * q), 3)
    t_ours = timed(lambda: flow.add(x, y), fsync, it)
    t_add = timed(lambda: torch.add(tx, ty, out=tz), tsync, it)
    t_copy = timed(lambda: tz.copy_(tx), tsync, it)
    copy_gbs = 2 * N * 4 / t_copy / 1e9
    row(
        "add 2^26 f32, GB/s (3 x 256 MiB moved)",
        3 * N * 4 / t_ours / 1e9,
        3 * N * 4 / t_add / 1e9,
        "GB/s",
        f">= 85% of copy {copy_gbs:.0f}",
    )
    rows[-1] = rows[-1][:4] + (3 * N * 4 / t_ours / 1e9 / copy_gbs,) + rows[-1][5:]
    del x, y, tx, ty, tz

    # GEMM f32 and TF32.
    M = 4096
    rng = np.random.default_rng(0)
    an = rng.standard_normal((M, M)).astype(np.float32)
    fa, fb = flow.tensor(an).to(dev), flow.tensor(an.T.copy()).to(dev)
    ta2, tb2 = torch.from_numpy(an).to(dev), torch.from_numpy(an.T.copy()).to(dev)
    it = max(int(10 * q), 3)
    for tf32 in (False, True):
        flow.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        t_o = timed(lambda: flow.matmul(fa, fb), fsync, it)
        t_t = timed(lambda: torch.matmul(ta2, tb2), tsync, it)
        fl = 2 * M**3
        row(
            f"GEMM {M}^3 {'TF32' if tf32 else 'f32'}, TFLOP/s",
            fl / t_o / 1e12,
            fl / t_t / 1e12,
            "TFLOP/s",
            ">= 0.95x torch",
        )
    flow.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False

    # Training steps, eager.
    ours_m, theirs_m = models(flow), models(torch)
    it = max(int(20 * q), 3)
    for name in ours_m:
        t_o = train_step_time(flow, name, ours_m[name], dev, it) * 1e3
        t_t = train_step_time(torch, name, theirs_m[name], dev, it) * 1e3
        row(f"train step {name}, eager", t_o, t_t, "ms", "<= torch eager", "lower")

    # Training steps under autocast(float16) + GradScaler, eager.
    for name in ours_m:
        t_o = train_step_time(flow, name, ours_m[name], dev, it, amp="float16") * 1e3
        t_t = train_step_time(torch, name, theirs_m[name], dev, it, amp="float16") * 1e3
        row(f"train step {name}, autocast f16, eager", t_o, t_t, "ms", "<= torch eager", "lower")

    # Training steps, compiled: nn.Graph on cuda against torch eager and torch.compile.
    notes = []
    for name in ours_m:
        t_t = train_step_time(torch, name, theirs_m[name], dev, it) * 1e3
        try:
            t_g, compiled = graph_step_time(ours_m[name], dev, it)
        except Exception as e:  # report and go on: the other rows still count
            notes.append(f"nn.Graph {name}: {type(e).__name__}: {str(e)[:300]}")
            continue
        t_g *= 1e3
        if compiled.device_fallback:
            notes.append(f"nn.Graph {name}: every op a kernel call ({compiled.device_fallback})")
        row(f"train step {name}, nn.Graph vs torch eager", t_g, t_t, "ms", "<= 0.5x", "lower")
        if args.no_torch_compile:
            continue
        try:
            t_c = torch_compiled_step_time(torch, theirs_m[name], dev, it) * 1e3
            row(f"train step {name}, nn.Graph vs torch.compile", t_g, t_c, "ms", "< 1", "lower")
        except Exception as e:
            notes.append(f"torch.compile {name}: {type(e).__name__}: {str(e)[:300]}")

    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    w = max(len(r[0]) for r in rows)
    print(f"{'metric':<{w}}  {'oneflow_like':>12}  {'torch':>10}  {'unit':<7} {'ratio':>6}  target")
    for metric, ours, theirs, unit, ratio, target, _ in rows:
        print(f"{metric:<{w}}  {ours:>12.3f}  {theirs:>10.3f}  {unit:<7} {ratio:>6.2f}  {target}")
    for n in notes:
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
