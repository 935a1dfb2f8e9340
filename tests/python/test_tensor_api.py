"""The Tensor API a user gets: creation (lists, scalars, NumPy; dtype inference), NumPy and
Python conversions, repr, attributes, .to(), arithmetic/comparison dunders with scalars and
broadcasting, in-place variants, indexing. References are NumPy (and PyTorch's documented
rules where they differ from NumPy's, e.g. Python floats become float32).

Features whose ops do not exist yet are skipped with the missing name as the reason.
"""
import numpy as np
import pytest

import oneflow_like as flow


def need(obj, *names):
    """Skips the test when `obj` (flow or flow.Tensor) lacks one of `names`."""
    for n in names:
        if not hasattr(obj, n):
            where = "flow" if obj is flow else "Tensor"
            pytest.skip(f"{where}.{n}")


def same(t, expected, dtype=None):
    """t's values equal `expected` (array-like); also its dtype when given."""
    a = t.detach().numpy()
    np.testing.assert_allclose(a, np.asarray(expected), rtol=1e-6, atol=1e-6)
    assert tuple(t.shape) == np.asarray(expected).shape
    if dtype is not None:
        assert t.dtype == dtype, f"{t.dtype} != {dtype}"


# --------------------------------------------------------------------------------------------
# creation and dtype inference
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, dtype, shape",
    [
        ([1, 2, 3], flow.int64, (3,)),
        ([1.0, 2.0], flow.float32, (2,)),
        ([1, 2.5], flow.float32, (2,)),  # mixed int/float -> default float
        ([True, False], flow.bool, (2,)),
        ([[1, 2], [3, 4]], flow.int64, (2, 2)),
        ([[[1.5]]], flow.float32, (1, 1, 1)),
        (3, flow.int64, ()),
        (3.5, flow.float32, ()),
        (True, flow.bool, ()),
        ([], flow.float32, (0,)),
    ],
)
def test_tensor_from_python_infers_dtype(data, dtype, shape):
    t = flow.tensor(data)
    assert t.dtype == dtype
    assert tuple(t.shape) == shape
    assert t.ndim == len(shape) and t.dim() == len(shape)
    np.testing.assert_array_equal(t.detach().numpy(), np.array(data).reshape(shape))


@pytest.mark.parametrize(
    "np_dtype, dtype",
    [
        (np.float32, flow.float32),
        (np.float64, flow.float64),
        (np.int32, flow.int32),
        (np.int64, flow.int64),
        (np.uint8, flow.uint8),
        (np.int8, flow.int8),
        (np.bool_, flow.bool),
        (np.float16, flow.float16),
    ],
)
def test_tensor_from_numpy_keeps_dtype(np_dtype, dtype):
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    t = flow.tensor(a)
    assert t.dtype == dtype
    assert t.detach().numpy().dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(t.detach().numpy(), a)


def test_tensor_from_numpy_scalars_and_explicit_dtype():
    assert flow.tensor(np.float32(2.5)).item() == 2.5
    assert flow.tensor(np.int64(3)).dtype == flow.int64
    same(flow.tensor([1, 2], dtype=flow.float64), [1.0, 2.0], flow.float64)
    same(flow.tensor([1.7, -1.7], dtype=flow.int32), [1, -1], flow.int32)  # truncates toward zero
    same(flow.tensor([1, 2, 3], dtype="float32"), [1.0, 2.0, 3.0], flow.float32)
    same(flow.tensor(np.ones((2, 2)), dtype=flow.float32), np.ones((2, 2)), flow.float32)


def test_tensor_copies_its_data():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = flow.tensor(a)
    a[0] = 100.0
    assert t.detach().numpy()[0] == 1.0
    b = flow.tensor(t)  # from a tensor: a copy too, detached
    t.add_(1.0)
    same(b, [1.0, 2.0])
    assert not b.requires_grad


def test_tensor_from_non_contiguous_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    same(flow.tensor(a.T), a.T)
    same(flow.tensor(a[:, ::2]), a[:, ::2])


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(4, dtype=np.float32)
    t = flow.from_numpy(a)
    assert t.dtype == flow.float32 and tuple(t.shape) == (4,)
    a[1] = 10.0
    assert t.detach().numpy()[1] == 10.0  # array -> tensor
    t.mul_(2.0)
    flow.sync()
    np.testing.assert_array_equal(a, [0.0, 20.0, 4.0, 6.0])  # tensor -> array
    del t
    a[0] = 1.0  # the array outlives the tensor


def test_from_numpy_keeps_the_array_alive():
    t = flow.from_numpy(np.full((3,), 7, dtype=np.int64))
    import gc

    gc.collect()
    same(t + 1, [8, 8, 8], flow.int64)


def test_from_numpy_takes_transposes_and_rejects_negative_strides():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(flow.from_numpy(a.T).detach().numpy(), a.T)
    with pytest.raises(ValueError, match="negative"):
        flow.from_numpy(a[::-1])


def test_creation_functions():
    same(flow.zeros(2, 3), np.zeros((2, 3)), flow.float32)
    same(flow.ones((2, 3)), np.ones((2, 3)), flow.float32)
    same(flow.ones([4], dtype=flow.int32), np.ones(4), flow.int32)
    same(flow.full((2,), 3.5), [3.5, 3.5])
    same(flow.zeros_like(flow.ones(2, dtype=flow.int64)), [0, 0], flow.int64)
    same(flow.ones_like(flow.zeros(2, 2)), np.ones((2, 2)))
    same(flow.full_like(flow.zeros(3), 2.0), [2.0, 2.0, 2.0])
    assert tuple(flow.empty(3, 4).shape) == (3, 4)
    t = flow.zeros(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf


# --------------------------------------------------------------------------------------------
# conversions to Python / NumPy
# --------------------------------------------------------------------------------------------


def test_numpy_returns_an_independent_array():
    t = flow.tensor([[1, 2], [3, 4]])
    a = t.detach().numpy()
    assert isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape == (2, 2)
    a[0, 0] = 9
    assert t.detach().numpy()[0, 0] == 1
    np.testing.assert_array_equal(np.asarray(t), [[1, 2], [3, 4]])  # __array__


def test_numpy_of_views():
    t = flow.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(t.t().detach().numpy(), np.arange(6).reshape(2, 3).T)
    np.testing.assert_array_equal(t.transpose(0, 1).detach().numpy(), np.arange(6).reshape(2, 3).T)


def test_item_returns_python_scalars():
    for data, typ in [(2, int), (2.5, float), (True, bool), ([[7]], int), ([1.25], float)]:
        v = flow.tensor(data).item()
        assert type(v) is typ, (data, type(v))
        assert v == np.array(data).reshape(()).item()
    assert float(flow.tensor([2.5])) == 2.5
    assert int(flow.tensor(3)) == 3
    assert bool(flow.tensor([0])) is False and bool(flow.tensor(1.0)) is True


def test_item_needs_one_element():
    with pytest.raises(ValueError, match="item"):
        flow.tensor([1, 2]).item()
    with pytest.raises(ValueError):
        bool(flow.ones(2))


def test_tolist():
    assert flow.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert flow.tensor([0.5, 1.5]).tolist() == [0.5, 1.5]
    assert flow.tensor(3).tolist() == 3
    assert flow.tensor([True]).tolist() == [True]


def test_repr_is_readable():
    assert (
        repr(flow.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
        or repr(flow.tensor([1.0, 2.5])) == "tensor([1. , 2.5])"
    )
    assert repr(flow.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(flow.tensor(3.0)) in ("tensor(3.)", "tensor(3.0000)")
    r = repr(flow.tensor([1, 2], dtype=flow.int32))
    assert r.startswith("tensor([1, 2]") and "int32" in r
    assert "float64" in repr(flow.ones(2, dtype=flow.float64))
    assert "requires_grad=True" in repr(flow.ones(2, requires_grad=True))
    y = flow.ones(2, requires_grad=True) * 2
    assert "grad_fn" in repr(y)
    big = repr(flow.zeros(100, 100))
    assert big.startswith("tensor(") and len(big) < 2000  # summarised, not 10000 numbers
    assert str(flow.tensor([1, 2])) == repr(flow.tensor([1, 2]))


def test_dtype_and_device_objects():
    assert "float32" in repr(flow.float32) and "float32" in str(flow.float32)
    assert flow.float == flow.float32 and flow.double == flow.float64 and flow.long == flow.int64
    assert flow.float32.is_floating_point and not flow.int64.is_floating_point
    assert flow.float64.itemsize == 8
    t = flow.ones(2)
    assert t.device.type == "cpu"
    assert str(t.device) == "cpu"
    assert t.device == flow.device("cpu") and t.device == "cpu"
    assert not t.is_cuda


# --------------------------------------------------------------------------------------------
# attributes and autograd state
# --------------------------------------------------------------------------------------------


def test_shape_and_size():
    t = flow.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4)
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.numel() == 24 and t.ndim == 3 and len(t) == 2
    assert t.element_size() == 4
    assert t.is_contiguous() and not t.transpose(0, 2).is_contiguous()
    with pytest.raises(TypeError):
        len(flow.tensor(1.0))


def test_requires_grad_grad_and_is_leaf():
    x = flow.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    y = (x * x).sum()
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    y.backward()
    same(x.grad, [2.0, 4.0, 6.0])
    assert x.grad.is_leaf and not x.grad.requires_grad
    c = flow.ones(2)
    assert not c.requires_grad and c.is_leaf
    c.requires_grad = True
    assert c.requires_grad
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    with flow.no_grad():
        z = x * 2
    assert not z.requires_grad
    x.grad = None
    assert x.grad is None


def test_requires_grad_needs_floating_point():
    with pytest.raises(TypeError, match="floating"):
        flow.tensor([1, 2]).requires_grad_(True)
    with pytest.raises(TypeError):
        flow.tensor([1, 2], requires_grad=True)


def test_backward_with_gradient_argument():
    x = flow.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).backward(flow.tensor([1.0, 0.5]))
    same(x.grad, [3.0, 1.5])


# --------------------------------------------------------------------------------------------
# .to / casts
# --------------------------------------------------------------------------------------------


def test_to_dtype():
    t = flow.tensor([1.7, -1.7, 0.0])
    same(t.to(flow.int64), [1, -1, 0], flow.int64)
    same(t.to(flow.float64), [1.7, -1.7, 0.0], flow.float64)
    same(t.to(flow.bool), [True, True, False], flow.bool)
    same(t.to("cpu", flow.float64), [1.7, -1.7, 0.0], flow.float64)
    same(t.to(dtype=flow.float16), np.array([1.7, -1.7, 0.0], dtype=np.float16), flow.float16)
    same(flow.tensor([1, 2]).float(), [1.0, 2.0], flow.float32)
    same(flow.tensor([1.5]).double(), [1.5], flow.float64)
    same(flow.tensor([1.5]).long(), [1], flow.int64)
    same(flow.tensor([1.5]).int(), [1], flow.int32)


def test_to_device_cpu():
    t = flow.tensor([1.0, 2.0])
    for u in (t.to("cpu"), t.to(flow.device("cpu")), t.cpu()):
        assert u.device.type == "cpu"
        same(u, [1.0, 2.0])


def test_to_keeps_autograd():
    x = flow.tensor([1.0, 2.0], requires_grad=True)
    x.to(flow.float64).sum().backward()
    same(x.grad, [1.0, 1.0], flow.float32)


def test_to_unknown_dtype_or_device():
    with pytest.raises((TypeError, ValueError)):
        flow.ones(2).to("float99")
    with pytest.raises(ValueError, match="device"):
        flow.ones(2, device="tpu")


# --------------------------------------------------------------------------------------------
# arithmetic and comparison dunders
# --------------------------------------------------------------------------------------------

A = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
B = np.array([2.0, 4.0, -1.5], dtype=np.float32)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("add", lambda x, y: x + y),
        ("sub", lambda x, y: x - y),
        ("mul", lambda x, y: x * y),
        ("truediv", lambda x, y: x / y),
    ],
)
def test_arithmetic_with_broadcasting(name, fn):
    same(fn(flow.tensor(A), flow.tensor(B)), fn(A, B), flow.float32)
    same(fn(flow.tensor(B), flow.tensor(A)), fn(B, A), flow.float32)
    same(fn(flow.tensor(A), 2.0), fn(A, 2.0), flow.float32)
    same(fn(3, flow.tensor(A)), fn(3, A), flow.float32)  # reflected


def test_pow_floordiv_mod():
    t = flow.tensor(A)
    same(t**2, A**2)
    same(2 ** flow.tensor(B), 2.0**B)
    same(flow.tensor(np.abs(A)) ** 0.5, np.abs(A) ** 0.5)
    i = flow.tensor([7, -7, 8])
    need(flow.Tensor, "__floordiv__", "__mod__")
    same(i // 2, [3, -4, 4], flow.int64)  # floor, like Python
    same(i % 3, [1, 2, 2], flow.int64)  # sign of the divisor
    same(flow.tensor([7.5, -7.5]) % 2, [1.5, 0.5], flow.float32)


def test_unary_dunders():
    same(-flow.tensor(A), -A)
    same(abs(flow.tensor(A)), np.abs(A))
    same(~flow.tensor([True, False]), [False, True], flow.bool)


def test_type_promotion_with_python_scalars():
    i = flow.tensor([1, 2])
    same(i + 1, [2, 3], flow.int64)
    same(i + True, [2, 3], flow.int64)
    same(i * 1.5, [1.5, 3.0], flow.float32)  # a float scalar lifts ints to float32
    same(i / 2, [0.5, 1.0], flow.float32)  # true division
    same(flow.tensor([1.0], dtype=flow.float64) * 2, [2.0], flow.float64)
    same(flow.tensor([1, 2], dtype=flow.int32) + 1, [2, 3], flow.int32)
    same(flow.tensor([1, 2]) + flow.tensor([0.5, 0.5]), [1.5, 2.5], flow.float32)
    same(flow.tensor([1.0], dtype=flow.float64) + flow.tensor([1.0]), [2.0], flow.float64)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons(op):
    fn = {
        "eq": lambda x, y: x == y,
        "ne": lambda x, y: x != y,
        "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y,
        "gt": lambda x, y: x > y,
        "ge": lambda x, y: x >= y,
    }[op]
    same(fn(flow.tensor(A), flow.tensor(B)), fn(A, B), flow.bool)
    same(fn(flow.tensor(A), 3.0), fn(A, 3.0), flow.bool)
    same(fn(flow.tensor([1, 2, 3]), 2), fn(np.array([1, 2, 3]), 2), flow.bool)
    same(fn(2, flow.tensor([1, 2, 3])), fn(2, np.array([1, 2, 3])), flow.bool)  # reflected


def test_eq_with_non_tensors():
    assert (flow.tensor([1, 2]) == None) is False  # noqa: E711
    assert (flow.tensor([1, 2]) != "a") is True


def test_bitwise_and_logical_dunders():
    a, b = flow.tensor([True, True, False]), flow.tensor([True, False, False])
    same(a & b, [True, False, False], flow.bool)
    same(a | b, [True, True, False], flow.bool)
    same(a ^ b, [False, True, False], flow.bool)
    same(flow.tensor([12, 10]) & flow.tensor([10, 6]), [8, 2], flow.int64)


def test_matmul_operator():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    same(flow.tensor(a) @ flow.tensor(b), a @ b)
    same(flow.tensor(a) @ flow.tensor(b[:, 0]), a @ b[:, 0])
    same(flow.tensor(b[:, 0]) @ flow.tensor(b[:, 1]), b[:, 0] @ b[:, 1])


def test_methods_mirror_functions():
    t = flow.tensor(A)
    same(t.add(1.0), A + 1)
    same(t.sub(flow.tensor(B)), A - B)
    same(t.mul(2), A * 2)
    same(t.div(flow.tensor(B)), A / B)
    same(t.sum(), A.sum())
    same(t.sum(dim=1), A.sum(axis=1))
    same(t.mean(dim=0, keepdim=True), A.mean(axis=0, keepdims=True))
    same(t.relu(), np.maximum(A, 0))
    same(t.reshape(3, 2), A.reshape(3, 2))
    same(t.view(-1), A.reshape(-1))
    same(t.permute(1, 0), A.T)
    same(t.T, A.T)


# --------------------------------------------------------------------------------------------
# in-place variants
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_inplace_dunders_modify_the_same_tensor(op):
    import operator

    fn = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv}[
        op
    ]
    ref = {"+=": A + B, "-=": A - B, "*=": A * B, "/=": A / B}[op]
    for other in (flow.tensor(B), 2.0):
        t = flow.tensor(A.copy())
        alias, view = t, t.view(-1)
        t = fn(t, other)  # what `t op= other` does
        r = ref if isinstance(other, flow.Tensor) else fn(A.copy(), 2.0)
        same(alias, r)
        same(view, r.reshape(-1))
        assert (
            t is alias
        ), f"`t {op} x` must leave t the same Python object (it rebinds t to what __i*__ returns)"


def test_inplace_dunder_keeps_parameter_class():
    p = flow.nn.Parameter(flow.ones(2))
    q = p
    with flow.no_grad():
        p += 1.0
    same(q, [2.0, 2.0])
    assert p is q and isinstance(p, flow.nn.Parameter)


def test_inplace_methods():
    t = flow.tensor([1.0, -2.0, 3.0])
    t.add_(1.0)
    same(t, [2.0, -1.0, 4.0])
    t.sub_(flow.tensor([1.0, 1.0, 1.0]))
    t.mul_(2)
    t.div_(4)
    same(t, [0.5, -1.0, 1.5])
    t.clamp_(-0.5, 1.0)
    same(t, [0.5, -0.5, 1.0])
    t.relu_()
    same(t, [0.5, 0.0, 1.0])
    t.zero_()
    same(t, [0.0, 0.0, 0.0])
    t.fill_(2.5)
    same(t, [2.5, 2.5, 2.5])
    t.copy_(flow.tensor([1.0, 2.0, 3.0]))
    same(t, [1.0, 2.0, 3.0])
    t.copy_(flow.tensor([7, 8, 9]))  # copy_ casts
    same(t, [7.0, 8.0, 9.0], flow.float32)


def test_inplace_returns_self_for_chaining():
    t = flow.ones(2)
    r = t.add_(1.0).mul_(3.0)
    same(t, [6.0, 6.0])
    same(r, [6.0, 6.0])


def test_inplace_broadcast_target_shape_must_not_change():
    t = flow.ones(3)
    with pytest.raises(ValueError, match=r"add"):
        t += flow.ones(2, 3)
    same(t, [1.0, 1.0, 1.0])
    u = flow.ones(2, 3)
    u += flow.tensor([1.0, 2.0, 3.0])
    same(u, [[2.0, 3.0, 4.0], [2.0, 3.0, 4.0]])


def test_inplace_float_result_into_integer_tensor_raises():
    # PyTorch: "result type Float can't be cast to the desired output type Long".
    for fn in (
        lambda t: t.__itruediv__(2),
        lambda t: t.__imul__(1.5),
        lambda t: t.__iadd__(0.5),
        lambda t: t.add_(flow.tensor([0.5, 0.5])),
    ):
        t = flow.tensor([3, 4])
        with pytest.raises((TypeError, RuntimeError)):
            fn(t)
            flow.sync()
        same(t, [3, 4], flow.int64)


def test_inplace_bumps_version():
    t = flow.ones(2)
    v = t._version
    t.add_(1.0)
    assert t._version > v


# --------------------------------------------------------------------------------------------
# indexing
# --------------------------------------------------------------------------------------------

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        (1, 2),
        (1, 2, 3),
        slice(None),
        slice(1, None),
        (slice(None), 1),
        (slice(None), slice(None, None, 2)),
        (Ellipsis, 1),
        (Ellipsis, slice(1, 3)),
        None,
        (slice(None), None, 1),
        (0, Ellipsis, None),
        (slice(0, 2),),
        (1, slice(None), slice(1, 4, 2)),
    ],
)
def test_basic_indexing(index):
    need(flow.Tensor, "__getitem__")
    same(flow.tensor(X)[index], X[index])


def test_advanced_indexing():
    need(flow.Tensor, "__getitem__")
    t = flow.tensor(X)
    same(t[flow.tensor([1, 0, 1])], X[[1, 0, 1]])
    same(t[:, flow.tensor([2, 0])], X[:, [2, 0]])
    mask = X > 10
    same(t[flow.tensor(mask)], X[mask])
    same(t[0, flow.tensor([True, False, True])], X[0, [True, False, True]])


def test_indexing_gives_views_that_share_memory():
    need(flow.Tensor, "__getitem__", "__setitem__")
    t = flow.tensor(X.copy())
    row = t[1]
    row.add_(100.0)
    ref = X.copy()
    ref[1] += 100
    same(t, ref)


def test_index_assignment():
    need(flow.Tensor, "__setitem__")
    t = flow.tensor(X.copy())
    ref = X.copy()
    t[0] = 5.0
    ref[0] = 5.0
    t[:, 1] = flow.tensor(np.full((2, 4), -1.0, dtype=np.float32))
    ref[:, 1] = -1.0
    t[..., 0] = flow.tensor([7.0, 8.0, 9.0])  # broadcast value
    ref[..., 0] = [7.0, 8.0, 9.0]
    t[t > 20] = 0.0
    ref[ref > 20] = 0.0
    same(t, ref)


def test_indexing_gradient():
    need(flow.Tensor, "__getitem__")
    x = flow.tensor(X.copy(), requires_grad=True)
    (x[1, :, 1:3] * 2).sum().backward()
    g = np.zeros_like(X)
    g[1, :, 1:3] = 2
    same(x.grad, g)


def test_index_out_of_range():
    need(flow.Tensor, "__getitem__")
    with pytest.raises(IndexError):
        flow.tensor(X)[2]
    with pytest.raises(IndexError):
        flow.tensor(X)[0, 0, 0, 0]


def test_iteration():
    need(flow.Tensor, "__getitem__")
    rows = [r.tolist() for r in flow.tensor([[1, 2], [3, 4]])]
    assert rows == [[1, 2], [3, 4]]


def test_new_factories_take_dtype_and_device_from_self():
    x = flow.ones(2, dtype=flow.float64)
    z = x.new_zeros(2, 3)
    assert z.dtype == flow.float64 and z.shape == (2, 3) and z.detach().numpy().sum() == 0
    assert x.new_ones((4,)).tolist() == [1.0] * 4
    f = x.new_full((2,), 7.0, requires_grad=True)
    assert f.tolist() == [7.0, 7.0] and f.requires_grad and f.dtype == flow.float64
    assert x.new_tensor([1, 2]).dtype == flow.float64
    assert x.new_zeros(3, dtype=flow.int64).dtype == flow.int64
    assert x.new_empty(()).shape == ()


def test_shape_is_a_size():
    x = flow.ones(2, 3, 4)
    assert isinstance(x.shape, flow.Size) and isinstance(x.shape, tuple)
    assert x.shape == (2, 3, 4) and x.size() == flow.Size([2, 3, 4]) and x.size(-1) == 4
    assert repr(x.shape) == "oneflow_like.Size([2, 3, 4])" and x.shape.numel() == 24
    assert isinstance(x.shape[1:], flow.Size) and x.shape[0] == 2


def test_top_level_queries():
    assert flow.is_floating_point(flow.ones(1)) and not flow.is_floating_point(flow.tensor([1]))
    assert flow.numel(flow.ones(2, 3)) == 6
    assert flow.get_default_dtype() == flow.tensor([1.0]).dtype == flow.float32


def test_data_ptr_is_the_first_elements_address():
    t = flow.arange(12, dtype=flow.float32).reshape(3, 4)
    base = t.data_ptr()
    assert base == np.from_dlpack(t).ctypes.data and base % 16 == 0
    assert t[1:].data_ptr() == base + 4 * 4 and t[:, 2:].data_ptr() == base + 2 * 4
    assert flow.empty(0).data_ptr() == 0
    assert (t + 1).data_ptr() not in (0, base)


# ---- the copy table (oneflow_like/opdefs/copy.def) ----------------------------------------------
COPY_APIS = {
    "bfloat16": "as_dtype",
    "bool": "as_dtype",
    "cast": "cast",
    "clone": "self",
    "contiguous": "self",
    "copy_": "copy_",
    "cpu": "cpu",
    "cuda": "cuda",
    "double": "as_dtype",
    "float": "as_dtype",
    "half": "as_dtype",
    "int": "as_dtype",
    "long": "as_dtype",
    "to": "to",
    "type_as": "type_as",
}
COPY_SIGS = {  # the arguments as pybind11 names them (unnamed ones are arg0, arg1...)
    "self": ["self"],
    "as_dtype": ["self"],
    "type_as": ["self", "arg0"],
    "to": ["self", "*args", "**kwargs"],
    "cpu": ["self"],
    "cuda": ["self", "device"],
    "copy_": ["self", "arg0"],
    "cast": ["arg0", "arg1"],  # flow._C.cast, the one function
}


def _signature_args(fn, name):
    """The argument names in a pybind11 docstring's first line `name(a: T, *, b: T = d) -> R`."""
    line = fn.__doc__.splitlines()[0]
    assert line.startswith(name + "(") and ") -> " in line, line
    inner = line[len(name) + 1 : line.rindex(") -> ")]
    return [p.split(":")[0].strip() for p in inner.split(", ")]


def test_every_copy_api_is_declared_once_with_the_table_defaults():
    table = flow._C._copy_table()
    apis = {a["name"]: a for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and {n: a["sig"] for n, a in apis.items()} == COPY_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"]) == 4
    assert ops["contiguous"]["attrs"] == {} and ops["cast"]["attrs"] == {"dtype": flow.float32}
    assert ops["copy_"]["attrs"] == {"shape": [], "dtype": flow.float32}
    assert ops["copy_"]["out"] == "target" and ops["to_device"]["attrs"] == {"device": ""}
    assert ops["to_device"]["devices"] == "cross" and ops["to_device"]["layout"] == "contiguous"
    assert all(o["devices"] == "same" and o["layout"] == "strided" for o in table["ops"][:3])
    x = flow.tensor([[1.5, -2.0], [0.0, 3.0]]).transpose(0, 1)  # strided
    for name, api in apis.items():
        fn = getattr(flow._C if api["sig"] == "cast" else flow.Tensor, name)
        fn = getattr(fn, "__wrapped__", fn)  # (contiguous, clone, to take memory_format=: issue 19)
        assert _signature_args(fn, name) == COPY_SIGS[api["sig"]]
        if api["sig"] == "as_dtype":  # the dtype column
            assert getattr(x, name)().dtype == getattr(flow, api["dtype"])
        else:
            assert api["dtype"] == "none"
    assert "device: object = None" in flow.Tensor.cuda.__doc__
    for y in (x.contiguous(), x.clone(), x.cpu(), x.to(flow.float64), flow.cast(x, "float64")):
        np.testing.assert_array_equal(y.detach().numpy(), [[1.5, 0.0], [-2.0, 3.0]])
    assert x.contiguous().is_contiguous() and x.type_as(flow.zeros(1, dtype=flow.int64)).dtype == (
        flow.int64
    )
    y = flow.zeros(2, 2, dtype=flow.float64)
    assert y.copy_(x) is not None and y.tolist() == [[1.5, 0.0], [-2.0, 3.0]]


def test_copy_api_errors_name_the_op():
    with pytest.raises(ValueError, match=r"\[copy_\] source .* cannot be broadcast"):
        flow.zeros(2).copy_(flow.zeros(3, 2))
    with pytest.raises(TypeError, match=r"type_as\(\): incompatible function arguments"):
        flow.zeros(2).type_as(1)
    with pytest.raises(TypeError, match=r"cast\(\): incompatible function arguments"):
        flow._C.cast(flow.zeros(2))
