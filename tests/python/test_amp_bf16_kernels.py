"""The vectorised bf16 paths of the CPU kernels (kernels/cpu/bf16_simd.h) against references
computed bit by bit in numpy: f32 <-> bf16 casts (round to nearest even, NaN, inf, subnormals,
ties; sizes off the vector width; non-contiguous operands), the fused attention in bf16 against
f64 with bf16 tolerances, and linear under autocast (the weight cast once, its gradient in the
weight's layout) against f64."""
import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F


def bf16_bits_reference(x):
    """bfloat16 bits of float32 `x`: round to nearest even, every NaN the quiet NaN 0x7fc0."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(x)] = 0x7FC0
    return r


def bits_of(t):
    return t.contiguous().view(flow.int16).detach().numpy().view(np.uint16)


def special_values(n, seed=0):
    """n floats: NaNs, infinities, signed zeros, subnormals, extremes, exact rounding ties (low
    16 bits 0x8000, both parities) and near-ties, then random magnitudes 1e-40..1e38; rotated by
    `seed` so the specials land in vector bodies and scalar tails alike."""
    rng = np.random.default_rng(seed)
    specials = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-39, 3.4e38, -3.4e38],
        dtype=np.float32,
    )
    ties = rng.integers(0, 2**31, 24, dtype=np.uint32)
    ties = (ties & 0xFFFF0000) | np.array([0x8000, 0x7FFF, 0x8001] * 8, dtype=np.uint32)
    rand = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 39, n)).astype(np.float32)
    x = np.concatenate([specials, ties.view(np.float32), rand])[: max(n, 1)]
    return np.roll(x, seed * 7)[:n]


@pytest.mark.parametrize("n", [1, 15, 16, 17, 33, 1037, 70001])
def test_cast_f32_to_bf16_bits(n):
    x = special_values(n)
    got = bits_of(flow.tensor(x).to(flow.bfloat16))
    np.testing.assert_array_equal(got, bf16_bits_reference(x))


@pytest.mark.parametrize("n", [1, 7, 8, 9, 1037, 70001])
def test_cast_bf16_to_f32_exact(n):
    x = special_values(n, seed=1)
    b = flow.tensor(x).to(flow.bfloat16)
    got = b.float().detach().numpy()
    want = (bf16_bits_reference(x).astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize(
    "view",
    [
        lambda t: t.t(),  # transposed: strided rows
        lambda t: t[:, 3:40],  # unit-stride rows with a row stride
        lambda t: t[::2, 1::3],  # strided both ways
    ],
)
def test_cast_non_contiguous(view):
    x = special_values(67 * 45, seed=2).reshape(67, 45)
    src = view(flow.tensor(x))
    ref = view(flow.tensor(x)).contiguous().detach().numpy()
    np.testing.assert_array_equal(bits_of(src.to(flow.bfloat16)), bf16_bits_reference(ref))
    # and back: a non-contiguous bf16 source widened exactly
    b = view(flow.tensor(x).to(flow.bfloat16))
    want = (bf16_bits_reference(ref).astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(b.float().detach().numpy().view(np.uint32), want.view(np.uint32))


def test_cast_into_non_contiguous_destination():
    x = special_values(40 * 33, seed=3).reshape(40, 33)
    dst = flow.zeros(33, 40, dtype=flow.bfloat16).t()
    dst.copy_(flow.tensor(x))
    np.testing.assert_array_equal(bits_of(dst), bf16_bits_reference(x))


@pytest.mark.parametrize("L,S,E", [(64, 64, 64), (37, 53, 24), (130, 70, 33)])
def test_fused_attention_bf16_vs_f64(L, S, E):
    rng = np.random.default_rng(L + S + E)
    q, k, v = (rng.standard_normal((2, 3, n, E)) for n in (L, S, S))
    do = rng.standard_normal((2, 3, L, E))

    def run(dtype, arrays):
        ts = [flow.tensor(a).to(dtype).requires_grad_() for a in arrays]
        with flow.nn.attention.sdpa_kernel(flow.nn.attention.SDPBackend.FLASH_ATTENTION):
            y = F.scaled_dot_product_attention(*ts)
        y.backward(flow.tensor(do).to(dtype))
        return [y.double().detach().numpy()] + [t.grad.double().detach().numpy() for t in ts]

    # bf16 operands: the f64 reference sees the same rounded inputs.
    rounded = [flow.tensor(a).to(flow.bfloat16).double().detach().numpy() for a in (q, k, v)]
    got = run(flow.bfloat16, (q, k, v))
    want = run(flow.float64, rounded)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=3e-2, atol=3e-2)


def test_fused_attention_bf16_non_contiguous_inputs():
    # q, k, v as the slices of one packed projection (MultiheadAttention's layout).
    rng = np.random.default_rng(5)
    qkv = rng.standard_normal((2, 19, 3 * 40))
    t = flow.tensor(qkv).to(flow.bfloat16)
    q, k, v = (
        t[..., i * 40 : (i + 1) * 40].reshape(2, 19, 4, 10).transpose(1, 2) for i in range(3)
    )
    y = F.scaled_dot_product_attention(q, k, v)
    t64 = flow.tensor(t.double().detach().numpy())
    q, k, v = (
        t64[..., i * 40 : (i + 1) * 40].reshape(2, 19, 4, 10).transpose(1, 2) for i in range(3)
    )
    want = F.scaled_dot_product_attention(q, k, v, is_causal=False)
    np.testing.assert_allclose(
        y.double().detach().numpy(), want.detach().numpy(), rtol=3e-2, atol=3e-2
    )


@pytest.mark.parametrize("shape", [(5, 37), (3, 4, 37)])
def test_linear_autocast_weight_grad_layout_vs_f64(shape):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((23, 37)).astype(np.float32)
    b = rng.standard_normal(23).astype(np.float32)
    g = rng.standard_normal(shape[:-1] + (23,)).astype(np.float32)
    fw = flow.tensor(w).requires_grad_()
    fb = flow.tensor(b).requires_grad_()
    with flow.autocast("cpu", dtype=flow.bfloat16):
        y = F.linear(flow.tensor(x), fw, fb)
        assert y.dtype == flow.bfloat16
    y.backward(flow.tensor(g).to(flow.bfloat16))
    assert fw.grad.dtype == flow.float32 and fw.grad.is_contiguous()
    assert fw.grad.shape == (23, 37)
    r = lambda a: flow.tensor(a).to(flow.bfloat16).double().detach().numpy()  # noqa: E731
    xr, wr, br, gr = r(x), r(w), r(b), r(g)
    np.testing.assert_allclose(y.double().detach().numpy(), xr @ wr.T + br, rtol=2e-2, atol=5e-2)
    g2, x2 = gr.reshape(-1, 23), xr.reshape(-1, 37)
    np.testing.assert_allclose(fw.grad.double().detach().numpy(), g2.T @ x2, rtol=2e-2, atol=5e-2)
    np.testing.assert_allclose(fb.grad.double().detach().numpy(), g2.sum(0), rtol=2e-2, atol=5e-2)


def test_linear_autocast_casts_weight_once_per_region():
    w = flow.randn(16, 8).requires_grad_()
    x = flow.randn(4, 8)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        with flow.profiler.profile(record_shapes=True) as prof:
            for _ in range(3):
                F.linear(x, w)
            flow.sync()
    casts = [e for e in prof.key_averages(group_by_input_shape=True) if e.key == "cast"]
    by_shape = {str(e.input_shapes): e.count for e in casts}
    assert by_shape.get("[[16, 8]]") == 1, by_shape  # the weight: cached for the region
    assert "[[8, 16]]" not in by_shape, by_shape  # never its transposed view


def test_sdpa_bf16_cpu_routes_to_math_and_matches_f64():
    """Both backends enabled: bf16 attention on the CPU runs the math composite (oneDNN bf16
    GEMMs; faster than the fused op's f32 tiles), forced FLASH still runs the fused op; both match
    f64 within bf16 tolerances."""
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((2, 3, n, 16)) for n in (21, 29, 29)]
    ts = [flow.tensor(a).to(flow.bfloat16) for a in arrays]
    want = (
        F.scaled_dot_product_attention(
            *(flow.tensor(t.double().detach().numpy()) for t in ts), is_causal=True
        )
        .detach()
        .numpy()
    )
    for backend, fused in ((None, False), (flow.nn.attention.SDPBackend.FLASH_ATTENTION, True)):
        with flow.profiler.profile() as prof:
            if backend is None:
                y = F.scaled_dot_product_attention(*ts, is_causal=True)
            else:
                with flow.nn.attention.sdpa_kernel(backend):
                    y = F.scaled_dot_product_attention(*ts, is_causal=True)
            flow.sync()
        names = {e.key for e in prof.key_averages()}
        assert ("_scaled_dot_product_flash_attention" in names) == fused, names
        np.testing.assert_allclose(y.double().detach().numpy(), want, rtol=3e-2, atol=3e-2)
