"""Complex dtypes (issue 19): complex64 / complex128 storage, views, promotion, arithmetic and
autograd, against NumPy complex128 and finite differences in float64 of the real and imaginary
parts (torch's convention: for a real loss L, z.grad = dL/d(re z) + i dL/d(im z))."""

import numpy as np
import pytest

import oneflow_like as flow

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

RNG = np.random.default_rng(19)


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def tol(dtype):
    return (2e-5, 2e-5) if dtype in (np.complex64, flow.complex64) else (1e-11, 1e-11)


# ---- dtypes, promotion, storage ---------------------------------------------------------------


def test_dtypes_and_names():
    assert flow.complex64 is flow.cfloat and flow.complex128 is flow.cdouble
    assert flow.complex64.is_complex and not flow.float32.is_complex
    assert not flow.complex64.is_floating_point
    assert flow.complex64.itemsize == 8 and flow.complex128.itemsize == 16
    assert flow.float32.to_complex() == flow.complex64
    assert flow.float64.to_complex() == flow.complex128
    assert repr(flow.complex64) == "oneflow_like.complex64"
    z = flow.zeros(3, dtype=flow.complex64)
    assert z.is_complex() and flow.is_complex(z) and not flow.is_complex(flow.zeros(2))


def test_existing_enum_values_unchanged():
    # .oflx artifacts and checkpoints store the enum's integers: complex is appended after float64
    assert [int(d) for d in (flow.bool, flow.uint8, flow.int8, flow.int32, flow.int64,
                             flow.float16, flow.bfloat16, flow.float32, flow.float64)] == list(range(9))  # fmt: skip
    assert int(flow.complex64) == 9 and int(flow.complex128) == 10


@pytest.mark.parametrize(
    "a, b, want",
    [
        (flow.float32, flow.complex64, flow.complex64),
        (flow.float64, flow.complex64, flow.complex128),
        (flow.int64, flow.complex64, flow.complex64),
        (flow.complex64, flow.complex128, flow.complex128),
        (flow.float16, flow.complex64, flow.complex64),
    ],
)
def test_promotion(a, b, want):
    x = flow.ones(2, dtype=a)
    y = flow.ones(2, dtype=b)
    assert (x + y).dtype == want and (y * x).dtype == want


def test_python_complex_scalars_promote_like_torch():
    assert (flow.ones(2) * 1j).dtype == flow.complex64
    assert (flow.ones(2, dtype=flow.float64) * 1j).dtype == flow.complex128
    assert (flow.ones(2, dtype=flow.int64) + 1j).dtype == flow.complex64
    assert flow.tensor([1 + 2j]).dtype == flow.complex64
    assert flow.tensor([1 + 2j], dtype=flow.complex128).dtype == flow.complex128


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_numpy_round_trip(dt):
    a = crand(3, 4, dtype=dt)
    t = flow.from_numpy(a)
    assert t.dtype == (flow.complex64 if dt == np.complex64 else flow.complex128)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(flow.tensor(a).numpy(), a)
    assert t[1].numpy().dtype == dt


def test_creation():
    np.testing.assert_array_equal(flow.zeros(2, 3, dtype=flow.complex64).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(flow.ones(2, dtype=flow.complex128).numpy(), np.ones(2))
    f = flow.full((2,), 2.5, dtype=flow.complex64).numpy()
    np.testing.assert_array_equal(f, np.full(2, 2.5 + 0j))
    assert flow.empty(4, dtype=flow.complex128).shape == (4,)


def test_casts():
    x = flow.tensor([1.5, -2.0])
    z = x.to(flow.complex64)
    np.testing.assert_array_equal(z.numpy(), np.array([1.5, -2.0], np.complex64))
    w = flow.tensor(np.array([1 + 2j, 3 - 4j]))
    r = w.to(flow.float64)  # keeps the real part (torch's warning is not raised here)
    np.testing.assert_array_equal(r.numpy(), [1.0, 3.0])
    np.testing.assert_array_equal(
        w.to(flow.complex64).numpy(), np.array([1 + 2j, 3 - 4j], np.complex64)
    )
    assert w.clone().numpy().tolist() == [1 + 2j, 3 - 4j]
    assert w.to(flow.bool).numpy().tolist() == [True, True]


def test_views_share_storage():
    z = flow.tensor(np.array([1 + 2j, 3 - 4j], np.complex64))
    r = flow.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype == flow.float32
    np.testing.assert_array_equal(r.numpy(), [[1, 2], [3, -4]])
    r[0, 1] = 7.0
    assert z.numpy()[0] == 1 + 7j
    back = flow.view_as_complex(r)
    assert back.dtype == flow.complex64
    back.real.mul_(10)  # a view of a view: writes through to z
    np.testing.assert_array_equal(z.numpy(), np.array([10 + 7j, 30 - 4j], np.complex64))
    z.imag = flow.tensor([0.5, 0.25])
    np.testing.assert_array_equal(z.numpy(), np.array([10 + 0.5j, 30 + 0.25j], np.complex64))
    z.real = 1.0
    np.testing.assert_array_equal(z.numpy().real, [1, 1])


def test_view_errors():
    with pytest.raises(ValueError, match="view_as_complex.*last dimension must have size 2"):
        flow.view_as_complex(flow.zeros(3, 3))
    with pytest.raises(ValueError, match="view_as_complex.*stride"):
        flow.view_as_complex(flow.zeros(2, 4)[:, 1:3])
    with pytest.raises(TypeError, match="view_as_real.*expected a complex tensor"):
        flow.view_as_real(flow.zeros(3))
    with pytest.raises(
        TypeError, match="imag is not implemented for tensors with non-complex dtypes"
    ):
        flow.zeros(3).imag


def test_complex_polar_conj():
    re, im = RNG.standard_normal(5), RNG.standard_normal(5)
    z = flow.complex(flow.tensor(re, dtype=flow.float64), flow.tensor(im, dtype=flow.float64))
    assert z.dtype == flow.complex128
    np.testing.assert_array_equal(z.numpy(), re + 1j * im)
    p = flow.polar(flow.tensor(np.abs(re), dtype=flow.float64), flow.tensor(im, dtype=flow.float64))
    np.testing.assert_allclose(p.numpy(), np.abs(re) * np.exp(1j * im), rtol=1e-14)
    np.testing.assert_array_equal(z.conj().numpy(), np.conj(re + 1j * im))
    np.testing.assert_array_equal(flow.conj_physical(z).numpy(), np.conj(re + 1j * im))
    assert not z.conj().is_conj() and z.resolve_conj() is z
    with pytest.raises(TypeError, match="complex.*float32 or float64"):
        flow.complex(flow.zeros(2), flow.zeros(2, dtype=flow.float64))


def test_printing():
    z = flow.tensor(np.array([1 + 2j, 3 - 1j], np.complex64))
    assert repr(z) == "tensor([1.+2.j, 3.-1.j])"
    z2 = flow.tensor(np.array([1 + 2j]), dtype=flow.complex128)
    assert repr(z2) == "tensor([1.+2.j], dtype=oneflow_like.complex128)"


# ---- arithmetic against NumPy complex128 ------------------------------------------------------

UNARY = [
    ("neg", lambda t: -t, np.negative, None),
    ("exp", lambda t: t.exp(), np.exp, None),
    ("log", lambda t: t.log(), np.log, None),
    ("sqrt", lambda t: t.sqrt(), np.sqrt, None),
    ("reciprocal", lambda t: t.reciprocal(), np.reciprocal, None),
    ("abs", lambda t: t.abs(), np.abs, None),
    ("angle", lambda t: t.angle(), np.angle, None),
    ("sgn", lambda t: t.sgn(), lambda a: a / np.abs(a), None),
    ("square", lambda t: t * t, np.square, None),
    ("pow2", lambda t: t**2, lambda a: a**2, None),
    ("pow_neg3", lambda t: t**-3, lambda a: a**-3.0, None),
    ("pow_half", lambda t: t**0.5, lambda a: a**0.5, None),
    ("pow_complex", lambda t: t ** (0.5 + 1j), lambda a: a ** (0.5 + 1j), None),
    ("conj", lambda t: t.conj(), np.conj, None),
    ("real", lambda t: t.real, np.real, None),
    ("imag", lambda t: t.imag, np.imag, None),
    ("mul_scalar", lambda t: t * 2.5, lambda a: a * 2.5, None),
    ("mul_cscalar", lambda t: t * (1 - 2j), lambda a: a * (1 - 2j), None),
    ("radd_cscalar", lambda t: (0.5 + 1j) + t, lambda a: (0.5 + 1j) + a, None),
    ("rsub_cscalar", lambda t: 1j - t, lambda a: 1j - a, None),
    ("rdiv_cscalar", lambda t: (2 + 1j) / t, lambda a: (2 + 1j) / a, None),
    ("div_scalar", lambda t: t / 4.0, lambda a: a / 4.0, None),
    ("sum", lambda t: t.sum(), np.sum, None),
    ("sum_dim", lambda t: t.sum(1), lambda a: a.sum(1), None),
    (
        "sum_neg_dim_keep",
        lambda t: t.sum(-1, keepdim=True),
        lambda a: a.sum(-1, keepdims=True),
        None,
    ),
    ("mean", lambda t: t.mean(0), lambda a: a.mean(0), None),
]


@pytest.mark.parametrize("name, fn, ref, _", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_unary_forward(name, fn, ref, _, dt):
    a = crand(3, 4, dtype=dt)
    got = fn(flow.tensor(a)).numpy()
    want = ref(a.astype(np.complex128))
    rtol, atol = tol(dt)
    np.testing.assert_allclose(got, want, rtol=rtol * 10, atol=atol * 10)


BINARY = [
    ("add", lambda x, y: x + y, np.add),
    ("sub", lambda x, y: x - y, np.subtract),
    ("mul", lambda x, y: x * y, np.multiply),
    ("div", lambda x, y: x / y, np.divide),
    ("pow", lambda x, y: x**y, np.power),
    ("add_alpha", lambda x, y: flow.add(x, y, alpha=2.0), lambda a, b: a + 2 * b),
    ("matmul", lambda x, y: x @ y.transpose(0, 1), lambda a, b: a @ b.T),
    ("mm", lambda x, y: flow.mm(x, y.transpose(0, 1)), lambda a, b: a @ b.T),
]


@pytest.mark.parametrize("name, fn, ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_binary_forward(name, fn, ref, dt):
    a, b = crand(3, 4, dtype=dt), crand(3, 4, dtype=dt)
    got = fn(flow.tensor(a), flow.tensor(b)).numpy()
    want = ref(a.astype(np.complex128), b.astype(np.complex128))
    rtol, atol = tol(dt)
    np.testing.assert_allclose(got, want, rtol=rtol * 10, atol=atol * 10)


def test_broadcast_and_mixed_real():
    a = crand(3, 1)
    b = RNG.standard_normal(4)
    got = (flow.tensor(a) * flow.tensor(b)).numpy()
    np.testing.assert_allclose(got, a * b, rtol=1e-14)
    got = (flow.tensor(b) - flow.tensor(a)).numpy()
    np.testing.assert_allclose(got, b - a, rtol=1e-14)


def test_bmm():
    a, b = crand(2, 3, 4), crand(2, 4, 5)
    np.testing.assert_allclose(flow.bmm(flow.tensor(a), flow.tensor(b)).numpy(), a @ b, rtol=1e-12)


def test_eq_isclose_allclose():
    a = crand(6)
    b = a.copy()
    b[2] += 1e-3j
    x, y = flow.tensor(a), flow.tensor(b)
    assert (x == y).numpy().tolist() == [True, True, False, True, True, True]
    assert (x != y).numpy().tolist() == [False, False, True, False, False, False]
    assert flow.isclose(x, y).numpy().tolist() == [True, True, False, True, True, True]
    assert flow.allclose(x, x) and not flow.allclose(x, y)


def test_unsupported_ops_name_op_and_dtype():
    z = flow.tensor(crand(3))
    with pytest.raises(TypeError, match=r"\[relu\] not supported for complex128"):
        z.relu()
    with pytest.raises(TypeError, match=r"not supported for complex128"):
        z.max()
    with pytest.raises(TypeError, match=r"not supported for complex128"):
        flow.cat([z, z])
    with pytest.raises(TypeError, match=r"\[lt\] not supported for complex"):
        z < z
    with pytest.raises(TypeError, match=r"\[exp_\] not supported for complex128"):
        z.exp_()


def test_graph_rejects_complex():
    class G(flow.nn.Graph):
        def build(self, x):
            return flow.view_as_real(x * 2)

    with pytest.raises(Exception, match="nn.Graph does not support complex"):
        G()(flow.tensor(crand(3)))


# ---- autograd: finite differences of the real and imaginary parts in float64 -----------------


def fd_grad(loss, z, eps=1e-6):
    """dL/d(re z) + i dL/d(im z) by central differences (loss: complex128 ndarray -> float)."""
    g = np.zeros_like(z)
    flat, gflat = z.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        for unit in (1.0, 1j):
            zp, zm = flat.copy(), flat.copy()
            zp[i] += eps * unit
            zm[i] -= eps * unit
            d = (loss(zp.reshape(z.shape)) - loss(zm.reshape(z.shape))) / (2 * eps)
            gflat[i] += d * unit
    return g


def real_loss(t):
    """A real loss that depends on both parts: sum(re(t)^2 + 3 re(t) im(t))."""
    if t.dtype.is_complex:
        r, i = t.real, t.imag
        return (r * r + 3 * r * i).sum()
    return (t * t).sum()


GRAD_UNARY = [u for u in UNARY if u[0] not in ("conj",)] + [
    ("conj", lambda t: t.conj(), np.conj, None)
]


@pytest.mark.parametrize("name, fn, ref, _", GRAD_UNARY, ids=[u[0] for u in GRAD_UNARY])
def test_unary_backward(name, fn, ref, _):
    a = crand(2, 3)

    def loss_np(z):
        out = flow.tensor(z, dtype=flow.complex128)
        return float(real_loss(fn(out)).numpy())

    x = flow.tensor(a, dtype=flow.complex128).requires_grad_()
    real_loss(fn(x)).backward()
    assert x.grad.dtype == flow.complex128
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(loss_np, a), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, fn, ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_backward(name, fn, ref):
    a, b = crand(3, 4), crand(3, 4)
    x = flow.tensor(a).requires_grad_()
    y = flow.tensor(b).requires_grad_()
    real_loss(fn(x, y)).backward()
    gx = fd_grad(lambda z: float(real_loss(fn(flow.tensor(z), flow.tensor(b))).numpy()), a)
    gy = fd_grad(lambda z: float(real_loss(fn(flow.tensor(a), flow.tensor(z))).numpy()), b)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), gy, rtol=1e-5, atol=1e-6)


def test_real_input_gets_real_grad_through_complex():
    w = flow.tensor(RNG.standard_normal(4)).requires_grad_()
    z = w * (1 + 2j)
    real_loss(z).backward()
    assert w.grad.dtype == flow.float64
    a = w.detach().numpy()
    fd = fd_grad(
        lambda v: float(real_loss(flow.tensor(v.real) * (1 + 2j)).numpy()), a.astype(np.complex128)
    )
    np.testing.assert_allclose(w.grad.numpy(), fd.real, rtol=1e-6)


def test_view_and_complex_backward():
    re = flow.tensor(RNG.standard_normal(3)).requires_grad_()
    im = flow.tensor(RNG.standard_normal(3)).requires_grad_()
    z = flow.complex(re, im)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(re.grad.numpy(), 2 * re.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(im.grad.numpy(), 2 * im.detach().numpy(), rtol=1e-12)


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_gradients_match_torch():
    a, b = crand(3, 3), crand(3, 3)
    fns = [
        lambda m, x, y: (m.exp(x) * y / (x + 2)).abs().sum(),
        lambda m, x, y: ((x @ y).angle() + (x.conj() * y).real).sum(),
        lambda m, x, y: (m.sqrt(x) + m.log(y) ** 2).imag.sum(),
    ]
    for f in fns:
        tx = torch.tensor(a, requires_grad=True)
        ty = torch.tensor(b, requires_grad=True)
        f(torch, tx, ty).backward()
        fx = flow.tensor(a).requires_grad_()
        fy = flow.tensor(b).requires_grad_()
        f(flow, fx, fy).backward()
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fy.grad.numpy(), ty.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_complex_table_rows():
    names = {r["name"] for r in flow._C._complex_table()}
    assert names == {"view_as_real", "view_as_complex", "fft_c2c", "fft_r2c", "fft_c2r"}
