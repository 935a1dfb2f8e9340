"""Forward/backward of the first op families against float64 NumPy references."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import check_op, rand


@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((), (2, 2))]
)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary(name, shapes):
    a, b = rand(shapes[0]), rand(shapes[1], 0.5, 1.5)
    ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[name]
    check_op(getattr(flow, name), ref, [a, b])


@pytest.mark.parametrize(
    "name,ref", [("neg", np.negative), ("exp", np.exp), ("relu", lambda x: np.maximum(x, 0))]
)
def test_unary(name, ref):
    check_op(getattr(flow, name), ref, [rand((4, 5))])


@pytest.mark.parametrize(
    "dim,keepdim", [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True)]
)
def test_sum_mean(dim, keepdim):
    x = rand((3, 4, 5))
    check_op(
        lambda t: flow.sum(t, dim, keepdim), lambda a: np.sum(a, axis=dim, keepdims=keepdim), [x]
    )
    check_op(
        lambda t: flow.mean(t, dim, keepdim), lambda a: np.mean(a, axis=dim, keepdims=keepdim), [x]
    )


def test_views_and_grad():
    x = rand((2, 3, 4))
    check_op(
        lambda t: t.permute(2, 0, 1).reshape(4, 6) * 2,
        lambda a: a.transpose(2, 0, 1).reshape(4, 6) * 2,
        [x],
    )
    check_op(lambda t: t.transpose(0, 1).sum(0), lambda a: a.transpose(1, 0, 2).sum(0), [x])


def test_scalar_promotion():
    i = flow.tensor([1, 2, 3])
    assert i.dtype == flow.int64
    assert (i + 1).dtype == flow.int64
    assert (i * 2.5).dtype == flow.float32
    assert (i / 2).dtype == flow.float32
    np.testing.assert_allclose((2 - i).numpy(), [1, 0, -1])


def test_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"\[add\].*\[2,3\].*\[4\]"):
        flow.add(flow.zeros(2, 3), flow.zeros(4))
    with pytest.raises(TypeError, match=r"\[exp_\].*s64\[2\]"):  # exp(int) computes in float32
        flow.tensor([1, 2]).exp_()
    with pytest.raises(IndexError, match=r"\[sum\]"):
        flow.sum(flow.zeros(2, 3), 5)


def test_from_numpy_any_positive_strides_share_memory():
    """Slices, transposes and broadcasts come in as strided views of the array (as PyTorch)."""
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for a in [
        base[:, ::2],
        base.T,
        base[1:3, 1:5],
        np.broadcast_to(base[0], (3, 6)),
        base[::2, ::3],
    ]:
        if a.flags.writeable:
            t = flow.from_numpy(a)
        else:
            with pytest.warns(UserWarning, match="not writable"):
                t = flow.from_numpy(a)
        assert tuple(t.shape) == a.shape
        np.testing.assert_array_equal(t.numpy(), a)
        np.testing.assert_array_equal((t * 2).numpy(), a * 2)
    view = base[:, ::2]
    t = flow.from_numpy(view)
    t.add_(100)
    flow.sync()
    assert base[0, 0] == 100 and base[0, 1] == 1 and base[3, 4] == 122  # only the view changed


def test_from_numpy_shares_memory():
    a = np.zeros((2, 2), dtype=np.float32)
    t = flow.from_numpy(a)
    t.add_(1)
    flow.sync()
    np.testing.assert_allclose(a, np.ones((2, 2)))


def test_float_to_narrow_int_casts_wrap_like_pytorch():
    # Through int64, then wrapped (PyTorch's CPU and CUDA results); a direct conversion of an
    # out-of-range float is undefined in C++ and saturates on CUDA.
    x = flow.tensor([-2.0, 300.0, 3.7, -0.5])
    np.testing.assert_array_equal(x.to(flow.uint8).numpy(), [254, 44, 3, 0])
    np.testing.assert_array_equal(x.to(flow.int8).numpy(), [-2, 44, 3, 0])
    np.testing.assert_array_equal(
        flow.tensor([-2.0, 3.5e9]).to(flow.int32).numpy(),
        [-2, np.int32(np.int64(3500000000) - 2**32)],
    )
    try:
        import torch
    except ImportError:
        return
    t = torch.tensor([-2.0, 300.0, 3.7, -0.5])
    np.testing.assert_array_equal(x.to(flow.uint8).numpy(), t.to(torch.uint8).numpy())
