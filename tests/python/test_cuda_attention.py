"""The fused attention's CUDA kernels (kernels/cuda/attention.*) against the float64 CPU
reference (the fused CPU kernel, itself checked against PyTorch in test_sdpa_fused.py): forward
and the gradients of q, k, v for f32/f16/bf16 (f64 too), causal, bool/float masks with
broadcasting, grouped query heads, odd sizes, dropout (the CPU's mask for the same seed), and the
fully masked rows. Skips without a device; tools/gpu/run.sh runs it on the GPU machine."""
import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn.attention import SDPBackend, sdpa_kernel

pytestmark = pytest.mark.skipif(
    not flow.cuda.is_available(), reason="no CUDA device (the GPU proof, tools/gpu/run.sh, runs it)"
)
RNG = np.random.default_rng(3)
TOL = {flow.float64: 1e-10, flow.float32: 2e-4, flow.float16: 1e-2, flow.bfloat16: 5e-2}


def _run(arrays, device, dtype, mask=None, **kw):
    ts = [flow.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    m = None if mask is None else flow.tensor(mask, device=device)
    if m is not None and m.dtype != flow.bool:
        m = m.to(dtype)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(*ts, attn_mask=m, **kw)
    up = np.cos(np.arange(int(np.prod(tuple(out.shape))))).reshape(tuple(out.shape))
    (out * flow.tensor(up, dtype=dtype, device=device)).sum().backward()
    return [t.to(flow.float64).cpu().numpy() for t in [out] + [t.grad for t in ts]]


CASES = [
    # (batch dims, L, S, E, Ev, causal, mask shape or None, mask kind, gqa)
    ((2, 3), 5, 7, 4, 4, False, None, None, 1),
    ((1, 2), 67, 130, 64, 64, True, None, None, 1),
    ((2, 1), 33, 65, 80, 80, False, (33, 65), "bool", 1),
    ((1, 4), 17, 200, 128, 32, False, (1, 4, 1, 200), "float", 1),
    ((1, 8), 40, 40, 64, 64, True, None, None, 4),
    ((1, 1), 1, 1, 1, 1, False, None, None, 1),
    ((1, 1), 20, 30, 256, 256, False, None, None, 1),
]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", [flow.float32, flow.float16, flow.bfloat16, flow.float64])
def test_cuda_fused_attention_matches_the_cpu_reference(case, dtype):
    b, L, S, E, Ev, causal, mshape, mkind, g = case
    if dtype == flow.float64 and max(E, Ev) > 128:
        pytest.skip("f64 head dims above 128 go to the math path on cuda")
    H = b[-1]
    kb = b[:-1] + (H // g,)
    arrays = [
        RNG.uniform(-1, 1, b + (L, E)),
        RNG.uniform(-1, 1, kb + (S, E)),
        RNG.uniform(-1, 1, kb + (S, Ev)),
    ]
    # The reference sees the inputs rounded to dtype, in float64.
    arrays = [flow.tensor(a, dtype=dtype).to(flow.float64).numpy() for a in arrays]
    mask = None
    if mkind == "bool":
        mask = RNG.random(mshape) > 0.3
        mask[..., 0] = True
    elif mkind == "float":
        mask = RNG.uniform(-1, 1, mshape)
    kw = dict(is_causal=causal, enable_gqa=g > 1)
    ref = _run(arrays, "cpu", flow.float64, mask, **kw)
    got = _run(arrays, "cuda", dtype, mask, **kw)
    for r, x in zip(ref, got):
        scale = max(1.0, np.abs(r).max())
        np.testing.assert_allclose(x, r, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def test_cuda_dropout_draws_the_composites_mask_and_fully_masked_rows_are_zero():
    """With one seed the fused kernel keeps the elements the composite's dropout keeps (both
    draw RngUniform(seed, (row * L + i) * S + j) >= p), forward and backward."""
    arrays = [
        RNG.uniform(-1, 1, (1, 2, 40, 16)),
        RNG.uniform(-1, 1, (1, 2, 50, 16)),
        RNG.uniform(-1, 1, (1, 2, 50, 8)),
    ]
    res = []
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.MATH):
        flow.manual_seed(9)
        ts = [flow.tensor(a, device="cuda", requires_grad=True) for a in arrays]
        with sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(*ts, dropout_p=0.3, scale=0.5)
        out.square().sum().backward()
        res.append([t.cpu().detach().numpy() for t in [out] + [t.grad for t in ts]])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
    mask = np.ones((40, 50), bool)
    mask[3] = False
    out = _run(arrays, "cuda", flow.float32, mask)
    assert np.all(out[0][:, :, 3] == 0) and all(np.isfinite(g).all() for g in out[1:])


@pytest.mark.parametrize("L,S", [(0, 5), (4, 0), (0, 0)])
def test_cuda_empty_query_or_key_lengths_are_refused_as_on_the_cpu(L, S):
    """Empty operands never reach the fused kernels (the router names MATH, as on the CPU; the
    kernels also guard empty grids and zero sizes themselves)."""
    arrays = [
        RNG.uniform(-1, 1, (1, 2, L, 8)),
        RNG.uniform(-1, 1, (1, 2, S, 8)),
        RNG.uniform(-1, 1, (1, 2, S, 4)),
    ]
    for device in ("cpu", "cuda"):
        with pytest.raises(ValueError, match="does not take empty operands"):
            _run(arrays, device, flow.float32)


def test_cuda_more_batch_heads_than_the_grid_holds_is_right_or_a_clear_error():
    """B * H above 65535 (the grid's y limit): the result of the CPU, or an error naming the limit,
    never a bare launch failure."""
    arrays = [RNG.uniform(-1, 1, (65536, 1, 2, 4)) for _ in range(3)]
    ref = _run(arrays, "cpu", flow.float64)
    try:
        got = _run(arrays, "cuda", flow.float32)
    except RuntimeError as e:
        assert "65535" in str(e) and "batch * heads" in str(e), str(e)
        return
    for r, x in zip(ref, got):
        np.testing.assert_allclose(x, r, rtol=1e-4, atol=1e-5)
