"""distributions.InverseGamma (PyTorch 2.2; Debian's torch 1.13 lacks it, so the float64
reference is scipy.stats.invgamma): log_prob, cdf, entropy, moments, seeded sample moments,
reparameterised gradients of E[X] = rate / (concentration - 1), shapes and validation."""
import numpy as np
import pytest
from scipy import stats

import oneflow_like as flow
import oneflow_like.distributions as D

A = np.array([3.0, 1.5, 0.8, 5.0])
B = np.array([2.0, 0.5, 1.0, 4.0])


def dist(requires_grad=False):
    a = flow.tensor(A, dtype=flow.float64, requires_grad=requires_grad)
    b = flow.tensor(B, dtype=flow.float64, requires_grad=requires_grad)
    return D.InverseGamma(a, b), a, b


def test_log_prob_cdf_entropy_against_scipy():
    d, a, b = dist(requires_grad=True)
    x = np.array([0.7, 1.3, 0.2, 2.5])
    ref = stats.invgamma(A, scale=B)
    np.testing.assert_allclose(
        d.log_prob(flow.tensor(x)).detach().numpy(), ref.logpdf(x), rtol=1e-12
    )
    np.testing.assert_allclose(d.cdf(flow.tensor(x)).detach().numpy(), ref.cdf(x), rtol=1e-10)
    np.testing.assert_allclose(d.entropy().detach().numpy(), ref.entropy(), rtol=1e-12)
    # d log_prob / d rate = a / rate - 1 / x
    d.log_prob(flow.tensor(x)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), A / B - 1 / x, rtol=1e-12)


def test_moments_mode_and_infinite_cases():
    d, _, _ = dist()
    mean = np.where(A > 1, B / (A - 1), np.inf)
    var = np.where(A > 2, B**2 / ((A - 1) ** 2 * (A - 2)), np.inf)
    np.testing.assert_allclose(d.mean.numpy(), mean)
    np.testing.assert_allclose(d.variance.numpy(), var)
    np.testing.assert_allclose(d.mode.numpy(), B / (A + 1))
    finite = np.isfinite(stats.invgamma(A, scale=B).mean())
    np.testing.assert_allclose(d.mean.numpy()[finite], stats.invgamma(A, scale=B).mean()[finite])


def test_sample_moments_and_shapes():
    flow.manual_seed(0)
    d = D.InverseGamma(flow.tensor(6.0, dtype=flow.float64), flow.tensor(3.0, dtype=flow.float64))
    s = d.sample((40000,))
    assert tuple(s.shape) == (40000,) and bool((s > 0).all())
    np.testing.assert_allclose(s.mean().item(), 3.0 / 5.0, rtol=0.02)
    np.testing.assert_allclose(s.var().item(), 9.0 / (25.0 * 4.0), rtol=0.06)
    d4, _, _ = dist()
    assert tuple(d4.rsample((2, 3)).shape) == (2, 3, 4)
    e = d4.expand((5, 4))
    assert isinstance(e, D.InverseGamma) and tuple(e.batch_shape) == (5, 4)
    assert tuple(e.concentration.shape) == (5, 4)


def test_rsample_gradients_are_reparameterised():
    flow.manual_seed(1)
    a = flow.tensor(4.0, dtype=flow.float64, requires_grad=True)
    b = flow.tensor(2.0, dtype=flow.float64, requires_grad=True)
    D.InverseGamma(a, b).rsample((100000,)).mean().backward()
    # E[X] = b / (a - 1): d/db = 1 / (a - 1), d/da = -b / (a - 1)^2
    np.testing.assert_allclose(b.grad.item(), 1 / 3, rtol=0.03)
    np.testing.assert_allclose(a.grad.item(), -2 / 9, rtol=0.05)


def test_validation():
    with pytest.raises(ValueError, match="concentration"):
        D.InverseGamma(flow.tensor([-1.0]), flow.tensor([1.0]), validate_args=True)
    d = D.InverseGamma(flow.tensor([2.0]), flow.tensor([1.0]), validate_args=True)
    with pytest.raises(ValueError):
        d.log_prob(flow.tensor([-0.5]))
