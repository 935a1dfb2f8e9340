"""Mixed precision: training-step time in f32 vs bf16 autocast, ours and PyTorch's CPU autocast
measured interleaved in the same run, plus the CPU's ISA as oneDNN sees it.

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_amp.py [--quick] [--ops] [--scaler]

Models: the MLP 784-1024-1024-10 (batch 128) and a TransformerEncoderLayer(256, 4, 1024,
batch_first, dropout 0) on [32, 64, 256] with a mean-pooled linear head; SGD + momentum, cross
entropy. Target (issue 19): bf16 >= 2x faster than f32 where AMX (or AVX-512-BF16) is present, and
ahead of PyTorch's CPU autocast. Without those instructions oneDNN emulates bf16 on AVX-512 and
bf16 cannot beat f32; the table says which case this machine is.

The step table's last column counts the dtype casts (cast kernels) one bf16 autocast step runs:
ops that take bf16 natively on the CPU (framework/autocast.cc kCpuBf16Ops) need none.

--scaler times flow.amp.GradScaler's unscale_ + update on a 100-parameter model (50 Linear(64, 64)
layers, f32 grads already there): the fused _amp_foreach_non_finite_check_and_unscale_ and
_amp_update_scale_ kernels (opdefs/amp.def). Only that table is printed.

--ops adds a per-op breakdown of the bf16 autocast steps: self time per step of each op (ours from
flow.profiler's kernel times, torch's from torch.profiler's self CPU times; profiler overhead
included on both sides, so compare rows, not totals with the step table).
"""
import os
import sys

from _common import QUICK, Table, import_torch, interleaved, per_call, ratio

import numpy as np

import oneflow_like as flow

torch = import_torch()


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def isa_line():
    flags = cpu_flags()
    have = [
        f for f in ("avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile") if f in flags
    ]
    native = "avx512_bf16" in flags or "amx_bf16" in flags
    return have, native


def make(lib, kind):
    nn = lib.nn
    lib.manual_seed(0)
    if kind == "mlp":
        model = nn.Sequential(
            nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
        )
        x = np.random.default_rng(0).standard_normal((128, 784)).astype(np.float32)
        y = np.random.default_rng(1).integers(0, 10, 128)
        fwd = model
    else:
        enc = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
        head = nn.Linear(256, 10)
        model = nn.ModuleList([enc, head])
        x = np.random.default_rng(0).standard_normal((32, 64, 256)).astype(np.float32)
        y = np.random.default_rng(1).integers(0, 10, 32)

        def fwd(t):
            return head(enc(t).mean(1))

    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = lib.tensor(x), lib.tensor(y)
    F = lib.nn.functional

    def step(amp):
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=amp):
            loss = F.cross_entropy(fwd(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    return step


# The steps' linear layers as (name, M, K, N): y[M, N] = x[M, K] @ W[N, K]^T.
GEMMS = [
    ("mlp fc1", 128, 784, 1024),
    ("mlp fc2", 128, 1024, 1024),
    ("tf in_proj", 2048, 256, 768),
    ("tf out_proj", 2048, 256, 256),
    ("tf linear1", 2048, 256, 1024),
    ("tf linear2", 2048, 1024, 256),
]


def gemm_table(calls, repeats):
    """The ceiling of bf16 over f32 on this CPU: one linear's forward GEMM, x @ W^T, in f32 (our
    Sgemm: OpenBLAS or oneDNN, whichever the rule picks) and in bf16 (oneDNN, f32 accumulation),
    ours and PyTorch's (mkldnn) interleaved."""
    table = Table(
        "GEMM rate, GFLOP/s (x[M, K] @ W[N, K]^T; ceiling of the bf16 speed-up)",
        ["layer", "M", "K", "N", "ours f32", "ours bf16", "bf16/f32", "torch f32", "torch bf16"],
    )
    rng = np.random.default_rng(0)
    for name, m, k, n in GEMMS:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        sides = {}
        for dt in ("f32", "bf16"):
            fx, fw = flow.tensor(x), flow.tensor(w)
            if dt == "bf16":
                fx, fw = fx.to(flow.bfloat16), fw.to(flow.bfloat16)
            fwt = fw.t()
            flow.matmul(fx, fwt), flow.sync()
            sides[f"ours{dt}"] = lambda a=fx, b=fwt: per_call(
                lambda: flow.matmul(a, b), flow.sync, calls * 5
            )
            if torch is not None:
                tx, tw = torch.from_numpy(x), torch.from_numpy(w)
                if dt == "bf16":
                    tx, tw = tx.bfloat16(), tw.bfloat16()
                twt = tw.t()
                torch.matmul(tx, twt)
                sides[f"torch{dt}"] = lambda a=tx, b=twt: per_call(
                    lambda: torch.matmul(a, b), lambda: None, calls * 5
                )
        r = interleaved(sides, repeats)
        flop = 2.0 * m * k * n

        def rate(key):
            v = r.get(key)
            return f"{flop / v * 1e-9:.0f}" if isinstance(v, float) else "-"

        sp = ratio(r.get("oursf32"), r.get("oursbf16"))
        table.add(
            name,
            m,
            k,
            n,
            rate("oursf32"),
            rate("oursbf16"),
            sp,
            rate("torchf32"),
            rate("torchbf16"),
        )
    table.print()


def profiled_steps(kind, steps):
    """flow.profiler's key_averages() over `steps` bf16 autocast steps of the model (after two
    warm-up steps)."""
    ours = make(flow, kind)
    for _ in range(2):
        ours(True)
    flow.sync()
    with flow.profiler.profile() as prof:
        for _ in range(steps):
            ours(True)
        flow.sync()
    return prof.key_averages()


def op_table(kind, steps=5, rows=14):
    """Per-op self time (ms per step) of the bf16 autocast step, ours and torch's, side by side."""
    mine = {e.key: e.self_cpu_time_total / 1e3 / steps for e in profiled_steps(kind, steps)}
    theirs = {}
    if torch is not None:
        tstep = make(torch, kind)
        for _ in range(2):
            tstep(True)
        with torch.profiler.profile() as tp:
            for _ in range(steps):
                tstep(True)
        for e in tp.key_averages():
            if e.key.startswith("aten::"):
                theirs[e.key[6:]] = e.self_cpu_time_total / 1e3 / steps
    table = Table(
        f"{kind} bf16 step by op, ms per step (self time; profilers' overhead included)",
        ["ours op", "ours ms", "torch op", "torch ms"],
        note=f"ours total {sum(mine.values()):.1f} ms, torch total {sum(theirs.values()):.1f} ms",
    )
    a = sorted(mine.items(), key=lambda kv: -kv[1])[:rows]
    b = sorted(theirs.items(), key=lambda kv: -kv[1])[:rows]
    for i in range(max(len(a), len(b))):
        l = a[i] if i < len(a) else ("", None)
        r = b[i] if i < len(b) else ("", None)
        table.add(
            l[0],
            "" if l[1] is None else f"{l[1]:.2f}",
            r[0],
            "" if r[1] is None else f"{r[1]:.2f}",
        )
    table.print()


def casts_per_step(kind, steps=3):
    """Cast kernels one bf16 autocast training step runs (flow.profiler's op counts)."""
    n = sum(e.count for e in profiled_steps(kind, steps) if e.key == "cast")
    return f"{n / steps:.0f}"


def scaler_table(calls, repeats):
    """GradScaler.unscale_ + update per step on 100 f32 parameters (50 Linear(64, 64))."""
    nn = flow.nn
    flow.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(64, 64) for _ in range(50)])
    params = list(model.parameters())
    for p in params:
        p.grad = flow.randn(*p.shape)
    opt = flow.optim.SGD(params, lr=0.01)
    scaler = flow.amp.GradScaler("cpu", init_scale=1.0, growth_interval=10**9)
    scaler.scale(flow.ones(()))

    def step():
        scaler.unscale_(opt)
        scaler.update()

    step(), flow.sync()
    r = interleaved({"ours": lambda: per_call(step, flow.sync, calls * 20)}, repeats)
    table = Table(
        "GradScaler.unscale_ + update, us per step (100 f32 params, 50 x Linear(64, 64))",
        ["params", "elements", "ours us"],
    )
    v = r.get("ours")
    n = sum(p.numel() for p in params)
    table.add(len(params), n, f"{v * 1e6:.0f}" if isinstance(v, float) else f"missing: {v}")
    table.print()


def main():
    have, native = isa_line()
    calls, repeats = (2, 3) if QUICK else (5, 7)
    if "--scaler" in sys.argv:
        scaler_table(calls, repeats)
        return
    table = Table(
        "Training step, ms (median; bf16 = autocast(cpu, bfloat16))",
        [
            "model",
            "ours f32",
            "ours bf16",
            "bf16 speed-up",
            "torch f32",
            "torch bf16",
            "ours/torch bf16",
            "ours casts/bf16 step",
        ],
        note=f"CPU flags: {' '.join(have)}; native bf16 (AVX512_BF16/AMX): {'yes' if native else 'NO'}"
        f"; threads: {os.cpu_count()}",
    )
    for kind in ("mlp", "transformer"):
        ours = make(flow, kind)
        theirs = make(torch, kind) if torch is not None else None
        sides = {}
        for amp in (False, True):
            ours(amp), flow.sync()
            sides[f"ours{amp}"] = lambda amp=amp: per_call(lambda: ours(amp), flow.sync, calls)
            if theirs is not None:
                theirs(amp)
                sides[f"torch{amp}"] = lambda amp=amp: per_call(
                    lambda: theirs(amp), lambda: None, calls
                )
        r = interleaved(sides, repeats)

        def ms(k):
            v = r.get(k)
            return (
                f"{v * 1e3:.1f}"
                if isinstance(v, float)
                else ("-" if v is None else f"missing: {v}")
            )

        speed = ratio(r.get("oursFalse"), r.get("oursTrue")).replace("x", "x")
        table.add(
            kind,
            ms("oursFalse"),
            ms("oursTrue"),
            speed,
            ms("torchFalse"),
            ms("torchTrue"),
            ratio(r.get("oursTrue"), r.get("torchTrue")),
            casts_per_step(kind),
        )
    table.print()
    gemm_table(calls, repeats)
    if "--ops" in sys.argv:
        for kind in ("transformer", "mlp"):
            op_table(kind)


if __name__ == "__main__":
    main()
