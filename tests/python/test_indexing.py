"""Tensor.__getitem__ / __setitem__ against NumPy on many index patterns, views aliasing."""
import numpy as np
import pytest

import oneflow_like as flow

RNG = np.random.default_rng()
SHAPE = (4, 5, 6)


def T(a):
    return flow.tensor(a)


PATTERNS = [
    lambda: 1,
    lambda: -1,
    lambda: (1, 2),
    lambda: (1, -2, 3),
    lambda: slice(1, 3),
    lambda: slice(None, None, 2),
    lambda: (slice(None), slice(4, 0, None), slice(-4, None, 3)),
    lambda: (slice(10, 20),),
    lambda: (Ellipsis, 0),
    lambda: (0, Ellipsis, slice(1, None, 2)),
    lambda: (None, 1, None, slice(None), None),
    lambda: (Ellipsis, None),
    lambda: Ellipsis,
    lambda: (),
    lambda: [0, 2, 2],
    lambda: np.array([[0, 1], [3, -1]]),
    lambda: (slice(None), np.array([4, 0, 1])),
    lambda: (np.array([0, 1]), np.array([2, 3])),
    lambda: (
        np.array([[0], [3]]),
        slice(1, 4),
        np.array([0, 5, 2]),
    ),  # separated: result dims first
    lambda: (slice(None), np.array([[1, 2]]), np.array([[0], [5]])),  # adjacent, broadcast together
    lambda: (1, slice(None), np.array([0, 2])),  # int counts as advanced (NumPy)
    lambda: (Ellipsis, np.array([1, 0])),
    lambda: (None, np.array([1, 2]), None, 0),
    lambda: RNG.uniform(size=SHAPE) > 0.5,
    lambda: RNG.uniform(size=SHAPE[:2]) > 0.5,
    lambda: (slice(None), RNG.uniform(size=SHAPE[1:]) > 0.5),
    lambda: (RNG.permutation([True, True, False, False]), slice(None, None, 2), np.array([1, 3])),
    lambda: True,
    lambda: False,
    lambda: (np.array([], dtype=np.int64),),
]


def as_flow_index(index):
    def conv(i):
        return flow.tensor(i) if isinstance(i, np.ndarray) else i

    return tuple(conv(i) for i in index) if isinstance(index, tuple) else conv(index)


@pytest.mark.parametrize("k", range(len(PATTERNS)))
def test_getitem_matches_numpy(k):
    a = RNG.standard_normal(SHAPE).astype(np.float32)
    index = PATTERNS[k]()
    ref = a[index]
    out = T(a)[as_flow_index(index)]
    assert tuple(out.shape) == ref.shape
    np.testing.assert_array_equal(out.numpy(), ref)


@pytest.mark.parametrize("k", range(len(PATTERNS)))
def test_setitem_matches_numpy(k):
    a = RNG.standard_normal(SHAPE).astype(np.float32)
    index = PATTERNS[k]()
    if (
        isinstance(index, list)
        or (isinstance(index, np.ndarray) and index.dtype != bool)
        or (
            isinstance(index, tuple)
            and any(isinstance(i, np.ndarray) and i.dtype != bool for i in index)
        )
    ):
        pass  # duplicate integer indices: the last write wins in both, so the pattern is fine as is
    shape = a[index].shape
    for value in [
        7.5,
        RNG.standard_normal(shape).astype(np.float32),
        RNG.standard_normal(shape[-1:]).astype(np.float32) if shape else 1.0,
    ]:
        ref = a.copy()
        ref[index] = value
        x = T(a)
        x[as_flow_index(index)] = flow.tensor(value) if isinstance(value, np.ndarray) else value
        np.testing.assert_array_equal(x.numpy(), ref)


def test_views_alias():
    x = flow.zeros(3, 4)
    x[0] += 1
    x[1, ::2] = 5
    v = x[:, 1]
    v.fill_(2)
    x[..., -1] = flow.tensor([7.0, 8.0, 9.0])
    ref = np.zeros((3, 4))
    ref[0] += 1
    ref[1, ::2] = 5
    ref[:, 1] = 2
    ref[..., -1] = [7, 8, 9]
    np.testing.assert_array_equal(x.numpy(), ref)
    y = x[1:, 2:]
    assert y.storage_offset() == 6 and y.stride() == (4, 1) and y.stride(-1) == 1
    y.zero_()
    ref[1:, 2:] = 0
    np.testing.assert_array_equal(x.numpy(), ref)


def test_setitem_broadcast_and_mask():
    x = flow.arange(12).reshape(3, 4).float()
    x[x > 6] = 0
    x[:, flow.tensor([0, 3])] = flow.tensor([[-1.0, -2.0]])
    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    ref[ref > 6] = 0
    ref[:, [0, 3]] = [[-1, -2]]
    np.testing.assert_array_equal(x.numpy(), ref)
    x[[0, 2]] = flow.tensor([1.0, 2.0, 3.0, 4.0])
    ref[[0, 2]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(x.numpy(), ref)


def test_getitem_grad():
    a = RNG.standard_normal((3, 4))
    x = flow.tensor(a, dtype=flow.float64, requires_grad=True)
    (
        x[1:, ::2].sum()
        + x[flow.tensor([0, 0, 2]), 1].sum()
        + x[x > 0].sum()
        + x[-1, None, 3].sum()
    ).backward()
    ref = np.zeros((3, 4))
    ref[1:, ::2] += 1
    ref[[0, 2], 1] += [2, 1]
    ref += a > 0
    ref[-1, 3] += 1
    np.testing.assert_allclose(x.grad.numpy(), ref)


def test_iteration_and_int_like_indices():
    x = flow.arange(6).reshape(2, 3)
    assert [r.tolist() for r in x] == [[0, 1, 2], [3, 4, 5]]
    assert x[np.int64(1), flow.tensor(2)].item() == 5


def test_index_errors():
    x = flow.zeros(3, 4)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dim 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for dim 1 with size 4"):
        x[0, -5]
    with pytest.raises(IndexError, match=r"too many indices"):
        x[0, 0, 0]
    with pytest.raises(ValueError, match=r"step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match=r"mask"):
        x[flow.ones(2, 2, dtype=flow.bool)]
    with pytest.raises(IndexError, match=r"must be long, int or bool"):
        x[flow.tensor([0.5])]
    with pytest.raises(ValueError, match=r"shape mismatch"):
        x[flow.tensor([0, 1])] = flow.zeros(3)
    with pytest.raises(ValueError, match=r"\[copy_\]"):
        x[0] = flow.zeros(3)
    with pytest.raises(IndexError, match=r"index 7 out of range for dim 1 of size 4"):
        x[:, flow.tensor([7])] = 1.0
        flow.sync()
    # the failed write poisons its target (reads raise the same error); the runtime stays usable
    with pytest.raises(IndexError, match=r"\[index_put_\]"):
        x.numpy()
    np.testing.assert_array_equal(flow.zeros(2)[flow.tensor([1])].numpy(), [0])
