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
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = w.to(flow.float64)  # keeps the real part
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
    # the ordering ops raise torch's RuntimeError (tests/python/test_complex_linalg.py)
    with pytest.raises(RuntimeError, match=r'"max_all" not implemented for \'ComplexDouble\''):
        z.max()
    with pytest.raises(RuntimeError, match=r'"lt_cpu" not implemented for \'ComplexDouble\''):
        z < z
    with pytest.raises(RuntimeError, match=r'"sort" not implemented for \'ComplexDouble\''):
        z.sort()


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
    assert names == {"view_as_real", "view_as_complex", "complex", "fft_c2c", "fft_r2c", "fft_c2r",
                     "linalg_eig", "linalg_eig_backward", "complex_bmm"}  # fmt: skip


def test_composed_results_are_not_views():
    # every composed op ends in the `complex` kernel, so its result owns its storage and takes
    # in-place ops under autograd as a real result does
    x = flow.tensor(crand(3)).requires_grad_()
    for y in (x * 2, x + x, x.exp(), flow.cat([x, x]), x[flow.tensor([0, 2])], x.sum(0)):
        assert not y._is_view()
        y.add_(1)


# ---- creation, random numbers, fills (issue 19, second part) ----------------------------------


@pytest.mark.parametrize("dt, rdt", [(flow.complex64, np.float32), (flow.complex128, np.float64)])
def test_randn_rand_complex_distributions(dt, rdt):
    flow.manual_seed(5)
    z = flow.randn(400, 500, dtype=dt)
    assert z.dtype == dt and z.shape == (400, 500)
    a = z.numpy()
    # torch: each part N(0, 1/2), so E|z|^2 = 1
    for part in (a.real, a.imag):
        assert abs(part.mean()) < 0.01 and abs(part.var() - 0.5) < 0.01
    assert abs(np.corrcoef(a.real.ravel(), a.imag.ravel())[0, 1]) < 0.01
    u = flow.rand(400, 500, dtype=dt).numpy()
    for part in (u.real, u.imag):
        assert part.min() >= 0 and part.max() < 1 and abs(part.mean() - 0.5) < 0.01
    flow.manual_seed(7)
    b = flow.randn(3, dtype=dt).numpy()
    flow.manual_seed(7)
    np.testing.assert_array_equal(flow.randn(3, dtype=dt).numpy(), b)
    like = flow.randn_like(z)
    assert like.dtype == dt and like.shape == z.shape
    assert flow.rand_like(z).dtype == dt


def test_normal_uniform_inplace_complex():
    flow.manual_seed(3)
    z = flow.empty(300, 400, dtype=flow.complex64)
    assert z.normal_().data_ptr() == z.data_ptr()
    a = z.numpy()
    assert abs(a.real.var() - 0.5) < 0.01 and abs(a.imag.var() - 0.5) < 0.01
    z.normal_(mean=2.0, std=3.0)
    a = z.numpy()
    assert abs(a.real.mean() - 2) < 0.05 and abs(a.real.var() - 4.5) < 0.1
    z.uniform_(-1, 1)
    a = z.numpy()
    assert a.real.min() >= -1 and a.imag.max() < 1 and abs(a.imag.mean()) < 0.01


def test_full_fill_and_complex_scalars():
    f = flow.full((2, 3), 1 + 2j)
    assert f.dtype == flow.complex64
    np.testing.assert_array_equal(f.numpy(), np.full((2, 3), 1 + 2j, np.complex64))
    f = flow.full((2,), -1j, dtype=flow.complex128)
    assert f.dtype == flow.complex128 and f.numpy().tolist() == [-1j, -1j]
    z = flow.tensor(crand(2, 2))
    np.testing.assert_array_equal(flow.full_like(z, 3 - 1j).numpy(), np.full((2, 2), 3 - 1j))
    np.testing.assert_array_equal(flow.zeros_like(z).numpy(), np.zeros((2, 2), np.complex128))
    np.testing.assert_array_equal(z.new_full((3,), 2j).numpy(), [2j, 2j, 2j])
    assert flow.full((2,), 1.5, dtype=flow.complex64).numpy().tolist() == [1.5, 1.5]
    assert z.clone().fill_(1 + 1j).numpy().tolist() == [[1 + 1j] * 2] * 2
    assert z.clone().fill_(2).numpy().tolist() == [[2 + 0j] * 2] * 2
    assert z.clone().zero_().numpy().tolist() == [[0j] * 2] * 2
    with pytest.raises(TypeError, match=r"\[full\] can't fill a float32 tensor with the complex"):
        flow.full((2,), 1j, dtype=flow.float32)
    with pytest.raises(TypeError, match=r"\[fill_\] can't fill the float32 tensor"):
        flow.zeros(2).fill_(1j)
    t = flow.tensor(1 + 2j)
    assert t.dtype == flow.complex64 and t.ndim == 0 and t.item() == 1 + 2j
    t = flow.tensor([[1 + 2j, 3], [0.5j, -1]], dtype=flow.complex128)
    assert t.tolist() == [[1 + 2j, 3 + 0j], [0.5j, -1 + 0j]]
    assert isinstance(t[0, 0].item(), complex)


def test_complex_to_real_cast_warning():
    z = flow.tensor(np.array([1 + 2j, 3 - 4j]))
    msg = "Casting complex values to real discards the imaginary part"
    with pytest.warns(UserWarning, match=msg) as rec:
        r = z.to(flow.float32)
    assert r.numpy().tolist() == [1.0, 3.0]
    assert rec[0].filename == __file__  # the caller's line, not the Python wrapper of Tensor.to
    with pytest.warns(UserWarning, match=msg):
        z.float()
    with pytest.warns(UserWarning, match=msg):
        z.type_as(flow.zeros(1))
    with pytest.warns(UserWarning, match=msg):
        flow.zeros(2, dtype=flow.float64).copy_(z)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: views, complex -> complex, real -> complex
        assert z.real.numpy().tolist() == [1.0, 3.0] and z.imag.numpy().tolist() == [2.0, -4.0]
        z.to(flow.complex64)
        flow.zeros(2).to(flow.complex64)
        flow.zeros(2, dtype=flow.complex64).copy_(flow.ones(2))


# ---- in place ---------------------------------------------------------------------------------

INPLACE = [
    ("add_", lambda t, o: t.add_(o), lambda a, b: a + b),
    ("add_alpha", lambda t, o: t.add_(o, alpha=2), lambda a, b: a + 2 * b),
    ("sub_", lambda t, o: t.sub_(o), lambda a, b: a - b),
    ("mul_", lambda t, o: t.mul_(o), lambda a, b: a * b),
    ("div_", lambda t, o: t.div_(o), lambda a, b: a / b),
    ("iadd", lambda t, o: t.__iadd__(o), lambda a, b: a + b),
    ("imul", lambda t, o: t.__imul__(o), lambda a, b: a * b),
    ("itruediv", lambda t, o: t.__itruediv__(o), lambda a, b: a / b),
    ("add_real", lambda t, o: t.add_(o.real), lambda a, b: a + b.real),
    ("mul_scalar", lambda t, o: t.mul_(2.5), lambda a, b: a * 2.5),
    ("mul_cscalar", lambda t, o: t.mul_(1 - 2j), lambda a, b: a * (1 - 2j)),
    ("add_cscalar", lambda t, o: t.add_(0.5j), lambda a, b: a + 0.5j),
    ("sub_scalar", lambda t, o: t.sub_(3), lambda a, b: a - 3),
    ("div_scalar", lambda t, o: t.div_(4), lambda a, b: a / 4),
    ("neg_", lambda t, o: t.neg_(), lambda a, b: -a),
    ("exp_", lambda t, o: t.exp_(), lambda a, b: np.exp(a)),
    ("sqrt_", lambda t, o: t.sqrt_(), lambda a, b: np.sqrt(a)),
    ("reciprocal_", lambda t, o: t.reciprocal_(), lambda a, b: 1 / a),
    ("sgn_", lambda t, o: t.sgn_(), lambda a, b: a / np.abs(a)),
    ("conj_physical_", lambda t, o: t.conj_physical_(), lambda a, b: np.conj(a)),
    ("copy_", lambda t, o: t.copy_(o), lambda a, b: b),
    ("copy_real", lambda t, o: t.copy_(o.real), lambda a, b: b.real + 0j),
    ("fill_", lambda t, o: t.fill_(2 - 1j), lambda a, b: np.full_like(a, 2 - 1j)),
    ("zero_", lambda t, o: t.zero_(), lambda a, b: np.zeros_like(a)),
]


@pytest.mark.parametrize("name, fn, ref", INPLACE, ids=[i[0] for i in INPLACE])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_inplace_forward(name, fn, ref, dt):
    a, b = crand(3, 4, dtype=dt), crand(3, 4, dtype=dt)
    t = flow.tensor(a)
    ptr = t.data_ptr()
    r = fn(t, flow.tensor(b))
    assert r.data_ptr() == t.data_ptr() == ptr and t.dtype == flow.tensor(a).dtype
    rtol, atol = tol(dt)
    want = ref(a.astype(np.complex128), b.astype(np.complex128))
    np.testing.assert_allclose(t.numpy(), want, rtol=rtol * 10, atol=atol * 10)


def test_inplace_through_views_and_setitem():
    a = crand(3, 4)
    t = flow.tensor(a)
    t.real.mul_(2)
    t[:, 1].mul_(1j)  # a complex view, in place
    want = a.real * 2 + 1j * a.imag
    want[:, 1] *= 1j
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-14)
    t[0, 2] = 5 - 5j
    t[1] = 0.25j
    t[flow.tensor([2, 0]), flow.tensor([3, 3])] = flow.tensor(np.array([7j, 8.0 + 0j]))
    t[t.real > 100] = 1j  # a bool mask that selects nothing
    t[flow.tensor([True, False, False])] = flow.tensor(np.array([9 + 9j]))
    want[0, 2] = 5 - 5j
    want[1] = 0.25j
    want[2, 3], want[0, 3] = 7j, 8
    want[0] = 9 + 9j
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-14)


def test_inplace_errors():
    z = flow.tensor(crand(3))
    with pytest.raises(TypeError, match=r"\[add_\] result type complex.* can't be cast to .*float"):
        flow.zeros(3, dtype=flow.float64).add_(z)
    with pytest.raises(TypeError, match=r"\[mul_\] result type complex"):
        flow.zeros(3).mul_(1j)
    with pytest.raises(TypeError, match=r"\[abs_\] in-place abs is not supported for complex128"):
        z.abs_()
    with pytest.raises(ValueError, match=r"\[add_\].*doesn't match the broadcast shape"):
        z.add_(flow.tensor(crand(2, 3)))


@pytest.mark.skipif(torch is None, reason="torch not installed")
def test_inplace_autograd_matches_torch():
    a, b = crand(3, 4), crand(3, 4)

    def f(m, x, y):
        # h.mul_(y) / h.div_(y): their gradients read h's old value (complex in-place ops
        # compute from a clone of the target under autograd)
        h = x * 1.5
        h.mul_(y)
        h.div_(y + 3)
        h.add_(y * y)
        h.mul_(1 - 2j)
        h.add_(x.conj(), alpha=2)
        h.div_(3 + 1j)
        h.neg_()
        h.sub_(3j)
        h.conj_physical_()
        h.mul_(2)
        return (h.abs() + h.angle()).sum()

    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    f(torch, tx, ty).backward()
    fx, fy = flow.tensor(a).requires_grad_(), flow.tensor(b).requires_grad_()
    f(flow, fx, fy).backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fy.grad.numpy(), ty.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_inplace_version_counter():
    # the same checks and errors as for real tensors
    x = flow.tensor(crand(3)).requires_grad_()
    with pytest.raises(ValueError, match="leaf tensor that requires grad"):
        x.mul_(2)
    y = x * 2
    v = y._version
    y.add_(1j)
    assert y._version > v
    with pytest.raises(RuntimeError, match="in-place modification of a view that requires grad"):
        y.real.mul_(2)  # in place on a view of a tensor that requires grad: as for real views
    z = y.exp()  # saves its input's parts
    y.mul_(3)
    with pytest.raises(ValueError, match="modified by an in-place operation"):
        z.abs().sum().backward()


# ---- data movement: forward against NumPy, backward against finite differences ---------------

IDX = np.array([2, 0, 2])
MOVES = [
    ("cat", lambda m, t: m.cat([t, t * 2], 0), lambda a: np.concatenate([a, a * 2], 0)),
    ("cat_neg_dim", lambda m, t: m.cat([t, t], -1), lambda a: np.concatenate([a, a], -1)),
    ("cat_real", lambda m, t: m.cat([t, t.real], 1), lambda a: np.concatenate([a, a.real], 1)),
    ("stack", lambda m, t: m.stack([t, t.conj()], 1), lambda a: np.stack([a, a.conj()], 1)),
    ("split", lambda m, t: m.split(t, [1, 2], 0)[1], lambda a: a[1:3]),
    ("chunk", lambda m, t: m.chunk(t, 2, 1)[1], lambda a: a[:, 2:]),
    (
        "index_select",
        lambda m, t: m.index_select(t, 0, m.tensor(IDX)),
        lambda a: a[IDX],
    ),
    (
        "index_select_neg",
        lambda m, t: m.index_select(t, -1, m.tensor(IDX)),
        lambda a: a[:, IDX],
    ),
    (
        "gather",
        lambda m, t: m.gather(t, 1, m.tensor([[0, 3], [1, 1], [2, 0]])),
        lambda a: np.take_along_axis(a, np.array([[0, 3], [1, 1], [2, 0]]), 1),
    ),
    (
        "scatter",
        lambda m, t: m.scatter(t, 0, m.tensor([[2, 0, 1, 2]]), t[:1] * 3),
        lambda a: _np_scatter(a, a[:1] * 3),
    ),
    (
        "scatter_add",
        lambda m, t: m.scatter_add(t, 0, m.tensor([[2, 0, 1, 2]]), t[:1] * 3),
        lambda a: _np_scatter(a, a[:1] * 3, add=True),
    ),
    ("getitem_adv", lambda m, t: t[m.tensor(IDX), 1:], lambda a: a[IDX, 1:]),
    (
        "getitem_pairs",
        lambda m, t: t[m.tensor([0, 2]), m.tensor([3, 1])],
        lambda a: a[[0, 2], [3, 1]],
    ),
    ("getitem_mask", lambda m, t: t[t.real > 0], lambda a: a[a.real > 0]),
    ("getitem_basic", lambda m, t: t[1:, ::2], lambda a: a[1:, ::2]),
    (
        "masked_fill",
        lambda m, t: t.masked_fill(t.imag > 0, 2 - 1j),
        lambda a: np.where(a.imag > 0, 2 - 1j, a),
    ),
    (
        "masked_fill_real",
        lambda m, t: t.masked_fill(t.imag > 0, 4),
        lambda a: np.where(a.imag > 0, 4, a),
    ),
    (
        "where",
        lambda m, t: m.where(t.real > 0, t, t * 1j),
        lambda a: np.where(a.real > 0, a, a * 1j),
    ),
    (
        "where_real",
        lambda m, t: m.where(t.real > 0, t, t.imag),
        lambda a: np.where(a.real > 0, a, a.imag),
    ),
    (
        "where_scalar",
        lambda m, t: m.where(t.real > 0, t, 0.5),
        lambda a: np.where(a.real > 0, a, 0.5),
    ),
    ("flip", lambda m, t: m.flip(t, [0, 1]), lambda a: a[::-1, ::-1]),
    ("flip_neg", lambda m, t: m.flip(t, [-1]), lambda a: a[:, ::-1]),
    ("roll", lambda m, t: m.roll(t, 1, 0), lambda a: np.roll(a, 1, 0)),
    ("roll_flat", lambda m, t: m.roll(t, 5), lambda a: np.roll(a, 5)),
    ("roll_dims", lambda m, t: m.roll(t, (1, -1), (0, 1)), lambda a: np.roll(a, (1, -1), (0, 1))),
    ("transpose", lambda m, t: t.transpose(0, 1) * 1, lambda a: a.T),
    (
        "permute",
        lambda m, t: t[None].permute(2, 0, 1).contiguous(),
        lambda a: a[None].transpose(2, 0, 1),
    ),
    ("reshape", lambda m, t: t.t().reshape(2, 6), lambda a: a.T.reshape(2, 6)),
]


def _np_scatter(a, src, add=False):
    out = a.copy()
    for j, i in enumerate([2, 0, 1, 2]):
        out[i, j] = out[i, j] + src[0, j] if add else src[0, j]
    return out


@pytest.mark.parametrize("name, fn, ref", MOVES, ids=[m[0] for m in MOVES])
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_data_movement_forward(name, fn, ref, dt):
    a = crand(3, 4, dtype=dt)
    got = fn(flow, flow.tensor(a))
    assert got.dtype == flow.tensor(a).dtype
    rtol, atol = tol(dt)
    np.testing.assert_allclose(got.numpy(), ref(a), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, fn, ref", MOVES, ids=[m[0] for m in MOVES])
def test_data_movement_backward(name, fn, ref):
    a = crand(3, 4)
    x = flow.tensor(a).requires_grad_()
    real_loss(fn(flow, x)).backward()
    assert x.grad.dtype == flow.complex128
    fd = fd_grad(lambda z: float(real_loss(fn(flow, flow.tensor(z))).numpy()), a)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name", ["cat", "stack", "gather", "scatter", "getitem_adv", "masked_fill",
                                  "where", "flip", "roll_dims", "index_select"])  # fmt: skip
def test_data_movement_gradients_match_torch(name):
    fn = dict((m[0], m[1]) for m in MOVES)[name]
    a = crand(3, 4)
    tx = torch.tensor(a, requires_grad=True)
    out = fn(torch, tx)
    (out.abs() ** 2 + out.real * out.imag).sum().backward()
    fx = flow.tensor(a).requires_grad_()
    out = fn(flow, fx)
    (out.abs() ** 2 + out.real * out.imag).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_data_movement_errors():
    z = flow.tensor(crand(2, 3))
    with pytest.raises(TypeError, match=r"\[scatter\] can't write the complex128 values"):
        flow.scatter(flow.zeros(2, 3), 0, flow.tensor([[0, 1, 0]]), z)
    with pytest.raises(TypeError, match=r"can't write the complex128 values"):
        x = flow.zeros(2, 3)
        x[flow.tensor([0])] = z[:1]
    with pytest.raises(ValueError, match=r"\[cat\] zero-dimensional"):
        flow.cat([z[0, 0], z[0, 0]])
    with pytest.raises(Exception, match=r"index_select"):
        flow.index_select(z, 2, flow.tensor([0]))


# ---- gradients at exactly 0, as torch 1.13 defines them ---------------------------------------

AT_ZERO = [
    ("abs", lambda t: t.abs()),
    ("sgn", lambda t: t.sgn().real + 2 * t.sgn().imag),
    ("angle", lambda t: t.angle()),
    ("sqrt", lambda t: t.sqrt().real + 2 * t.sqrt().imag),
    ("log", lambda t: t.log().real + 2 * t.log().imag),
    ("square", lambda t: (t * t).real),
    ("pow_half", lambda t: (t**0.5).real),
]


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("name, fn", AT_ZERO, ids=[z[0] for z in AT_ZERO])
def test_gradients_at_zero_match_torch(name, fn):
    a = np.array([0j, 0j, 1e-3 + 0j, -2.0 + 0j, 3j, -0.5j])
    tx = torch.tensor(a, requires_grad=True)
    fn(tx).sum().backward()
    fx = flow.tensor(a).requires_grad_()
    fn(fx).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        fn(fx).detach().numpy(), fn(tx).detach().numpy(), rtol=1e-12, atol=1e-15
    )


# ---- linalg.eig / eigvals (LAPACK zgeev) ------------------------------------------------------


@pytest.mark.parametrize("dt", [np.complex64, np.complex128, np.float32, np.float64])
def test_eig_forward(dt):
    a = (crand(2, 4, 4) if np.iscomplexobj(dt(0)) else RNG.standard_normal((2, 4, 4))).astype(dt)
    L, V = flow.linalg.eig(flow.tensor(a))
    cdt = flow.complex64 if dt in (np.complex64, np.float32) else flow.complex128
    assert L.dtype == cdt and V.dtype == cdt and L.shape == (2, 4) and V.shape == (2, 4, 4)
    Ln, Vn = L.numpy().astype(np.complex128), V.numpy().astype(np.complex128)
    a64 = a.astype(np.complex128)
    tol_ = 1e-4 if cdt == flow.complex64 else 1e-12
    np.testing.assert_allclose(a64 @ Vn, Vn * Ln[:, None, :], atol=tol_ * 10)
    np.testing.assert_allclose(np.linalg.norm(Vn, axis=1), 1, rtol=tol_)
    for k in range(2):  # the same multiset as NumPy's
        want = np.linalg.eigvals(a64[k])
        dist = np.abs(Ln[k][:, None] - want[None, :])
        assert dist.min(axis=1).max() < tol_ * 10 and dist.min(axis=0).max() < tol_ * 10
    np.testing.assert_array_equal(flow.linalg.eigvals(flow.tensor(a)).numpy(), L.numpy())
    eig = flow.linalg.eig(flow.tensor(a))
    assert eig.eigenvalues.shape == (2, 4) and eig.eigenvectors.shape == (2, 4, 4)


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("real", [False, True])
def test_eig_matches_torch_with_gradients(real):
    a = RNG.standard_normal((2, 4, 4)) if real else crand(2, 4, 4)
    losses = [
        lambda L, V: (L.abs() ** 2).sum() + L.real.sum(),
        lambda L, V: V.abs().sum() + (L * L).imag.sum(),
        lambda L, V: (V.conj() * V[..., :1, :]).abs().sum(),  # phase invariant
    ]
    for loss in losses:
        tx = torch.tensor(a, requires_grad=True)
        tL, tV = torch.linalg.eig(tx)
        loss(tL, tV).backward()
        fx = flow.tensor(a).requires_grad_()
        fL, fV = flow.linalg.eig(fx)
        loss(fL, fV).backward()
        if not real:  # (real input: torch's dgeev orders conjugate pairs its own way)
            np.testing.assert_allclose(fL.detach().numpy(), tL.detach().numpy(), atol=1e-12)
            np.testing.assert_allclose(fV.detach().numpy(), tV.detach().numpy(), atol=1e-12)
        assert fx.grad.dtype == (flow.float64 if real else flow.complex128)
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-11)


def test_eigvals_backward_finite_differences():
    a = crand(3, 3)

    def loss(z):
        L = flow.linalg.eigvals(z)
        return (L * L.conj()).real.sum() + (L**3).imag.sum()

    x = flow.tensor(a).requires_grad_()
    loss(x).backward()
    fd = fd_grad(lambda z: float(loss(flow.tensor(z)).numpy()), a)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-5, atol=1e-6)


def test_eig_errors():
    with pytest.raises(ValueError, match=r"\[linalg.eig\] expected a batch of square"):
        flow.linalg.eig(flow.tensor(crand(3, 4)))
    with pytest.raises(TypeError, match=r"\[linalg.eig\] expected a float or complex tensor"):
        flow.linalg.eig(flow.ones(2, 2, dtype=flow.int64))
    x = flow.tensor(crand(3, 3)).requires_grad_()
    _, V = flow.linalg.eig(x)
    with pytest.raises(RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the comp"):
        V.real.sum().backward()  # torch's check, in the gradient formula (as torch's)


def test_isfinite_isinf_isclose_complex():
    z = flow.tensor(np.array([1 + 1j, complex(np.inf, 0), complex(0, np.nan), 2j]))
    assert flow.isfinite(z).numpy().tolist() == [True, False, False, True]
    assert flow.isinf(z).numpy().tolist() == [False, True, False, False]
    assert flow.isnan(z).numpy().tolist() == [False, False, True, False]
