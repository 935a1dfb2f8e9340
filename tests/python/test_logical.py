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
