"""Ops composed from other ops, against PyTorch in float64 (forward and every gradient) and
eager == nn.Graph: einsum / tensordot / diagonal, ConvTranspose1d/2d, F.interpolate and Upsample,
PixelShuffle / PixelUnshuffle."""
import numpy as np
import pytest
import torch
from op_testing import FnGraph, copy_torch_weights, same_as_torch

import oneflow_like as flow
import oneflow_like.nn.functional as F

RNG = np.random.default_rng(0)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]),
    ("i,i,i->", [(5,), (5,), (5,)]),
    ("iij->j", [(3, 3, 4)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("ba", [(2, 3)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(eq, shapes):
    arrays = [RNG.standard_normal(s) for s in shapes]
    same_as_torch(lambda *xs: flow.einsum(eq, *xs), lambda *xs: torch.einsum(eq, *xs), *arrays)


def test_einsum_errors_graph_tensordot_diagonal():
    with pytest.raises(ValueError, match="2 operand subscripts"):
        flow.einsum("ij,jk->ik", flow.ones(2, 2))
    with pytest.raises(RuntimeError, match="subscript 'j' has size 4 for one operand and 3"):
        flow.einsum("ij,jk->ik", flow.ones(2, 3), flow.ones(4, 2))
    with pytest.raises(ValueError, match="output subscript 'z'"):
        flow.einsum("ij->z", flow.ones(2, 3))
    a, b = flow.tensor(RNG.standard_normal((3, 4))), flow.tensor(RNG.standard_normal((4, 5)))
    fn = lambda x, y: flow.einsum("ij,jk->ik", x, y)  # noqa: E731
    np.testing.assert_allclose(
        FnGraph(fn)(a, b).detach().numpy(), fn(a, b).detach().numpy(), rtol=1e-12
    )
    x = RNG.standard_normal((3, 4, 5))
    same_as_torch(
        lambda t: flow.tensordot(t, t, dims=([1, 2], [1, 2])),
        lambda t: torch.tensordot(t, t, dims=([1, 2], [1, 2])),
        x,
    )
    y = RNG.standard_normal((5, 2))
    same_as_torch(lambda t, u: flow.tensordot(t, u, 1), lambda t, u: torch.tensordot(t, u, 1), x, y)
    for off, d1, d2 in [(0, 0, 1), (1, 1, 2), (-2, 2, 0), (7, 0, 1)]:
        same_as_torch(lambda t: t.diagonal(off, d1, d2), lambda t: t.diagonal(off, d1, d2), x)


CONV_T = [
    {},
    {"stride": 2},
    {"stride": 2, "padding": 1, "output_padding": 1},
    {"stride": 3, "padding": 2, "dilation": 2},
    {"groups": 2, "stride": 2, "bias": False},
    {"padding": 3},
]


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("kw", CONV_T, ids=[str(k) for k in CONV_T])
def test_conv_transpose(n, kw):
    cls = f"ConvTranspose{n}d"
    tm = getattr(torch.nn, cls)(4, 6, 3, **kw).double()
    fm = getattr(flow.nn, cls)(4, 6, 3, dtype=flow.float64, **kw)
    assert tuple(fm.weight.shape) == tuple(tm.weight.shape)
    copy_torch_weights(tm, fm)
    x = RNG.standard_normal((2, 4, 5, 6)[: n + 2])
    same_as_torch(fm, tm, x)
    tp = dict(tm.named_parameters())
    for name, p in fm.named_parameters():
        np.testing.assert_allclose(
            p.grad.detach().numpy(), tp[name].grad.detach().numpy(), rtol=1e-10, atol=1e-10
        )
    xf = flow.tensor(x)
    np.testing.assert_allclose(
        FnGraph(fm)(xf).detach().numpy(), fm(xf).detach().numpy(), rtol=1e-12, atol=1e-12
    )


def test_conv_transpose_output_size_and_errors():
    m = flow.nn.ConvTranspose2d(4, 6, 3, stride=2)
    assert tuple(m(flow.randn(1, 4, 5, 5), output_size=(12, 12)).shape) == (1, 6, 12, 12)
    with pytest.raises(ValueError, match="valid sizes are 11 to 12"):
        m(flow.randn(1, 4, 5, 5), output_size=(14, 14))
    with pytest.raises(RuntimeError, match=r"input has 3 channels"):
        m(flow.randn(1, 3, 5, 5))


INTERP = [
    {"scale_factor": 2},
    {"size": (8, 3)},
    {"scale_factor": 1.7},
    {"size": (3, 4), "mode": "nearest-exact"},
    {"size": (8, 11), "mode": "bilinear"},
    {"size": (8, 11), "mode": "bilinear", "align_corners": True},
    {"scale_factor": 0.6, "mode": "bilinear"},
    {"scale_factor": 2.5, "mode": "bilinear", "recompute_scale_factor": True},
    {"scale_factor": 2, "mode": "bicubic"},
    {"size": (3, 11), "mode": "bicubic", "align_corners": True},
    {"scale_factor": 0.6, "mode": "bicubic"},
    {"size": (3, 4), "mode": "area"},
    {"scale_factor": 0.5, "mode": "area"},
    {"size": (3, 4), "mode": "bilinear", "antialias": True},
    {"scale_factor": 0.4, "mode": "bicubic", "antialias": True, "align_corners": True},
    {"size": (9, 16), "mode": "bicubic", "antialias": True},
]


@pytest.mark.parametrize("kw", INTERP, ids=[str(k) for k in INTERP])
def test_interpolate(kw):
    x = RNG.standard_normal((2, 3, 5, 7))
    same_as_torch(
        lambda t: F.interpolate(t, **kw),
        lambda t: torch.nn.functional.interpolate(t, **kw),
        x,
    )


def test_interpolate_linear_modules_graph_and_errors():
    x1 = RNG.standard_normal((2, 3, 9))
    same_as_torch(
        lambda t: F.interpolate(t, scale_factor=1.5, mode="linear"),
        lambda t: torch.nn.functional.interpolate(t, scale_factor=1.5, mode="linear"),
        x1,
    )
    x = RNG.standard_normal((1, 2, 4, 5))
    for fm, tm in [
        (
            flow.nn.Upsample(scale_factor=2, mode="bilinear"),
            torch.nn.Upsample(scale_factor=2, mode="bilinear"),
        ),
        (flow.nn.UpsamplingNearest2d(size=(7, 3)), torch.nn.UpsamplingNearest2d(size=(7, 3))),
        (
            flow.nn.UpsamplingBilinear2d(scale_factor=3),
            torch.nn.UpsamplingBilinear2d(scale_factor=3),
        ),
    ]:
        same_as_torch(fm, tm, x)
    up = flow.nn.Upsample(size=(9, 9), mode="bilinear")
    xf = flow.tensor(x)
    np.testing.assert_allclose(
        FnGraph(up)(xf).detach().numpy(), up(xf).detach().numpy(), rtol=1e-12
    )
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(xf, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="mode 'bilinear' expects a 4-D input"):
        F.interpolate(flow.ones(1, 2, 3), size=4, mode="bilinear")
    with pytest.raises(NotImplementedError, match="mode 'lanczos' is not supported"):
        F.interpolate(xf, size=3, mode="lanczos")
    with pytest.raises(NotImplementedError, match="Anti-alias option is only supported"):
        F.interpolate(xf, size=3, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(xf, size=3, mode="area", align_corners=True)
    cubic = flow.nn.Upsample(scale_factor=2, mode="bicubic")
    np.testing.assert_allclose(
        FnGraph(cubic)(xf).detach().numpy(), cubic(xf).detach().numpy(), rtol=1e-12
    )


def test_pixel_shuffle():
    x = RNG.standard_normal((2, 8, 3, 5))
    same_as_torch(flow.nn.PixelShuffle(2), torch.nn.PixelShuffle(2), x)
    y = RNG.standard_normal((2, 2, 4, 6))
    same_as_torch(flow.nn.PixelUnshuffle(2), torch.nn.PixelUnshuffle(2), y)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(flow.ones(1, 3, 2, 2), 2)
