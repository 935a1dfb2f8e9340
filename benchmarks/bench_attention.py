"""Scaled-dot-product attention on the CPU: the fused op (_scaled_dot_product_flash_attention,
FlashAttention-2's tiles; the default) vs our math composite (sdpa_kernel(MATH): matmul, softmax,
matmul, the [B, H, L, S] probabilities kept for backward) vs PyTorch's matmul + softmax
composition (the installed torch, 1.13 on Debian, has no F.scaled_dot_product_attention), forward
and forward + backward, f32 and bf16; then a TransformerEncoderLayer training step (d_model 512,
8 heads, seq 128, batch 32, dropout 0) with the math path (before) and the fused op (after).

    PYTHONPATH=python /usr/bin/python3 benchmarks/bench_attention.py [--quick]

All sides measured interleaved; medians in ms.
"""
import os

from _common import QUICK, Table, import_torch, interleaved, per_call, ratio

import numpy as np

import oneflow_like as flow
from oneflow_like.nn.attention import SDPBackend, sdpa_kernel

torch = import_torch(num_threads=os.cpu_count() or 2)


def torch_attention(q, k, v):
    s = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    return torch.matmul(torch.softmax(s, -1), v)


def attention_sides(B, H, L, E, dtype, calls):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((B, H, L, E)).astype(np.float32) for _ in range(3)]
    fdt = {"f32": flow.float32, "bf16": flow.bfloat16}[dtype]
    fq, fk, fv = (flow.tensor(a, dtype=fdt, requires_grad=True) for a in arrays)
    sides = {}
    for name, backend in (("fused", SDPBackend.FLASH_ATTENTION), ("math", SDPBackend.MATH)):
        for bwd in (False, True):

            def run(backend=backend, bwd=bwd):
                with sdpa_kernel(backend):
                    out = flow.nn.functional.scaled_dot_product_attention(fq, fk, fv)
                if bwd:
                    out.sum().backward()
                    for t in (fq, fk, fv):
                        t.grad = None

            run(), flow.sync()
            sides[(name, bwd)] = lambda run=run: per_call(run, flow.sync, calls)
    if torch is not None:
        tdt = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
        tq, tk, tv = (torch.tensor(a, dtype=tdt, requires_grad=True) for a in arrays)
        for bwd in (False, True):

            def trun(bwd=bwd):
                out = torch_attention(tq, tk, tv)
                if bwd:
                    out.sum().backward()
                    for t in (tq, tk, tv):
                        t.grad = None

            trun()
            sides[("torch", bwd)] = lambda trun=trun: per_call(trun, lambda: None, calls)
    return sides


def encoder_step(lib, backend=None):
    nn = lib.nn
    lib.manual_seed(0)
    layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True)
    x = lib.tensor(np.random.default_rng(0).standard_normal((32, 128, 512)).astype(np.float32))
    opt = lib.optim.SGD(layer.parameters(), lr=0.01)

    def step():
        if backend is not None:
            with sdpa_kernel(backend):
                loss = layer(x).square().mean()
        else:
            loss = layer(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def ms(v):
    return f"{v * 1e3:.1f}" if isinstance(v, float) else ("-" if v is None else f"missing: {v}")


def main():
    calls, repeats = (1, 3) if QUICK else (3, 5)
    table = Table(
        "Attention, ms (median); fused = our fused op, math = our composite, torch = torch "
        f"{torch.__version__ if torch else '-'} matmul+softmax",
        ["case", "dtype", "pass", "fused", "math", "torch", "fused/math", "fused/torch"],
        note=f"threads: ours {flow.get_num_threads()}, torch "
        f"{torch.get_num_threads() if torch else '-'}; CPU cores {os.cpu_count()}",
    )
    for B, H, L, E in ((8, 8, 512, 64), (32, 8, 128, 64)):
        for dtype in ("f32", "bf16"):
            r = interleaved(attention_sides(B, H, L, E, dtype, calls), repeats)
            for bwd in (False, True):
                f, m, t = r.get(("fused", bwd)), r.get(("math", bwd)), r.get(("torch", bwd))
                table.add(
                    f"B={B} H={H} L=S={L} E={E}",
                    dtype,
                    "fwd+bwd" if bwd else "fwd",
                    ms(f),
                    ms(m),
                    ms(t),
                    ratio(f, m),
                    ratio(f, t),
                )
    table.print()
    steps = Table(
        "TransformerEncoderLayer(512, 8, 2048) train step on [32, 128, 512], ms (median)",
        ["before (math)", "after (fused)", "torch", "after/before", "after/torch"],
    )
    sides = {
        "math": encoder_step(flow, SDPBackend.MATH),
        "fused": encoder_step(flow, SDPBackend.FLASH_ATTENTION),
    }
    if torch is not None:
        sides["torch"] = encoder_step(torch)
    for f in sides.values():
        f()
    flow.sync()
    syncs = {"math": flow.sync, "fused": flow.sync, "torch": lambda: None}
    r = interleaved(
        {k: (lambda f=f, k=k: per_call(f, syncs[k], calls)) for k, f in sides.items()}, repeats
    )
    steps.add(
        ms(r.get("math")),
        ms(r.get("fused")),
        ms(r.get("torch")),
        ratio(r.get("fused"), r.get("math")),
        ratio(r.get("fused"), r.get("torch")),
    )
    steps.print()


if __name__ == "__main__":
    main()
