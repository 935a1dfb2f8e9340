"""CPU kernel fast paths (kernels/cpu) against float64 NumPy references: the vectorised RNG draws
(dropout, bernoulli, rand/uniform_), as_strided_scatter's contiguous-run copies, layer_norm and its
gradient, max_pool2d and its gradient. Sizes straddle the kernels' block and vector widths; inputs
include non-contiguous views."""
import numpy as np
import pytest

import oneflow_like as flow

F = flow.nn.functional
RNG = np.random.default_rng(20240611)
U64 = np.uint64


# --- the counter-based RNG (kernels/cpu/rng.h) in NumPy -------------------------------------------


def _mix(x):
    with np.errstate(over="ignore"):
        x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


def rng_bits(seed, n):
    with np.errstate(over="ignore"):
        i = np.arange(n, dtype=U64) * U64(0x9E3779B97F4A7C15)
    return _mix(U64(seed) ^ i)


def rng_uniform(seed, n):
    """RngUniform(seed, i) for i < n, in float64: 53 bits times 2^-53."""
    return (rng_bits(seed, n) >> U64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def op_seed(manual_seed, k=0):
    """The seed of the k-th random CPU op after flow.manual_seed(manual_seed) (ops/random.cc)."""
    with np.errstate(over="ignore"):
        return int(
            _mix(
                (U64(manual_seed) ^ _mix(U64(k) + U64(0x9E3779B97F4A7C15)))
                + U64(0x9E3779B97F4A7C15)
            )
        )


def drawn_uniforms(seed, n):
    """The uniforms the next random CPU op will draw after manual_seed(seed), read back through
    rand in float64 (and checked against the NumPy hash)."""
    flow.manual_seed(seed)
    u = flow.rand(n, dtype=flow.float64).detach().numpy()
    np.testing.assert_array_equal(u, rng_uniform(op_seed(seed), n))
    return u


SIZES = [1, 3, 7, 8, 9, 511, 512, 513, 4097, 100003]


@pytest.mark.parametrize("n", SIZES + [(1 << 20) + 5])
def test_rand_is_the_numpy_hash(n):
    drawn_uniforms(11 + n, n)
    flow.manual_seed(5)
    np.testing.assert_array_equal(
        flow.rand(n).detach().numpy(), rng_uniform(op_seed(5), n).astype(np.float32)
    )


def test_uniform_inplace_strided_matches_hash():
    for lo, hi in [(-1.0, 1.0), (3.0, 7.5), (-0.0625, 0.0625)]:
        flow.manual_seed(3)
        z = flow.zeros(1001, 3, dtype=flow.float64)
        with flow.no_grad():
            z[:, 1].uniform_(lo, hi)
        got = z.detach().numpy()
        u = rng_uniform(op_seed(3), 1001)
        np.testing.assert_allclose(got[:, 1], lo + (hi - lo) * u, rtol=1e-15, atol=1e-15)
        assert np.all(got[:, 0] == 0) and np.all(got[:, 2] == 0)


def _dropout_ref(x, u, p):
    t = x.dtype.type
    scale = t(1.0 / (1.0 - p)) if p < 1.0 else t(0)
    return np.where(u >= p, x * scale, t(0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("p", [1e-300, 0.1, 0.5, 0.9999999999999999, 1.0])
def test_dropout_mask_matches_double_compare(dtype, n, p):
    seed = 1000 + n
    u = drawn_uniforms(seed, n)
    x = RNG.standard_normal(n).astype(dtype)
    flow.manual_seed(seed)
    y = F.dropout(flow.tensor(x), p, training=True).detach().numpy()
    np.testing.assert_array_equal(y.view(np.uint8), _dropout_ref(x, u, p).view(np.uint8))


def test_dropout_p_zero_and_boundaries():
    x = RNG.standard_normal(4099).astype(np.float32)
    np.testing.assert_array_equal(F.dropout(flow.tensor(x), 0.0, training=True).detach().numpy(), x)
    u = drawn_uniforms(77, x.size)
    # p equal to a drawn uniform keeps that element (u >= p); the next double above drops it.
    for k in [0, 1, 517, 4098]:
        for p in [u[k], np.nextafter(u[k], 2.0), np.nextafter(u[k], -1.0)]:
            flow.manual_seed(77)
            y = F.dropout(flow.tensor(x), float(p), training=True).detach().numpy()
            np.testing.assert_array_equal(y, _dropout_ref(x, u, float(p)))
            assert (y[k] != 0) == (u[k] >= p)
    # NaN and inf inputs: dropped elements are +0, kept ones scaled.
    xs = np.array([np.nan, np.inf, -np.inf, -0.0, 1.0] * 201, np.float32)
    u = drawn_uniforms(8, xs.size)
    flow.manual_seed(8)
    y = F.dropout(flow.tensor(xs), 0.5, training=True).detach().numpy()
    np.testing.assert_array_equal(y.view(np.uint32), _dropout_ref(xs, u, 0.5).view(np.uint32))


def test_dropout_non_contiguous_input():
    x = RNG.standard_normal((67, 129)).astype(np.float32)
    u = drawn_uniforms(21, x.size).reshape(129, 67)
    flow.manual_seed(21)
    y = F.dropout(flow.tensor(x).t(), 0.25, training=True).detach().numpy()
    np.testing.assert_array_equal(y, _dropout_ref(np.ascontiguousarray(x.T), u, 0.25))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bernoulli_matches_double_compare(dtype):
    n = 20011
    u = drawn_uniforms(31, n)
    p = RNG.uniform(size=n)
    p[::7] = 0.0
    p[::11] = 1.0
    p[5::13] = u[5::13]  # u < p is false at equality
    p = p.astype(dtype)
    flow.manual_seed(31)
    got = flow.bernoulli(flow.tensor(p)).detach().numpy()
    np.testing.assert_array_equal(got, (u < p.astype(np.float64)).astype(dtype))
    # A transposed probability tensor draws in the order of its (contiguous) copy.
    q = RNG.uniform(size=(33, 65)).astype(dtype)
    u = drawn_uniforms(32, q.size).reshape(65, 33)
    flow.manual_seed(32)
    got = flow.bernoulli(flow.tensor(q).t()).detach().numpy()
    np.testing.assert_array_equal(got, (u < q.T.astype(np.float64)).astype(dtype))


def test_bernoulli_rejects_bad_probabilities():
    for bad in [1.5, -0.25, np.nan]:
        p = np.full(70001, 0.5, np.float32)
        p[66666] = bad
        with pytest.raises(Exception, match=r"\[bernoulli\] probability .* at element 66666"):
            flow.bernoulli(flow.tensor(p)).detach().numpy()


# --- as_strided_scatter: the gradient of every view ------------------------------------------------


def _view_grad(shape, view, g, dtype=np.float32, transpose_g=False):
    """d(view(x))/dx applied to g through autograd (one as_strided_scatter) and its NumPy reference."""
    x = flow.tensor(np.zeros(shape, dtype), requires_grad=True)
    y = view(x)
    gt = flow.tensor(np.ascontiguousarray(g.T)).t() if transpose_g else flow.tensor(g)
    (got,) = flow.autograd.grad(y, x, gt)
    ref = np.zeros(shape, np.float64)
    view(ref)[...] += g.astype(np.float64)
    return got.detach().numpy(), ref.astype(dtype)


VIEWS = {
    "col_block": ((37, 101), lambda t: t[:, 13:60]),
    "row_block": ((37, 101), lambda t: t[5:20]),
    "qkv": ((3, 7, 3 * 4 * 9), lambda t: t.reshape(3, 7, 3, 4, 9)[:, :, 1]),
    "column": ((64, 33), lambda t: t[:, 3]),
    "step_slices": ((41, 67), lambda t: t[1::2, 2::3]),
    "row_of_3d": ((5, 6, 7), lambda t: t[:, 2]),
    "inner_window": ((9, 10, 11), lambda t: t[2:7, 1:9, 3:8]),
    "tail_rows": ((300, 257), lambda t: t[1:]),
    "big_col_block": ((1024, 768), lambda t: t[:, 256:512]),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose_g", [False, True])
def test_as_strided_scatter_views(name, dtype, transpose_g):
    shape, view = VIEWS[name]
    vshape = view(np.zeros(shape)).shape
    g = RNG.standard_normal(vshape).astype(dtype)
    if transpose_g and g.ndim != 2:
        pytest.skip("transposed upstream gradients only for 2-d views")
    g.reshape(-1)[::5] = -0.0  # lands as +0.0, as zeros + g does
    got, ref = _view_grad(shape, view, g, dtype, transpose_g)
    np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


def test_as_strided_scatter_broadcast_and_empty_sources():
    x = flow.tensor(np.zeros((19, 23), np.float32), requires_grad=True)
    x[:, 4:9].sum().backward()  # the upstream gradient is an expanded (stride 0) one
    ref = np.zeros((19, 23), np.float32)
    ref[:, 4:9] = 1
    np.testing.assert_array_equal(x.grad.detach().numpy(), ref)
    x = flow.tensor(np.ones((4, 5), np.float32), requires_grad=True)
    (got,) = flow.autograd.grad(x[:, 2:2], x, flow.tensor(np.zeros((4, 0), np.float32)))
    np.testing.assert_array_equal(got.detach().numpy(), np.zeros((4, 5), np.float32))


# --- layer_norm and its gradient --------------------------------------------------------------------


def _ln_ref(x, w, b, eps, g):
    """Forward and (dx, dw, db) for upstream g, all in float64."""
    m = x.mean(-1, keepdims=True)
    rs = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)
    xh = (x - m) * rs
    y = xh * (w if w is not None else 1.0) + (b if b is not None else 0.0)
    gw = g * (w if w is not None else 1.0)
    dx = rs * (gw - gw.mean(-1, keepdims=True) - xh * (gw * xh).mean(-1, keepdims=True))
    red = tuple(range(x.ndim - 1))
    return y, dx, (g * xh).sum(red), g.sum(red)


@pytest.mark.parametrize(
    "shape", [(1, 1), (3, 7), (5, 16), (2, 3, 17), (33, 257), (1024, 256), (8, 1000)]
)
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_and_grad(shape, affine, dtype):
    n = shape[-1]
    x = RNG.standard_normal(shape) * 3 + 0.5
    g = RNG.standard_normal(shape)
    w = RNG.uniform(0.5, 1.5, n) if affine in ("both", "weight") else None
    b = RNG.standard_normal(n) if affine in ("both", "bias") else None
    ft = lambda a: flow.tensor(a.astype(dtype), requires_grad=True)  # noqa: E731
    fx, fw, fb = ft(x), (ft(w) if w is not None else None), (ft(b) if b is not None else None)
    y = F.layer_norm(fx, (n,), fw, fb, 1e-5)
    ins = [t for t in (fx, fw, fb) if t is not None]
    grads = flow.autograd.grad(y, ins, flow.tensor(g.astype(dtype)))
    ry, rdx, rdw, rdb = _ln_ref(
        x.astype(dtype).astype(np.float64), w, b, 1e-5, g.astype(dtype).astype(np.float64)
    )
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(y.detach().numpy(), ry, **tol)
    np.testing.assert_allclose(grads[0].detach().numpy(), rdx, **tol)
    refs = ([rdw] if w is not None else []) + ([rdb] if b is not None else [])
    for got, ref in zip(grads[1:], refs):
        np.testing.assert_allclose(
            got.detach().numpy(), ref, rtol=tol["rtol"], atol=tol["atol"] * shape[0]
        )


def test_layer_norm_large_offset_and_constant_rows():
    # A large common offset (variance from deviations, not from sums of squares) and constant rows.
    x = (1000.0 + RNG.standard_normal((64, 300)) * 0.01).astype(np.float32)
    x[3] = 7.0
    y = F.layer_norm(flow.tensor(x), (300,)).detach().numpy()
    ry, _, _, _ = _ln_ref(x.astype(np.float64), None, None, 1e-5, np.zeros_like(x, np.float64))
    # The mean is stored in float32 (an ulp at 1000 is 6e-5, 0.6% of this std): y shifts by that much.
    np.testing.assert_allclose(y, ry, rtol=5e-3, atol=5e-3)
    assert np.all(y[3] == 0)


def test_layer_norm_grad_deterministic():
    x = flow.tensor(RNG.standard_normal((777, 129)).astype(np.float32), requires_grad=True)
    w = flow.tensor(RNG.standard_normal(129).astype(np.float32), requires_grad=True)
    g = flow.tensor(RNG.standard_normal((777, 129)).astype(np.float32))
    y = F.layer_norm(x, (129,), w, None)
    first = [t.detach().numpy() for t in flow.autograd.grad(y, [x, w], g, retain_graph=True)]
    for _ in range(3):
        again = [t.detach().numpy() for t in flow.autograd.grad(y, [x, w], g, retain_graph=True)]
        for a, b in zip(first, again):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 7), 3), ((4, 8, 33), 2), ((3, 4), 4)])
def test_group_norm_still_matches(shape, groups):
    x = RNG.standard_normal(shape)
    c = shape[1]
    w, b = RNG.uniform(0.5, 1.5, c), RNG.standard_normal(c)
    y = (
        flow.group_norm(
            flow.tensor(x.astype(np.float32)),
            groups,
            flow.tensor(w.astype(np.float32)),
            flow.tensor(b.astype(np.float32)),
        )
        .detach()
        .numpy()
    )
    xg = x.reshape(shape[0], groups, -1)
    ref = ((xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)).reshape(
        shape
    )
    bshape = (1, c) + (1,) * (len(shape) - 2)
    np.testing.assert_allclose(y, ref * w.reshape(bshape) + b.reshape(bshape), rtol=2e-4, atol=2e-4)


# --- max_pool2d, 2x2 windows with stride 2 ------------------------------------------------------------


def _pool2x2_ref(x):
    """Max and argmax (first of the taps (0,0) (0,1) (1,0) (1,1); NaN wins, the first NaN) per window."""
    n, c, h, w = x.shape
    oh, ow = h // 2, w // 2
    win = (
        x[:, :, : 2 * oh, : 2 * ow]
        .reshape(n, c, oh, 2, ow, 2)
        .transpose(0, 1, 2, 4, 3, 5)
        .reshape(n, c, oh, ow, 4)
    )
    tap = np.argmax(win, axis=-1)  # NumPy's argmax: the first maximum, and the first NaN if any
    return np.take_along_axis(win, tap[..., None], -1)[..., 0], tap


@pytest.mark.parametrize(
    "shape",
    [
        (2, 3, 26, 26),
        (1, 2, 5, 17),
        (1, 1, 7, 15),
        (2, 2, 9, 33),
        (3, 4, 4, 40),
        (1, 1, 2, 16),
        (64, 32, 26, 26),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_2x2_values_and_argmax(shape, dtype):
    x = np.round(RNG.standard_normal(shape), 1)  # many ties
    flat = x.reshape(-1)
    flat[RNG.integers(0, flat.size, flat.size // 50 + 1)] = np.nan
    flat[RNG.integers(0, flat.size, flat.size // 50 + 1)] = np.inf
    flat[RNG.integers(0, flat.size, flat.size // 50 + 1)] = -np.inf
    x = x.astype(dtype)
    ref, tap = _pool2x2_ref(x.astype(np.float64))
    fx = flow.tensor(x, requires_grad=True)
    y = F.max_pool2d(fx, 2)
    np.testing.assert_array_equal(y.detach().numpy(), ref.astype(dtype))
    # The gradient lands on the recorded tap: dx at (2*oh + tap // 2, 2*ow + tap % 2) is dy.
    g = RNG.uniform(1.0, 2.0, ref.shape).astype(dtype)
    (dx,) = flow.autograd.grad(y, fx, flow.tensor(g))
    want = np.zeros(shape, np.float64)
    n, c, oh, ow = ref.shape
    ii, jj, hh, ww = np.meshgrid(
        np.arange(n), np.arange(c), np.arange(oh), np.arange(ow), indexing="ij"
    )
    want[ii, jj, 2 * hh + tap // 2, 2 * ww + tap % 2] = g
    np.testing.assert_array_equal(dx.detach().numpy(), want.astype(dtype))


def test_max_pool2d_other_windows_unchanged():
    x = RNG.standard_normal((2, 3, 11, 19)).astype(np.float32)
    y = F.max_pool2d(flow.tensor(x), 3, stride=2).detach().numpy()
    oh, ow = (11 - 3) // 2 + 1, (19 - 3) // 2 + 1
    ref = np.array(
        [
            [
                [
                    [x[a, b, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].max() for j in range(ow)]
                    for i in range(oh)
                ]
                for b in range(3)
            ]
            for a in range(2)
        ]
    )
    np.testing.assert_array_equal(y, ref)


# --- softmax / log_softmax gradients over rows ---------------------------------------------------------


@pytest.mark.parametrize(
    "shape", [(1, 1), (3, 5), (7, 129), (8, 4, 128, 128), (13, 1000), (9, 3, 17)]
)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_grad_rows(shape, log, dtype):
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    g = RNG.standard_normal(shape).astype(dtype)
    fx = flow.tensor(x, requires_grad=True)
    y = F.log_softmax(fx, -1) if log else flow.softmax(fx, -1)
    (dx,) = flow.autograd.grad(y, fx, flow.tensor(g))
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    ref = (
        g64 - p * g64.sum(-1, keepdims=True)
        if log
        else p * (g64 - (g64 * p).sum(-1, keepdims=True))
    )
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(dx.detach().numpy(), ref, rtol=tol * 10, atol=tol)
