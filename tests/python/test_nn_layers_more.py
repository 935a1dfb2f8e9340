"""Padding, channel dropout, instance norm, Bilinear, distances, ChannelShuffle, AdaptiveAvgPool1d,
Unfold/Fold: against PyTorch in float64 (forward and gradients) where PyTorch 1.13 has them."""
import numpy as np
import pytest
import torch
from op_testing import copy_torch_weights, same_as_torch

import oneflow_like as flow
import oneflow_like.nn.functional as F

R = np.random.default_rng(0)


PADS = [
    ("ConstantPad1d", (2, 1), {"value": 1.5}, (2, 3, 5)),
    ("ConstantPad2d", 1, {"value": -1.0}, (2, 3, 4, 5)),
    ("ConstantPad3d", (1, 0, 2, 1, 0, 1), {"value": 0.5}, (1, 2, 3, 4, 5)),
    ("ZeroPad2d", (1, 2, 0, 1), {}, (2, 3, 4, 5)),
    ("ReflectionPad1d", 2, {}, (2, 3, 5)),
    ("ReflectionPad2d", (1, 2, 2, 1), {}, (2, 3, 4, 5)),
    ("ReplicationPad1d", (3, 1), {}, (2, 3, 5)),
    ("ReplicationPad2d", 2, {}, (2, 3, 4, 5)),
    ("ReplicationPad3d", 1, {}, (1, 2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,padding,kw,shape", PADS, ids=[p[0] for p in PADS])
def test_padding_layers(name, padding, kw, shape):
    same_as_torch(
        getattr(flow.nn, name)(padding, **kw),
        getattr(torch.nn, name)(padding, **kw),
        R.standard_normal(shape),
    )


def test_padding_layers_torch_2_names():
    x = flow.tensor(R.standard_normal((2, 3, 5)))
    np.testing.assert_array_equal(flow.nn.ZeroPad1d(2)(x).numpy(), F.pad(x, (2, 2)).numpy())
    np.testing.assert_array_equal(
        flow.nn.CircularPad1d((1, 2))(x).numpy(),
        np.pad(x.numpy(), ((0, 0), (0, 0), (1, 2)), mode="wrap"),
    )
    with pytest.raises(ValueError, match="padding must be an int or 4 ints"):
        flow.nn.ReflectionPad2d((1, 2, 3))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_channel_dropout(n):
    flow.manual_seed(0)
    m = getattr(flow.nn, f"Dropout{n}d")(p=0.5)
    x = flow.ones(*([8, 16] + [3] * n))
    y = m(x).numpy()
    per_channel = y.reshape(8, 16, -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # whole channels kept or dropped
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.2 < (y == 0).mean() < 0.8
    m.eval()
    assert m(x) is x or np.array_equal(m(x).numpy(), x.numpy())


def test_alpha_dropout_keeps_mean_and_variance():
    flow.manual_seed(0)
    x = flow.randn(200000)
    y = flow.nn.AlphaDropout(0.3).train()(x).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    assert np.array_equal(flow.nn.AlphaDropout(0.3).eval()(x).numpy(), x.numpy())


def _feature_alpha_planes(x, y, p):
    """Per (sample, channel) plane: kept (a*x + b everywhere) or dropped (one constant)."""
    alpha = 1.7580993408473766  # SELU's -scale*alpha, torch's constant
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = alpha * a * p
    axes = tuple(range(2, x.ndim))
    kept = np.isclose(y, a * x + b).all(axis=axes)
    dropped = np.isclose(y, -alpha * a + b).all(axis=axes)
    return kept, dropped


@pytest.mark.parametrize("lib", ["flow", "torch"])
def test_feature_alpha_dropout_one_draw_per_channel(lib):
    """Both libraries: every (n, c) plane is kept or dropped whole, a fraction p dropped, and
    the dropped value and the affine map are torch's; the module's output keeps mean 0 / std 1
    of a standard-normal input."""
    t = flow if lib == "flow" else torch
    t.manual_seed(0)
    p = 0.3
    x = t.randn(400, 50, 3, 4, dtype=t.float64)
    y = t.nn.functional.feature_alpha_dropout(x, p, training=True)
    kept, dropped = _feature_alpha_planes(x.numpy(), y.numpy(), p)
    assert (kept ^ dropped).all()
    assert abs(dropped.mean() - p) < 0.01
    z = t.nn.FeatureAlphaDropout(p).train()(x).numpy()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert t.nn.FeatureAlphaDropout(p).eval()(x) is x


def test_feature_alpha_dropout_gradient_follows_the_mask():
    flow.manual_seed(1)
    x = flow.randn(6, 5, 4, dtype=flow.float64, requires_grad=True)
    p = 0.5
    y = F.feature_alpha_dropout(x, p, training=True)
    y.sum().backward()
    kept, _ = _feature_alpha_planes(x.detach().numpy(), y.detach().numpy(), p)
    a = 1 / np.sqrt((1.7580993408473766**2 * p + 1) * (1 - p))
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to((kept * a)[..., None], x.shape))


def test_feature_alpha_dropout_needs_a_channel_dim():
    with pytest.raises(RuntimeError, match=r"feature_alpha_dropout.*at least 2 dimensions.*\(5,\)"):
        F.feature_alpha_dropout(flow.ones(5), 0.5, training=True)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.nn.functional.feature_alpha_dropout(torch.ones(5), 0.5, training=True)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("affine,track", [(False, False), (True, True)])
def test_instance_norm(n, affine, track):
    tm = getattr(torch.nn, f"InstanceNorm{n}d")(
        3, affine=affine, track_running_stats=track
    ).double()
    fm = getattr(flow.nn, f"InstanceNorm{n}d")(
        3, affine=affine, track_running_stats=track, dtype=flow.float64
    )
    if affine:
        tm.weight.data.uniform_(0.5, 1.5)
        tm.bias.data.uniform_(-0.5, 0.5)
    copy_torch_weights(tm, fm)
    x = R.standard_normal([2, 3] + [4] * n)
    same_as_torch(fm, tm, x)
    if track:
        np.testing.assert_allclose(fm.running_mean.numpy(), tm.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(fm.running_var.numpy(), tm.running_var.numpy(), rtol=1e-12)
        tm.eval(), fm.eval()
        same_as_torch(fm, tm, x)


def test_bilinear_distances_shuffle_pool():
    tm = torch.nn.Bilinear(3, 4, 5).double()
    fm = flow.nn.Bilinear(3, 4, 5, dtype=flow.float64)
    copy_torch_weights(tm, fm)
    same_as_torch(fm, tm, R.standard_normal((6, 3)), R.standard_normal((6, 4)))
    same_as_torch(
        flow.nn.CosineSimilarity(1),
        torch.nn.CosineSimilarity(1),
        R.standard_normal((4, 5)),
        R.standard_normal((4, 5)),
    )
    same_as_torch(
        flow.nn.PairwiseDistance(1.5),
        torch.nn.PairwiseDistance(1.5),
        R.standard_normal((4, 5)),
        R.standard_normal((4, 5)),
    )
    xs = R.standard_normal((2, 6, 2, 2))  # forward only: PyTorch 1.13 cannot differentiate it
    np.testing.assert_array_equal(
        flow.nn.ChannelShuffle(3)(flow.tensor(xs)).numpy(),
        torch.nn.ChannelShuffle(3)(torch.tensor(xs)).numpy(),
    )
    same_as_torch(
        flow.nn.AdaptiveAvgPool1d(3), torch.nn.AdaptiveAvgPool1d(3), R.standard_normal((2, 3, 8))
    )


@pytest.mark.parametrize(
    "kw",
    [
        {"kernel_size": 2},
        {"kernel_size": (2, 3), "stride": 2, "padding": 1},
        {"kernel_size": 3, "dilation": 2},
    ],
)
def test_unfold_fold(kw):
    x = R.standard_normal((2, 3, 7, 8))
    same_as_torch(flow.nn.Unfold(**kw), torch.nn.Unfold(**kw), x)
    cols = torch.nn.Unfold(**kw)(torch.tensor(x)).detach().numpy()
    same_as_torch(flow.nn.Fold((7, 8), **kw), torch.nn.Fold((7, 8), **kw), cols)
    with pytest.raises(RuntimeError, match="number of sliding blocks"):
        F.fold(flow.tensor(cols[:, :, :-1]), (7, 8), **kw)
