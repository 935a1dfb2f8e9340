"""nn.init: every initialiser's defining property (bounds, moments, exact structure), the
gain table, generator= reproducibility and the deprecated aliases."""
import math
from statistics import NormalDist
import warnings

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F
from oneflow_like.nn import init


def big(*shape):
    return flow.empty(*shape)


def test_uniform_normal_constant():
    t = init.uniform_(big(400, 500), -2.0, 3.0).detach().numpy()
    assert t.min() >= -2.0 and t.max() < 3.0 and abs(t.mean() - 0.5) < 0.02
    t = init.normal_(big(400, 500), 1.5, 0.5).detach().numpy()
    assert abs(t.mean() - 1.5) < 0.005 and abs(t.std() - 0.5) < 0.005
    assert (init.constant_(big(3), 2.5).detach().numpy() == 2.5).all()
    assert (init.ones_(big(2)).detach().numpy() == 1).all() and (
        init.zeros_(big(2)).detach().numpy() == 0
    ).all()


def test_erfinv_matches_the_normal_quantile():
    z = np.array([-0.999999, -0.9, -0.3, 0.0, 0.2, 0.75, 0.99999])
    got = init._erfinv(flow.tensor(z, dtype=flow.float64)).detach().numpy()
    want = [NormalDist().inv_cdf((v + 1) / 2) / math.sqrt(2) for v in z]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-14)  # erf's own rounding at the tails


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, 0.5, 6.0)])
def test_trunc_normal_has_the_truncated_distribution(mean, std, a, b):
    t = np.sort(
        init.trunc_normal_(big(200000), mean, std, a, b).detach().numpy().astype(np.float64)
    )
    assert t.min() >= a and t.max() <= b
    nd = NormalDist(mean, std)
    lo, hi = nd.cdf(a), nd.cdf(b)
    cdf = (np.array([nd.cdf(v) for v in t[::100]]) - lo) / (hi - lo)
    empirical = (np.arange(0, len(t), 100) + 1) / len(t)
    assert np.abs(cdf - empirical).max() < 0.01  # Kolmogorov-Smirnov distance


def test_xavier_and_kaiming_bounds_and_spread():
    w = big(256, 128, 3)  # fan_in 384, fan_out 768
    a = math.sqrt(6.0 / (384 + 768))
    v = init.xavier_uniform_(w, gain=2.0).detach().numpy()
    assert np.abs(v).max() <= 2 * a and np.abs(v).max() > 1.9 * a
    v = init.xavier_normal_(w).detach().numpy()
    assert abs(v.std() - math.sqrt(2.0 / (384 + 768))) < 0.002
    bound = math.sqrt(3.0) * math.sqrt(2.0) / math.sqrt(768)
    v = init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu").detach().numpy()
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.98 * bound
    v = init.kaiming_normal_(w, a=0.2).detach().numpy()
    assert abs(v.std() - math.sqrt(2.0 / 1.04) / math.sqrt(384)) < 0.002
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(big(5))


def test_eye_dirac_orthogonal_sparse():
    np.testing.assert_array_equal(init.eye_(big(3, 5)).detach().numpy(), np.eye(3, 5))
    w = init.dirac_(big(6, 3, 3, 3), groups=2)
    x = flow.randn(2, 6, 5, 5)
    y = F.conv2d(x, w, padding=1, groups=2)
    np.testing.assert_allclose(y[:, :3].detach().numpy(), x[:, :3].detach().numpy(), atol=1e-6)
    for shape in [(4, 7), (7, 4), (3, 2, 2)]:
        q = init.orthogonal_(big(*shape), gain=2.0).detach().numpy().reshape(shape[0], -1)
        small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4.0 * np.eye(len(small)), atol=1e-5)
    s = init.sparse_(big(10, 6), sparsity=0.3, std=0.5).detach().numpy()
    assert ((s == 0).sum(0) == 3).all()
    with pytest.raises(ValueError, match=r"\[eye_\] Only tensors with 2 dimensions"):
        init.eye_(big(2, 2, 2))


def test_generator_makes_draws_reproducible():
    def draw(seed):
        g = flow.Generator().manual_seed(seed)
        return [
            init.kaiming_uniform_(big(4, 3), generator=g).detach().numpy(),
            init.trunc_normal_(big(5), generator=g).detach().numpy(),
            init.orthogonal_(big(3, 3), generator=g).detach().numpy(),
        ]

    for a, b in zip(draw(7), draw(7)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(draw(7)[0], draw(8)[0])
    g = flow.Generator().manual_seed(3)
    state = g.get_state()
    first = init.normal_(big(4), generator=g).detach().numpy()
    g.set_state(state)
    np.testing.assert_array_equal(init.normal_(big(4), generator=g).detach().numpy(), first)
    assert g.initial_seed() == 3


def test_calculate_gain_and_deprecated_aliases():
    assert init.calculate_gain("conv_transpose2d") == 1.0
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity swish"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        init.xavier_uniform(big(3, 3))
    assert any("deprecated" in str(x.message) for x in w)


def test_layers_initialise_through_init():
    lin = nn.Linear(30, 20)
    bound = 1 / math.sqrt(30)
    assert (
        np.abs(lin.weight.detach().numpy()).max() <= bound
        and np.abs(lin.bias.detach().numpy()).max() <= bound
    )
