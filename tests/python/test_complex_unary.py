"""Complex inputs of the unary math functions and prod (torch accepts them; they used to raise):
values against numpy complex128, gradients against torch 1.13 (conjugate Wirtinger, as torch),
on points away from the branch cuts, plus huge imaginary parts for tan/tanh."""
import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")

FUNCS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2, "log10": np.log10,
    "exp2": lambda z: np.exp2(z), "rsqrt": lambda z: 1 / np.sqrt(z),
    "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
}  # fmt: skip


def _points(n=24, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-2, 2, n) + 1j * rng.uniform(-2, 2, n)
    # keep clear of the real/imaginary axes, where the inverse functions have their cuts
    z = np.where(np.abs(z.real) < 0.1, z + 0.3, z)
    z = np.where(np.abs(z.imag) < 0.1, z + 0.3j, z)
    return z


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_values_match_numpy(name, dtype):
    z = _points().astype(dtype)
    got = getattr(flow, name)(flow.tensor(z)).numpy()
    want = FUNCS[name](z.astype(np.complex128))
    assert got.dtype == np.dtype(dtype)
    tol = 2e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # the method and the in-place form agree
    t = flow.tensor(z)
    np.testing.assert_allclose(getattr(t, name)().numpy(), got, rtol=tol, atol=tol)
    if hasattr(t, name + "_"):
        getattr(t, name + "_")()
        np.testing.assert_allclose(t.numpy(), got, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_gradients_match_torch(name):
    z = _points(8, seed=1)
    w = _points(8, seed=2)
    x = flow.tensor(z, requires_grad=True)
    (getattr(flow, name)(x) * flow.tensor(w)).real.sum().backward()
    # finite differences of L = Re(sum f(z) w): torch's gradient is dL/da + i dL/db
    f, h = FUNCS[name], 1e-6
    fd = ((f(z + h) - f(z - h)) * w).real / (2 * h) + 1j * (
        (f(z + 1j * h) - f(z - 1j * h)) * w
    ).real / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6, atol=1e-6)
    tx = torch.tensor(z, requires_grad=True)
    try:
        (getattr(torch, name)(tx) * torch.tensor(w)).real.sum().backward()
    except RuntimeError as e:  # torch 1.13 has no complex exp2/expm1/log1p
        assert "not implemented" in str(e) or "does not support" in str(e)
        return
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["tan", "tanh"])
def test_tan_tanh_stay_finite_for_huge_parts(name):
    z = np.array([0.3 + 400j, -0.7 - 800j, 400 + 0.3j, -800 - 0.7j])
    got = getattr(flow, name)(flow.tensor(z)).numpy()
    want = getattr(np, name)(z)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_prod(dim, keepdim):
    z = _points(15, seed=3).reshape(3, 5)
    x = flow.tensor(z, requires_grad=True)
    tx = torch.tensor(z, requires_grad=True)
    if dim is None:
        got, want = flow.prod(x), torch.prod(tx)
    else:
        got, want = flow.prod(x, dim, keepdim=keepdim), torch.prod(tx, dim, keepdim=keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    w = torch.tensor(_points(want.numel(), seed=4).reshape(want.shape))
    (got * flow.tensor(w.numpy())).real.sum().backward()
    (want * w).real.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_prod_empty_and_errors():
    z = flow.zeros(0, 3, dtype=flow.complex64)
    np.testing.assert_array_equal(flow.prod(z, 0).numpy(), np.ones(3, np.complex64))
    with pytest.raises(Exception, match=r"prod.*out of range"):
        flow.prod(flow.zeros(2, dtype=flow.complex64), 3)


@pytest.mark.parametrize("dtype", [flow.complex64, flow.complex128])
def test_eye_complex(dtype):
    e = flow.eye(3, 4, dtype=dtype)
    assert e.dtype == dtype
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 4))


def test_under_vmap_equals_the_loop():
    z = flow.tensor(_points(12, seed=5).reshape(3, 4))
    f = lambda r: (flow.sin(r) * flow.atanh(r) + flow.tanh(r)).prod()  # noqa: E731
    got = flow.func.vmap(f)(z)
    want = flow.stack([f(r) for r in z])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_cumprod(op, dim):
    z = _points(21, seed=6).reshape(3, 7)
    z[1, 2] = 0  # cumprod through an exact zero
    x = flow.tensor(z, requires_grad=True)
    tx = torch.tensor(z, requires_grad=True)
    got, want = getattr(flow, op)(x, dim), getattr(torch, op)(tx, dim)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    w = _points(21, seed=7).reshape(3, 7)
    (got * flow.tensor(w)).real.sum().backward()
    (want * torch.tensor(w)).real.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
