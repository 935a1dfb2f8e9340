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
