"""The native bfloat16 CPU kernels (kernels/cpu/bf16_loops.h, listed in framework/autocast.cc's
kCpuBf16Ops): elementwise (binary, scalar, unary and their gradients), softmax / log_softmax
forward and backward, and sum, run on bf16 tensors without an f32 round trip. Checked against
references: IEEE ops (add, sub, mul, div, relu) bit for bit against numpy's f32 result rounded to
bf16 (what the f32 path gave), the rest against float64 with bf16 tolerances; odd sizes (vector
tails), non-contiguous and broadcast operands, in-place, zero-size. The AVX2 fallback of the
conversions (CPUs without AVX-512) runs the same checks in a subprocess (OFL_BF16_AVX512=0)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F

SIZES = [0, 1, 15, 17, 33, 1037, 70001]


def bf16_round(x):
    """float32 values rounded to bf16 (nearest even) and widened back to float32."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def rand_bf16(shape, seed, scale=3.0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale
    return bf16_round(np.asarray(x, dtype=np.float32).reshape(-1)).reshape(shape)


def as_np(t):
    return t.float().detach().numpy()


def cast_count(fn):
    """Number of cast ops `fn` issues (the f32 round trip issues one per operand)."""
    with flow.profiler.profile() as prof:
        fn()
        flow.sync()
    return sum(e.count for e in prof.key_averages() if e.key == "cast")


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "add_alpha": (lambda a, b: flow.add(a, b, alpha=-2.5), lambda a, b: a + np.float32(-2.5) * b),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_bits_match_f32_rounded(op, n):
    fl, ref = BINARY[op]
    a, b = rand_bf16(n, 1), rand_bf16(n, 2)
    got = fl(flow.tensor(a).bfloat16(), flow.tensor(b).bfloat16())
    assert got.dtype == flow.bfloat16 and tuple(got.shape) == (n,)
    with np.errstate(all="ignore"):
        want = bf16_round(ref(a, b).astype(np.float32))
    np.testing.assert_array_equal(as_np(got), want)


@pytest.mark.parametrize(
    "sa,sb",
    [((37, 1), (1, 29)), ((5, 37, 29), (29,)), ((1,), (41, 3)), ((0, 3), (1, 3)), ((), (19,))],
)
def test_binary_broadcast(sa, sb):
    a, b = rand_bf16(sa, 3), rand_bf16(sb, 4)
    for fl, ref in BINARY.values():
        got = fl(flow.tensor(a).bfloat16(), flow.tensor(b).bfloat16())
        with np.errstate(all="ignore"):
            want = bf16_round(ref(a, b).astype(np.float32))
        np.testing.assert_array_equal(as_np(got), want)


@pytest.mark.parametrize(
    "view",
    [lambda t: t.t(), lambda t: t[:, 3:40], lambda t: t[::2, 1::3]],
)
def test_binary_and_unary_non_contiguous(view):
    a, b = rand_bf16((67, 45), 5), rand_bf16((67, 45), 6)
    ta, tb = view(flow.tensor(a).bfloat16()), view(flow.tensor(b).bfloat16())
    ra, rb = view(flow.tensor(a)).detach().numpy(), view(flow.tensor(b)).detach().numpy()
    np.testing.assert_array_equal(as_np(ta * tb), bf16_round(ra * rb))
    np.testing.assert_array_equal(as_np(F.relu(ta)), np.maximum(ra, 0))
    np.testing.assert_array_equal(as_np(ta * 0.3), bf16_round(ra * np.float32(0.3)))


def test_in_place_into_non_contiguous_target():
    a, b = rand_bf16((40, 33), 7), rand_bf16((33, 40), 8)
    t = flow.tensor(a).bfloat16().t()  # [33, 40], strided
    t.add_(flow.tensor(b).bfloat16())
    np.testing.assert_array_equal(as_np(t), bf16_round(a.T + b))
    u = flow.tensor(a).bfloat16()
    u.mul_(2.5)
    np.testing.assert_array_equal(as_np(u), bf16_round(a * np.float32(2.5)))


SCALAR = {
    "add_scalar": (lambda t: t + 1.25, lambda x: x + 1.25),
    "mul_scalar": (lambda t: t * -0.7, lambda x: x * -0.7),
    "rsub_scalar": (lambda t: 2.0 - t, lambda x: 2.0 - x),
    "rdiv_scalar": (lambda t: 3.0 / t, lambda x: 3.0 / x),
    "neg": (lambda t: -t, lambda x: -x),
}

UNARY = {  # name: (ours, float64 reference)
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "gelu": (F.gelu, None),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"), None),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "tanh": (flow.tanh, np.tanh),
    "sigmoid": (flow.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
}


def gelu_ref(x, tanh=False):
    import math

    if tanh:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


UNARY["gelu"] = (F.gelu, gelu_ref)
UNARY["gelu_tanh"] = (UNARY["gelu_tanh"][0], lambda x: gelu_ref(x, True))


def assert_bf16_close(got, want, scale, roundings=1):
    """Within bf16 rounding of `want`: relative 2^-8 per rounding on the way (inputs saved in
    bf16, the result), plus as much absolute at `scale` (the size of the values that cancel)."""
    want = np.asarray(want, dtype=np.float64)
    tol = 2.0**-8 * roundings
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale + 1e-6)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op", sorted(SCALAR) + sorted(UNARY))
def test_unary_and_scalar_forward_backward_vs_f64(op, n):
    fl, ref = (SCALAR | UNARY)[op]
    x = rand_bf16(n, 9)
    if op == "rdiv_scalar":
        x = np.where(np.abs(x) < 0.1, np.float32(0.5), x)
    t = flow.tensor(x).bfloat16().requires_grad_()
    y = fl(t)
    assert y.dtype == flow.bfloat16
    assert_bf16_close(as_np(y), ref(x.astype(np.float64)), scale=0.0, roundings=2)
    g = rand_bf16(n, 10)
    y.backward(flow.tensor(g).bfloat16())
    assert t.grad.dtype == flow.bfloat16
    t64 = flow.tensor(x.astype(np.float64)).requires_grad_()
    fl(t64).backward(flow.tensor(g.astype(np.float64)))
    # the formulas read the bf16-rounded input or output (torch's too): derivatives near a
    # cancellation (1 - tanh^2 where tanh rounds to 1) lose up to a bf16 ulp of dy's size
    assert_bf16_close(as_np(t.grad), t64.grad.detach().numpy(), np.abs(g).max() if n else 1.0, 4)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize(
    "shape,dim",
    [
        ((7, 33), -1),
        ((4, 5, 64, 64), -1),
        ((9, 17, 3), 1),
        ((130, 5), 0),
        ((0, 8), -1),
        ((3, 1), -1),
    ],
)
def test_softmax_forward_backward_vs_f64(log, shape, dim):
    fl = F.log_softmax if log else F.softmax
    x = rand_bf16(shape, 11)
    t = flow.tensor(x).bfloat16().requires_grad_()
    y = fl(t, dim=dim)
    assert y.dtype == flow.bfloat16
    t64 = flow.tensor(x.astype(np.float64)).requires_grad_()
    y64 = fl(t64, dim=dim)
    assert_bf16_close(as_np(y), y64.detach().numpy(), scale=1.0 if log else 0.0, roundings=2)
    g = rand_bf16(shape, 12)
    y.backward(flow.tensor(g).bfloat16())
    y64.backward(flow.tensor(g.astype(np.float64)))
    gscale = np.abs(g).max() * (shape[dim] if log else 1) if g.size else 1.0
    assert_bf16_close(as_np(t.grad), t64.grad.detach().numpy(), gscale, 4)


@pytest.mark.parametrize(
    "shape,dims",
    [
        ((2048, 37), 0),
        ((3, 1000, 17), 1),
        ((33, 1037), 1),
        ((5, 7, 9), (0, 2)),
        ((0, 5), 0),
        ((4, 0), 1),
        ((70001,), 0),
    ],
)
def test_sum_vs_f64(shape, dims):
    x = rand_bf16(shape, 13, scale=1.0)
    got = flow.tensor(x).bfloat16().sum(dims)
    want = x.astype(np.float64).sum(dims)
    assert got.dtype == flow.bfloat16
    assert_bf16_close(as_np(got), want, scale=np.sqrt(max(np.prod(shape), 1)))  # one rounding
    got32 = flow.tensor(x).bfloat16().sum(dims, dtype=flow.float32)
    assert got32.dtype == flow.float32
    np.testing.assert_allclose(got32.detach().numpy(), want, rtol=1e-5, atol=1e-3)


def test_sum_non_contiguous():
    x = rand_bf16((64, 48), 14, scale=1.0)
    t = flow.tensor(x).bfloat16().t()[::2]
    want = x.T[::2].astype(np.float64)
    assert_bf16_close(as_np(t.sum(0)), want.sum(0), scale=6.0)
    assert_bf16_close(as_np(t.sum(1)), want.sum(1), scale=8.0)


def test_native_ops_issue_no_casts():
    """The speed-up: a bf16 op is one kernel, not casts around an f32 one."""
    a = flow.randn(64, 128).bfloat16()
    b = flow.randn(64, 128).bfloat16()
    assert cast_count(lambda: a + b) == 0
    assert cast_count(lambda: F.relu(a)) == 0
    assert cast_count(lambda: F.softmax(a, -1)) == 0
    assert cast_count(lambda: a.sum(0)) == 0
    # f16 still goes through f32 (no native f16 CPU kernels)
    h = flow.randn(8, 8).half()
    assert cast_count(lambda: h + h) == 3


def test_autocast_transformer_layer_bf16_vs_f64():
    """An autocast training step's gradients (the benchmark's model, small) against float64."""
    flow.manual_seed(0)
    enc = flow.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    x = flow.tensor(np.random.default_rng(15).standard_normal((3, 11, 32)).astype(np.float32))
    with flow.autocast("cpu", dtype=flow.bfloat16):
        loss = enc(x).float().square().mean()
    loss.backward()
    grads = [p.grad.detach().numpy() for p in enc.parameters()]
    enc64 = flow.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).double()
    enc64.load_state_dict({k: v.double() for k, v in enc.state_dict().items()})
    enc64(x.double()).square().mean().backward()
    for g, p in zip(grads, enc64.parameters()):
        ref = p.grad.detach().numpy()
        scale = np.abs(ref).max()
        np.testing.assert_allclose(g, ref, rtol=0.1, atol=0.05 * scale)


@pytest.mark.skipif(os.environ.get("OFL_BF16_AVX512") == "0", reason="already the fallback run")
def test_avx2_fallback_subprocess():
    """The same checks with the AVX-512 conversions switched off (the path of CPUs without
    AVX-512), in a fresh process: the switch is read once per process."""
    env = dict(os.environ, OFL_BF16_AVX512="0")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


# ---- layer_norm and dropout (native bf16 on the CPU; weight/bias stay float32) -----------------


def layer_norm_f64(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


@pytest.mark.parametrize("shape", [(4, 1), (3, 17), (0, 33), (5, 7, 1037), (2, 256)])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none", "bf16_params"])
def test_layer_norm_forward_backward_vs_f64(shape, affine):
    n = shape[-1]
    x = rand_bf16(shape, 20)
    rng = np.random.default_rng(21)
    w = (rng.standard_normal(n) + 1).astype(np.float32) if affine != "bias" else None
    b = rng.standard_normal(n).astype(np.float32) if affine not in ("weight",) else None
    if affine == "none":
        w = b = None
    pdt = flow.bfloat16 if affine == "bf16_params" else flow.float32
    if affine == "bf16_params":
        w, b = bf16_round(w), bf16_round(b)
    tx = flow.tensor(x).bfloat16().requires_grad_()
    tw = None if w is None else flow.tensor(w).to(pdt).requires_grad_()
    tb = None if b is None else flow.tensor(b).to(pdt).requires_grad_()
    y = F.layer_norm(tx, (n,), tw, tb, 1e-5)
    assert y.dtype == flow.bfloat16 and tuple(y.shape) == shape
    # y: the float32 computation rounded once to bf16, bit for bit
    y32 = F.layer_norm(
        flow.tensor(x),
        (n,),
        None if w is None else flow.tensor(w),
        None if b is None else flow.tensor(b),
        1e-5,
    )
    np.testing.assert_array_equal(as_np(y), bf16_round(y32.numpy()))
    ref = layer_norm_f64(x.astype(np.float64), w, b, 1e-5)
    np.testing.assert_allclose(as_np(y), ref, rtol=1e-2, atol=2e-2)
    # backward against float64 (g = a fixed bf16 upstream gradient)
    g = rand_bf16(shape, 22, scale=1.0)
    y.backward(flow.tensor(g).bfloat16())
    assert tx.grad.dtype == flow.bfloat16
    x64 = flow.tensor(x.astype(np.float64), requires_grad=True)
    w64 = None if w is None else flow.tensor(w.astype(np.float64), requires_grad=True)
    b64 = None if b is None else flow.tensor(b.astype(np.float64), requires_grad=True)
    F.layer_norm(x64, (n,), w64, b64, 1e-5).backward(flow.tensor(g.astype(np.float64)))
    pairs = [(tx.grad, x64.grad)]
    if w is not None:
        assert tw.grad.dtype == pdt
        pairs.append((tw.grad, w64.grad))
    if b is not None:
        assert tb.grad.dtype == pdt
        pairs.append((tb.grad, b64.grad))
    for got, want in pairs:
        want = want.numpy()
        scale = np.abs(want).max() if want.size else 1.0
        # (+1e-4: a row of one element has dx 0, computed as rstd * (a - fma(...)) ~ 1e-5)
        np.testing.assert_allclose(as_np(got), want, rtol=2e-2, atol=2e-2 * scale + 1e-4)


def test_layer_norm_non_contiguous_input_and_no_casts():
    x = rand_bf16((40, 24), 23)
    tx = flow.tensor(x).bfloat16().t()  # [24, 40], strided
    w, b = flow.randn(40), flow.randn(40)
    y = F.layer_norm(tx, (40,), w, b)
    y32 = F.layer_norm(flow.tensor(x).t(), (40,), w, b)
    np.testing.assert_array_equal(as_np(y), bf16_round(y32.numpy()))
    c = tx.contiguous()
    assert cast_count(lambda: F.layer_norm(c, (40,), w, b)) == 0
    ln = flow.nn.LayerNorm(40)
    assert cast_count(lambda: ln(c)) == 0


@pytest.mark.parametrize("n", [0, 1, 17, 1037, 70001])
@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_dropout_bits_match_f32_path(n, p):
    x = rand_bf16(n, 24)
    tx = flow.tensor(x).bfloat16().requires_grad_()
    flow.manual_seed(7)
    y = F.dropout(tx, p)
    flow.manual_seed(7)
    y32 = F.dropout(flow.tensor(x), p)
    assert y.dtype == flow.bfloat16
    np.testing.assert_array_equal(as_np(y), bf16_round(y32.numpy()))
    # against float64: the kept elements are x / (1 - p), the rest 0
    kept = as_np(y) != 0
    if p < 1.0:
        ref = np.where(kept, x.astype(np.float64) / (1 - p), 0.0)
        np.testing.assert_allclose(as_np(y), ref, rtol=8e-3)
    # backward: the same mask on the upstream gradient, bf16 in and out
    g = rand_bf16(n, 25)
    y.backward(flow.tensor(g).bfloat16())
    assert tx.grad.dtype == flow.bfloat16
    scale = 0.0 if p >= 1.0 else 1.0 / (1 - p)
    want = bf16_round(np.where(bf16_round(y32.numpy()) != 0, g * np.float32(scale), 0))
    got = as_np(tx.grad)
    np.testing.assert_array_equal(got[x != 0], want[x != 0])
    c = flow.tensor(x).bfloat16()
    assert cast_count(lambda: F.dropout(c, p)) == 0
