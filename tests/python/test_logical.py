"""isnan/isinf/isfinite/isclose/allclose/all/any against NumPy."""
import numpy as np
import pytest

import oneflow_like as flow

VALUES = np.array([[1.0, np.nan, np.inf], [-np.inf, 0.0, 1.0 + 1e-7]])


def test_value_tests_match_numpy():
    t = flow.tensor(VALUES)
    np.testing.assert_array_equal(flow.isnan(t).numpy(), np.isnan(VALUES))
    np.testing.assert_array_equal(t.isinf().numpy(), np.isinf(VALUES))
    np.testing.assert_array_equal(flow.isfinite(t).numpy(), np.isfinite(VALUES))
    ints = flow.tensor([1, 2])
    assert flow.isfinite(ints).numpy().all() and not flow.isinf(ints).numpy().any()


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_allclose_match_numpy(equal_nan):
    other = np.ones_like(VALUES)
    other[0, 1], other[0, 2], other[1, 0] = np.nan, np.inf, np.inf
    a, b = flow.tensor(VALUES), flow.tensor(other)
    want = np.isclose(VALUES, other, rtol=1e-5, atol=1e-8, equal_nan=equal_nan)
    np.testing.assert_array_equal(flow.isclose(a, b, equal_nan=equal_nan).numpy(), want)
    assert flow.allclose(a, b, equal_nan=equal_nan) is bool(want.all())
    assert flow.allclose(flow.ones(3), flow.ones(3) + 1e-9)
    assert not flow.allclose(flow.ones(3), flow.ones(3) + 1e-3)
    with pytest.raises(ValueError, match=r"\[isclose\].*rtol=-1"):
        flow.isclose(a, b, rtol=-1)


def test_all_any_with_dims():
    x = np.array([[0, 1, 2], [3, 4, 5]])
    t = flow.tensor(x)
    assert bool(flow.any(t)) and not bool(flow.all(t))
    np.testing.assert_array_equal(t.all(dim=1).numpy(), x.all(1))
    np.testing.assert_array_equal(t.any(0, keepdim=True).numpy(), x.any(0, keepdims=True))


def test_bool_arithmetic_follows_pytorch():
    """bool + bool is logical or, bool * bool logical and (bool results); bool - bool raises."""
    a = flow.tensor([True, False, True, False])
    b = flow.tensor([True, True, False, False])
    s, p = a + b, a * b
    assert s.dtype == flow.bool and p.dtype == flow.bool
    assert s.tolist() == [True, True, True, False] and p.tolist() == [True, False, False, False]
    assert flow.add(a, b, alpha=0).tolist() == a.tolist()
    with pytest.raises(TypeError, match=r"\[sub\] subtraction of bool tensors"):
        a - b
    assert (a + 1).tolist() == [2, 1, 2, 1]  # a Python int still promotes to int64
    c = a.clone()
    c.add_(b)  # in place: the same rules
    assert c.tolist() == s.tolist()
    c.mul_(a)
    assert c.tolist() == [True, False, True, False]
    with pytest.raises(TypeError, match="subtraction of bool tensors"):
        c.sub_(b)

    class G(flow.nn.Graph):  # the same rules inside a compiled graph
        def build(self, x, y):
            return x + y, x * y

    s2, p2 = G()(a, b)
    assert s2.tolist() == s.tolist() and p2.tolist() == p.tolist()
