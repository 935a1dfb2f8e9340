"""Embedding options (max_norm, scale_grad_by_freq, padding_idx) and EmbeddingBag (sum/mean/max,
offsets or 2-D input, per_sample_weights, include_last_offset, padding_idx) against PyTorch in
float64: outputs, the weight gradient and, for max_norm, the renormalised weight."""
import numpy as np
import pytest
import torch

import oneflow_like as flow

R = np.random.default_rng(0)
W = R.standard_normal((10, 4)) * 2


def pair(cls, *args, **kw):
    tm = getattr(torch.nn, cls)(*args, **kw).double()
    fm = getattr(flow.nn, cls)(*args, dtype=flow.float64, **kw)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(W))
    fm.weight.data = flow.tensor(W)
    return tm, fm


def check(tm, fm, t_args, f_args):
    ot, of = tm(*t_args), fm(*f_args)
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=1e-10, atol=1e-12)
    up = R.standard_normal(tuple(ot.shape))
    (ot * torch.tensor(up)).sum().backward()
    (of * flow.tensor(up)).sum().backward()
    np.testing.assert_allclose(
        fm.weight.grad.detach().numpy(), tm.weight.grad.detach().numpy(), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(fm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"max_norm": 1.5},
        {"max_norm": 2.0, "norm_type": 1.0},
        {"scale_grad_by_freq": True},
        {"padding_idx": 3},
    ],
)
def test_embedding_options(kw):
    tm, fm = pair("Embedding", 10, 4, **kw)
    idx = np.array([[1, 3, 3, 7], [3, 0, 9, 1]])
    check(tm, fm, [torch.tensor(idx)], [flow.tensor(idx)])


BAGS = [
    ({"mode": "sum"}, "offsets", None),
    ({"mode": "mean"}, "offsets", None),
    ({"mode": "max"}, "offsets", None),
    ({"mode": "sum"}, "offsets", "weights"),
    ({"mode": "mean", "include_last_offset": True}, "offsets", None),
    ({"mode": "mean", "padding_idx": 3}, "offsets", None),
    ({"mode": "max"}, "2d", None),
    ({"mode": "sum", "max_norm": 1.0}, "2d", None),
]


@pytest.mark.parametrize("kw,layout,weights", BAGS, ids=[f"{b[0]}-{b[1]}-{b[2]}" for b in BAGS])
def test_embedding_bag(kw, layout, weights):
    tm, fm = pair("EmbeddingBag", 10, 4, **kw)
    if layout == "2d":
        idx = np.array([[1, 3, 7], [3, 3, 9]])
        t_args, f_args = [torch.tensor(idx)], [flow.tensor(idx)]
    else:
        idx = np.array([1, 3, 3, 7, 3, 0, 9, 1, 4])
        off = (
            np.array([0, 2, 2, 5]) if not kw.get("include_last_offset") else np.array([0, 2, 5, 9])
        )
        t_args, f_args = [torch.tensor(idx), torch.tensor(off)], [
            flow.tensor(idx),
            flow.tensor(off),
        ]
        if weights:
            w = R.standard_normal(len(idx))
            t_args.append(torch.tensor(w))
            f_args.append(flow.tensor(w))
    check(tm, fm, t_args, f_args)


def test_embedding_bag_errors():
    m = flow.nn.EmbeddingBag(10, 4, mode="mean")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        m(flow.tensor([1, 2]), flow.tensor([0]), flow.ones(2))
    with pytest.raises(ValueError, match="offsets has to be a 1D tensor"):
        m(flow.tensor([1, 2]))
