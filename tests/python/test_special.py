"""flow.special: torch.special's names, checked against PyTorch in float64 (forward, gradients)
and eager == lazy; aliases must be the same functions as the ops they name."""
import math

import numpy as np
import pytest
from op_testing import check_op, rand, same_as_torch

import oneflow_like as flow
from oneflow_like import special

torch = pytest.importorskip("torch", reason="Debian python3-torch (the float64 reference)")


def _ref(name):
    def fn(*arrays):
        return getattr(torch.special, name)(*[torch.tensor(a) for a in arrays]).numpy()

    return fn


def _spread(shape):  # both signs, zero and a few tails
    a = rand(shape, -3, 3)
    a.flat[0] = 0.0
    return a


UNARY = [
    ("sinc", lambda s: _spread(s)),
    ("entr", lambda s: rand(s, 0.05, 4)),
    ("ndtr", lambda s: rand(s, -6, 6)),
    ("expit", lambda s: rand(s, -4, 4)),
    ("erf", lambda s: rand(s, -2, 2)),
    ("erfc", lambda s: rand(s, -2, 2)),
    ("expm1", lambda s: rand(s, -2, 2)),
    ("exp2", lambda s: rand(s, -2, 2)),
    ("log1p", lambda s: rand(s, -0.9, 2)),
    ("gammaln", lambda s: rand(s, 0.1, 8)),
    ("digamma", lambda s: rand(s, 0.1, 8)),
    ("psi", lambda s: rand(s, 0.1, 8)),
    ("erfinv", lambda s: rand(s, -0.9, 0.9)),
]


@pytest.mark.parametrize("name,sample", UNARY, ids=[u[0] for u in UNARY])
def test_unary_against_torch_float64(name, sample):
    x = sample((3, 5))
    check_op(getattr(special, name), _ref(name), [x])
    # PyTorch's trigamma (digamma's gradient) truncates its series at ~1e-10 relative.
    tol = 1e-8 if name in ("digamma", "psi") else 1e-10
    same_as_torch(getattr(special, name), getattr(torch.special, name), x, tol=tol)


@pytest.mark.parametrize("name", ["xlog1py", "xlogy"])
def test_binary_against_torch_float64(name):
    x, y = rand((3, 4), -2, 2), rand((3, 4), 0.1, 3)
    check_op(getattr(special, name), _ref(name), [x, y])
    if name == "xlog1py":  # at x == 0 the gradients are PyTorch's too (d/dx = log1p(y))
        x[0, :2] = 0.0
    same_as_torch(getattr(special, name), getattr(torch.special, name), x, y)


def test_special_values_match_torch():
    vals = np.array([0.0, -0.0, 1.0, -2.0, math.inf, -math.inf, math.nan, 1e-30, -40.0, 40.0])
    for name in ("sinc", "entr", "ndtr", "expit", "gammaln", "digamma", "erfinv"):
        ours = getattr(special, name)(flow.tensor(vals)).numpy()
        ref = getattr(torch.special, name)(torch.tensor(vals)).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-300, err_msg=name)
    x = torch.tensor([0.0, 0.0, 1.0, 2.0])
    y = torch.tensor([-1.0, math.nan, 0.0, math.inf])
    ours = special.xlog1py(flow.tensor(x.numpy()), flow.tensor(y.numpy())).numpy()
    np.testing.assert_array_equal(ours, torch.special.xlog1py(x, y).numpy())
    np.testing.assert_allclose(special.xlog1py(2.0, flow.tensor([1.0])).numpy(), [2 * math.log(2)])


def test_reductions_and_aliases():
    x = rand((3, 4), -2, 2)
    t, f = torch.tensor(x), flow.tensor(x)
    np.testing.assert_allclose(
        special.logsumexp(f, 1, keepdim=True).numpy(), torch.special.logsumexp(t, 1, keepdim=True)
    )
    np.testing.assert_allclose(special.softmax(f, 0).numpy(), torch.special.softmax(t, 0))
    out = special.log_softmax(flow.tensor(x, dtype=flow.float32), 1, dtype=flow.float64)
    assert out.dtype == flow.float64
    np.testing.assert_allclose(out.numpy(), torch.special.log_softmax(t, 1), rtol=1e-6)
    z = rand((4,), 0.01, 0.99)
    np.testing.assert_allclose(
        special.logit(flow.tensor(z), eps=0.1).numpy(), torch.special.logit(torch.tensor(z), 0.1)
    )
    np.testing.assert_allclose(special.round(f).numpy(), torch.special.round(t))


def test_under_mock_torch():
    from oneflow_like import mock_torch

    with mock_torch.enable():
        import torch as mocked
        import torch.special as sp

        assert sp.expit is special.expit and mocked.special.sinc is special.sinc
        with pytest.raises(AttributeError, match="torch.special.*polygamma"):
            sp.polygamma
