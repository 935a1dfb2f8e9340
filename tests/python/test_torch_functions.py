"""torch.* top-level functions of python/oneflow_like/_torch_functions.py against PyTorch
(Debian's torch 1.13) on the same inputs: conversion, shape helpers, dtype queries, windows,
elementwise helpers (with gradients), linear algebra spellings, and the nn.functional / in-place
method spellings torch exposes at the top level."""

import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")


def T(a):
    return torch.tensor(np.asarray(a))


def test_as_tensor_shares_memory_and_converts():
    a = np.arange(6, dtype=np.float32)
    t = flow.as_tensor(a)
    a[0] = 42
    assert t[0].item() == 42  # a view of the array, as torch.as_tensor
    x = flow.ones(3)
    assert flow.as_tensor(x) is x
    assert flow.as_tensor(x, dtype=flow.float64).dtype == flow.float64
    assert flow.as_tensor([1, 2]).dtype == flow.int64
    c = flow.asarray(x, copy=True)
    c.fill_(5)
    assert x.sum().item() == 3
    with pytest.raises(ValueError, match=r"\[asarray\] copy=False"):
        flow.asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match=r"\[asarray\] copy=False"):
        flow.asarray(np.ones(3, dtype=np.float32), dtype=flow.float64, copy=False)
    arr = np.zeros(3, dtype=np.float32)
    flow.asarray(arr, copy=False).fill_(1.0)
    assert arr.sum() == 3.0  # shared
    flow.asarray(arr, copy=True).fill_(2.0)
    assert arr.sum() == 3.0  # copied
    assert flow.asarray(x, requires_grad=True).requires_grad
    assert flow.as_tensor(x, device=x.device) is x  # a device object, as torch accepts


def test_device_from_a_device_or_an_index():
    import torch

    d = flow.device("cpu")
    assert flow.device(d) == d and flow.device(d) == "cpu"
    for i in (0, 1):
        assert str(flow.device(i)) == str(torch.device(i))
    with pytest.raises(Exception, match="device"):
        flow.device(-1)


@pytest.mark.filterwarnings("ignore:torch.range is deprecated")
def test_range_is_inclusive_and_float():
    np.testing.assert_allclose(flow.range(1, 4).numpy(), torch.range(1, 4).numpy())
    np.testing.assert_allclose(flow.range(0, 1, 0.25).numpy(), torch.range(0, 1, 0.25).numpy())
    assert flow.range(1, 4).dtype == flow.float32


def test_shape_helpers_match_torch():
    a = np.arange(24).reshape(2, 3, 4)
    for dims in [(2,), (2, 1, 3), (2, 2, 1, 1)]:
        np.testing.assert_array_equal(
            flow.tile(flow.tensor(a), dims).numpy(), T(a).tile(dims).numpy()
        )
    np.testing.assert_array_equal(flow.tensor(a).ravel().numpy(), T(a).ravel().numpy())
    np.testing.assert_array_equal(
        flow.unflatten(flow.tensor(a), 2, (2, -1)).numpy(), T(a).unflatten(2, (2, -1)).numpy()
    )
    with pytest.raises(ValueError, match=r"\[unflatten\]"):
        flow.unflatten(flow.tensor(a), 1, (2, 2))
    r = np.array([1, 0, 3])
    for args, kw in [((2,), {}), ((T(r),), {"dim": 1}), ((2,), {"dim": 0})]:
        targs = args
        fargs = tuple(flow.tensor(x.numpy()) if isinstance(x, torch.Tensor) else x for x in args)
        want = torch.repeat_interleave(T(a), *targs, **kw).numpy()
        np.testing.assert_array_equal(
            flow.repeat_interleave(flow.tensor(a), *fargs, **kw).numpy(), want
        )
    np.testing.assert_array_equal(
        flow.repeat_interleave(flow.tensor(r)).numpy(), torch.repeat_interleave(T(r)).numpy()
    )
    assert flow.is_same_size(flow.ones(2, 3), flow.zeros(2, 3))
    assert not flow.is_same_size(flow.ones(2, 3), flow.zeros(3, 2))


def test_repeat_interleave_gradient():
    x = flow.tensor([1.0, 2.0, 3.0], requires_grad=True)
    flow.repeat_interleave(x, flow.tensor([2, 0, 1])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 1.0])


def test_dtype_queries_match_torch():
    for d, td in [
        (flow.float32, torch.float32),
        (flow.float64, torch.float64),
        (flow.float16, torch.float16),
        (flow.bfloat16, torch.bfloat16),
    ]:
        f, tf = flow.finfo(d), torch.finfo(td)
        for k in ("bits", "eps", "max", "min", "tiny", "resolution"):
            assert getattr(f, k) == pytest.approx(getattr(tf, k), rel=1e-12), (d, k)
    for d, td in [(flow.int32, torch.int32), (flow.uint8, torch.uint8), (flow.int64, torch.int64)]:
        i, ti = flow.iinfo(d), torch.iinfo(td)
        assert (i.bits, i.max, i.min) == (ti.bits, ti.max, ti.min)
    with pytest.raises(TypeError, match=r"\[finfo\]"):
        flow.finfo(flow.int32)
    pairs = [
        ("int32", "float32"),
        ("int64", "int32"),
        ("bool", "int64"),
        ("float16", "float32"),
        ("bool", "bool"),
        ("int8", "float64"),
    ]
    for a, b in pairs:
        got = flow.promote_types(getattr(flow, a), getattr(flow, b))
        assert (
            str(got).split(".")[-1]
            == str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]
        )
    assert flow.result_type(flow.ones(3, dtype=flow.int64), 2.5) == flow.float32
    assert flow.result_type(flow.tensor(1.0, dtype=flow.float64), flow.ones(3)) == flow.float32
    assert (
        flow.result_type(flow.ones(3, dtype=flow.int32), flow.ones(2, dtype=flow.int64))
        == flow.int64
    )
    for a, b in [
        ("int32", "uint8"),
        ("float64", "float16"),
        ("float32", "int32"),
        ("int64", "bool"),
        ("bool", "float32"),
    ]:
        assert flow.can_cast(getattr(flow, a), getattr(flow, b)) == torch.can_cast(
            getattr(torch, a), getattr(torch, b)
        ), (a, b)


@pytest.mark.parametrize(
    "name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
)
def test_windows_match_torch(name):
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            got = getattr(flow, name)(n, periodic).numpy()
            want = getattr(torch, name)(n, periodic).numpy()
            np.testing.assert_allclose(
                got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} {n} {periodic}"
            )
    assert flow.hann_window(4, dtype=flow.float64).dtype == flow.float64


def test_elementwise_helpers_match_torch_with_gradients():
    a = np.array([-2.5, -1.0, 0.0, 0.3, 1.0, 4.0])
    x = flow.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    flow.sinc(x).sum().backward()
    torch.sinc(tx).sum().backward()
    np.testing.assert_allclose(
        flow.sinc(x).detach().numpy(), torch.sinc(tx).detach().numpy(), rtol=1e-12
    )
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    v = np.array([1.0, -np.inf, np.inf, np.nan, 0.0])
    np.testing.assert_array_equal(
        flow.isposinf(flow.tensor(v)).numpy(), torch.isposinf(T(v)).numpy()
    )
    np.testing.assert_array_equal(
        flow.isneginf(flow.tensor(v)).numpy(), torch.isneginf(T(v)).numpy()
    )
    np.testing.assert_array_equal(flow.isreal(flow.tensor(v)).numpy(), torch.isreal(T(v)).numpy())
    np.testing.assert_allclose(
        flow.ldexp(flow.tensor([1.0, 3.0]), flow.tensor([2, -1])).numpy(),
        torch.ldexp(T([1.0, 3.0]), T([2, -1])).numpy(),
    )
    p = flow.ones(2)
    assert flow.positive(p) is p


def test_linear_algebra_spellings_match_torch():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((4, 4))
    np.testing.assert_allclose(
        flow.matrix_power(flow.tensor(m), 3).numpy(),
        torch.matrix_power(T(m), 3).numpy(),
        rtol=1e-10,
    )
    r = rng.standard_normal((5, 3))
    np.testing.assert_allclose(
        flow.pinverse(flow.tensor(r)).numpy(), torch.pinverse(T(r)).numpy(), rtol=1e-8, atol=1e-10
    )
    u, s, v = flow.svd(flow.tensor(r))
    assert tuple(u.shape) == (5, 3) and tuple(v.shape) == (3, 3)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, r, atol=1e-10)
    np.testing.assert_allclose(s.numpy(), torch.svd(T(r)).S.numpy(), rtol=1e-10)
    uf, _, vf = flow.svd(flow.tensor(r), some=False)
    assert tuple(uf.shape) == (5, 5)
    assert float(flow.svd(flow.tensor(r), compute_uv=False).U.abs().sum()) == 0.0
    a, b = rng.standard_normal(6), rng.standard_normal(6)
    assert flow.vdot(flow.tensor(a), flow.tensor(b)).item() == pytest.approx(float(np.dot(a, b)))
    mats = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)]]
    np.testing.assert_allclose(
        flow.chain_matmul(*[flow.tensor(x) for x in mats]).numpy(),
        mats[0] @ mats[1] @ mats[2],
        rtol=1e-10,
    )
    np.testing.assert_array_equal(flow.fill(flow.ones(2), 3.0).numpy(), [3.0, 3.0])


def test_top_level_spellings_of_functional_ops_and_methods():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6)).astype(np.float32)
    np.testing.assert_allclose(
        flow.celu(flow.tensor(x), 0.5).numpy(), torch.celu(T(x), 0.5).numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(
        flow.cosine_similarity(flow.tensor(x), flow.tensor(x[::-1].copy()), dim=2).numpy(),
        torch.cosine_similarity(T(x), T(x[::-1].copy()), dim=2).numpy(),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        flow.adaptive_avg_pool1d(flow.tensor(x), 3).numpy(),
        torch.adaptive_avg_pool1d(T(x), 3).numpy(),
        rtol=1e-6,
    )
    vals, idx = flow.adaptive_max_pool1d(flow.tensor(x), 3)
    tvals, tidx = torch.adaptive_max_pool1d(T(x), 3)
    np.testing.assert_allclose(vals.numpy(), tvals.numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    img = rng.standard_normal((1, 8, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(
        flow.pixel_shuffle(flow.tensor(img), 2).numpy(), torch.pixel_shuffle(T(img), 2).numpy()
    )
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    xi = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        flow.conv_transpose2d(flow.tensor(xi), flow.tensor(w), stride=2).numpy(),
        torch.conv_transpose2d(T(xi), T(w), stride=2).numpy(),
        rtol=1e-4,
        atol=1e-5,
    )
    t = flow.tensor([-1.0, 0.5, 3.0])
    flow.clamp_min_(t, 0.0)
    flow.clamp_max_(t, 1.0)
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.5, 1.0])
    flow.zero_(t)
    assert t.sum().item() == 0.0
    flow.fill_(t, 2.0)
    assert t.sum().item() == 6.0
    d = flow.detach(flow.ones(2, requires_grad=True))
    assert not d.requires_grad


def test_multinomial_draws_by_weight():
    w = flow.tensor([1.0, 0.0, 3.0, 6.0])
    p = np.array([0.1, 0.0, 0.3, 0.6])
    flow.manual_seed(0)
    a = flow.multinomial(w, 20000, replacement=True)
    assert a.dtype == flow.int64 and tuple(a.shape) == (20000,)
    np.testing.assert_allclose(np.bincount(a.numpy(), minlength=4) / 20000, p, atol=0.02)
    flow.manual_seed(0)
    np.testing.assert_array_equal(flow.multinomial(w, 20000, replacement=True).numpy(), a.numpy())
    # without replacement: distinct, never a zero weight; the first draw follows the weights
    rows = w.unsqueeze(0).repeat(4000, 1)
    s = flow.multinomial(rows, 3).numpy()
    assert (np.sort(s, axis=1) == [0, 2, 3]).all()
    np.testing.assert_allclose(np.bincount(s[:, 0], minlength=4) / 4000, p, atol=0.03)
    g = flow.Generator()
    g.manual_seed(7)
    first = flow.multinomial(w, 2, generator=g).numpy()
    g.manual_seed(7)
    np.testing.assert_array_equal(flow.multinomial(w, 2, generator=g).numpy(), first)
    with pytest.raises(ValueError, match=r"\[multinomial\] cannot draw 4 samples"):
        flow.multinomial(w, 4)
    with pytest.raises(ValueError, match=r"\[multinomial\] weights must be finite"):
        flow.multinomial(flow.tensor([1.0, -1.0]), 1)
    assert tuple(w.multinomial(2, True).shape) == (2,)


def test_gcd_lcm_copysign_match_torch():
    a = np.array([12, -18, 0, 7, 0, 2**40])
    b = np.array([8, 27, 5, 0, 0, 6])
    np.testing.assert_array_equal(
        flow.gcd(flow.tensor(a), flow.tensor(b)).numpy(), torch.gcd(T(a), T(b)).numpy()
    )
    np.testing.assert_array_equal(
        flow.lcm(flow.tensor(a), flow.tensor(b)).numpy(), torch.lcm(T(a), T(b)).numpy()
    )
    np.testing.assert_array_equal(
        flow.tensor(a).gcd(flow.tensor([6])).numpy(), torch.gcd(T(a), T([6])).numpy()
    )
    with pytest.raises(TypeError, match=r"\[gcd\] expects integer tensors"):
        flow.gcd(flow.ones(2), flow.ones(2))
    x, y = np.array([1.0, -2.0, 3.0, 0.0]), np.array([-0.0, 1.0, -1.0, -5.0])
    got = flow.copysign(flow.tensor(x), flow.tensor(y)).numpy()
    want = torch.copysign(T(x), T(y)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(flow.copysign(flow.tensor([1, 2]), -1.0).numpy(), [-1.0, -2.0])


def test_set_printoptions():
    t = flow.tensor([1.123456789, 2.0, 3e-5])
    try:
        flow.set_printoptions(precision=2)
        assert "1.12" in repr(t) and "1.123" not in repr(t)
        flow.set_printoptions(threshold=5, edgeitems=2)
        assert repr(flow.arange(10)) == "tensor([0, 1,  ..., 8, 9])"  # torch's two spaces
        flow.set_printoptions(profile="full")
        assert "..." not in repr(flow.arange(2000))
        flow.set_printoptions(profile="default", sci_mode=True)
        assert "1.1235e+00" in repr(t)
        with pytest.raises(ValueError, match=r"\[set_printoptions\] profile"):
            flow.set_printoptions(profile="long")
    finally:
        flow.set_printoptions(profile="default")
    # back to the default printing, which is torch's
    assert repr(t) == "tensor([1.1235e+00, 2.0000e+00, 3.0000e-05])"
    assert repr(flow.tensor([0.5, 2.0])) == "tensor([0.5000, 2.0000])"
