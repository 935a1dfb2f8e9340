"""Every loss of nn.functional / nn against a float64 NumPy reference of PyTorch's documented
formula (each reduction), its gradient against central differences, and its module form."""
import math

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F
from op_testing import check_backward

RNG = np.random.default_rng(7)
N, C = 5, 4


def reduce_np(x, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction](x)


def t64(a, requires_grad=False):
    t = flow.tensor(np.asarray(a, dtype=np.float64), dtype=flow.float64)
    t.requires_grad = requires_grad
    return t


def logsig(x):
    return -np.logaddexp(0, -x)


def softplus(x):
    return np.logaddexp(0, x)


# name -> (function, inputs builder, NumPy reference, indices of differentiable inputs, kwargs)
def _pm1(shape):
    return np.where(RNG.uniform(size=shape) < 0.5, -1.0, 1.0)


def _cases():
    x, y = RNG.standard_normal((N, C)), RNG.standard_normal((N, C))
    p01 = RNG.uniform(0.05, 0.95, (N, C))
    y01 = RNG.uniform(0, 1, (N, C))
    logp = np.log(RNG.dirichlet(np.ones(C), N))
    tprob = RNG.dirichlet(np.ones(C), N)
    tprob[0, 1] = 0.0  # 0 log 0 = 0
    counts = RNG.poisson(2.0, (N, C)).astype(np.float64)
    pos = RNG.uniform(0.2, 2.0, (N, C))
    cls = RNG.integers(0, C, N)
    d = lambda a, b: np.abs(a - b)  # noqa: E731
    return {
        "l1": (F.l1_loss, [x, y], lambda a, b: d(a, b), {}),
        "mse": (F.mse_loss, [x, y], lambda a, b: (a - b) ** 2, {}),
        "smooth_l1": (
            F.smooth_l1_loss,
            [x, y],
            lambda a, b, beta: np.where(
                d(a, b) < beta, 0.5 * d(a, b) ** 2 / beta, d(a, b) - 0.5 * beta
            ),
            {"beta": 0.7},
        ),
        "huber": (
            F.huber_loss,
            [x, y],
            lambda a, b, delta: np.where(
                d(a, b) < delta, 0.5 * d(a, b) ** 2, delta * (d(a, b) - 0.5 * delta)
            ),
            {"delta": 0.6},
        ),
        "bce": (
            F.binary_cross_entropy,
            [p01, y01],
            lambda a, b: -(b * np.log(a) + (1 - b) * np.log(1 - a)),
            {},
        ),
        "bce_weight": (
            lambda a, b, w, **kw: F.binary_cross_entropy(a, b, weight=w, **kw),
            [p01, y01, RNG.uniform(0.5, 2, (C,))],
            lambda a, b, w: -w * (b * np.log(a) + (1 - b) * np.log(1 - a)),
            {},
        ),
        "bce_logits_pos_weight": (
            lambda a, b, pw, **kw: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw, **kw),
            [x, y01, RNG.uniform(0.5, 3, (C,))],
            lambda a, b, pw: -(pw * b * logsig(a) + (1 - b) * logsig(-a)),
            {},
        ),
        "kl_div": (
            F.kl_div,
            [logp, tprob],
            lambda a, b: np.where(b > 0, b * np.log(np.where(b > 0, b, 1)), 0) - b * a,
            {},
        ),
        "kl_div_log_target": (
            F.kl_div,
            [logp, np.log(RNG.dirichlet(np.ones(C), N))],
            lambda a, b, log_target: np.exp(b) * (b - a),
            {"log_target": True},
        ),
        "margin_ranking": (
            F.margin_ranking_loss,
            [x[:, 0], y[:, 0], _pm1(N)],
            lambda a, b, t, margin: np.maximum(0, -t * (a - b) + margin),
            {"margin": 0.3},
        ),
        "hinge_embedding": (
            F.hinge_embedding_loss,
            [x, _pm1((N, C))],
            lambda a, t, margin: np.where(t == 1, a, np.maximum(0, margin - a)),
            {"margin": 0.8},
        ),
        "soft_margin": (
            F.soft_margin_loss,
            [x, _pm1((N, C))],
            lambda a, t: softplus(-t * a),
            {},
        ),
        "multilabel_soft_margin": (
            lambda a, t, w, **kw: F.multilabel_soft_margin_loss(a, t, weight=w, **kw),
            [x, (y01 > 0.5).astype(np.float64), RNG.uniform(0.5, 2, (C,))],
            lambda a, t, w: -(w * (t * logsig(a) + (1 - t) * logsig(-a))).mean(1),
            {},
        ),
        "multi_margin_p1": (
            lambda a, **kw: F.multi_margin_loss(a, flow.tensor(cls, device=a.device), **kw),
            [x],
            lambda a, margin: _multi_margin_np(a, cls, 1, margin, None),
            {"margin": 0.9},
        ),
        "multi_margin_p2_weight": (
            lambda a, w, **kw: F.multi_margin_loss(
                a, flow.tensor(cls, device=a.device), p=2, weight=w, **kw
            ),
            [x, RNG.uniform(0.5, 2, (C,))],
            lambda a, w: _multi_margin_np(a, cls, 2, 1.0, w),
            {},
        ),
        "cosine_embedding": (
            F.cosine_embedding_loss,
            [x, y, _pm1(N)],
            lambda a, b, t, margin: np.where(
                t == 1, 1 - _cos_np(a, b), np.maximum(0, _cos_np(a, b) - margin)
            ),
            {"margin": 0.1},
        ),
        "triplet_margin": (
            F.triplet_margin_loss,
            [x, y, RNG.standard_normal((N, C))],
            lambda a, p, n, margin, p_norm=2: np.maximum(
                0, _pdist_np(a, p, 2) - _pdist_np(a, n, 2) + margin
            ),
            {"margin": 1.5},
        ),
        "triplet_margin_p1_swap": (
            F.triplet_margin_loss,
            [x, y, RNG.standard_normal((N, C))],
            lambda a, p, n, p_, swap: np.maximum(
                0,
                _pdist_np(a, p, 1) - np.minimum(_pdist_np(a, n, 1), _pdist_np(p, n, 1)) + 1.0,
            ),
            {"p": 1, "swap": True},
        ),
        "poisson_nll": (
            F.poisson_nll_loss,
            [x, counts],
            lambda a, t: np.exp(a) - t * a,
            {},
        ),
        "poisson_nll_full_nolog": (
            F.poisson_nll_loss,
            [pos, counts],
            lambda a, t, log_input, full: a
            - t * np.log(a + 1e-8)
            + np.where(
                t > 1,
                t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * math.pi * np.maximum(t, 1)),
                0,
            ),
            {"log_input": False, "full": True},
        ),
        "gaussian_nll_full": (
            F.gaussian_nll_loss,
            [x, y, pos],
            lambda a, b, v, full: 0.5 * (np.log(v) + (a - b) ** 2 / v) + 0.5 * np.log(2 * math.pi),
            {"full": True},
        ),
        "cross_entropy_probs_smooth": (
            F.cross_entropy,
            [x, tprob],
            lambda a, t, label_smoothing: -(
                (t * (1 - label_smoothing) + label_smoothing / C) * _log_softmax_np(a)
            ).sum(1),
            {"label_smoothing": 0.2},
        ),
    }


def _log_softmax_np(a):
    m = a.max(1, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(1, keepdims=True))


def _cos_np(a, b):
    return (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))


def _pdist_np(a, b, p):
    return (np.abs(a - b + 1e-6) ** p).sum(-1) ** (1.0 / p)


def _multi_margin_np(a, cls, p, margin, w):
    out = np.zeros(a.shape[0])
    for n in range(a.shape[0]):
        y = cls[n]
        for i in range(a.shape[1]):
            if i != y:
                z = max(0.0, margin - a[n, y] + a[n, i]) ** p
                out[n] += z * (w[y] if w is not None else 1.0)
    return out / a.shape[1]


CASES = _cases()
# Inputs that carry a gradient in PyTorch (targets of sign/index kind do not).
GRAD_INPUTS = {
    "kl_div": [0],  # the target has an entry at 0, where t log t has no derivative
    "margin_ranking": [0, 1],
    "hinge_embedding": [0],
    "soft_margin": [0],
    "multilabel_soft_margin": [0],
    "cosine_embedding": [0, 1],
    "bce_weight": [0, 1],
    "bce_logits_pos_weight": [0, 1],
    "multi_margin_p2_weight": [0],
    "poisson_nll": [0],
    "poisson_nll_full_nolog": [0],
    "cross_entropy_probs_smooth": [0, 1],
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_forward(name, reduction):
    fn, arrays, ref, kw = CASES[name]
    out = fn(*[t64(a) for a in arrays], reduction=reduction, **kw)
    ref_kw = {("p_" if k == "p" else k): v for k, v in kw.items()}
    expected = reduce_np(ref(*arrays, **ref_kw), reduction)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_backward(name):
    fn, arrays, _, kw = CASES[name]
    check_backward(
        lambda *ts: fn(*ts, reduction="none", **kw),
        arrays,
        grad_inputs=GRAD_INPUTS.get(name),
        atol=1e-6,
        rtol=1e-5,
    )


def test_kl_div_batchmean_and_gradient_at_zero_target():
    logp = t64(np.log(RNG.dirichlet(np.ones(C), N)), requires_grad=True)
    t = RNG.dirichlet(np.ones(C), N)
    t[:, 0] = 0.0
    tt = t64(t, requires_grad=True)
    out = F.kl_div(logp, tt, reduction="batchmean")
    ref = (
        np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0) - t * logp.detach().numpy()
    ).sum() / N
    np.testing.assert_allclose(out.item(), ref, rtol=1e-10)
    out.backward()
    assert np.isfinite(tt.grad.detach().numpy()).all()
    np.testing.assert_allclose(logp.grad.detach().numpy(), -t / N, rtol=1e-10)


def test_cross_entropy_weight_ignore_index_label_smoothing():
    x = RNG.standard_normal((6, C))
    y = np.array([0, 3, 1, -100, 2, 1])
    w = RNG.uniform(0.5, 2.0, C)
    ls = 0.1
    out = F.cross_entropy(t64(x), flow.tensor(y), weight=t64(w), label_smoothing=ls)
    lsm = _log_softmax_np(x)
    keep = y != -100
    yk = np.where(keep, y, 0)
    nll = -lsm[np.arange(6), yk] * w[yk] * keep
    smooth = -(lsm * w).sum(1) * keep
    denom = (w[yk] * keep).sum()
    ref = (1 - ls) * nll.sum() / denom + ls / C * smooth.sum() / denom
    np.testing.assert_allclose(out.item(), ref, rtol=1e-7)
    out_none = F.cross_entropy(t64(x), flow.tensor(y), ignore_index=-100, reduction="none")
    np.testing.assert_allclose(out_none.detach().numpy(), -lsm[np.arange(6), yk] * keep, rtol=1e-7)


def test_nll_loss_spatial_and_module_forms():
    x = RNG.standard_normal((2, C, 3))
    y = RNG.integers(0, C, (2, 3))
    lsm = x - np.log(np.exp(x).sum(1, keepdims=True))
    ref = -np.take_along_axis(lsm, y[:, None, :], 1).mean()
    np.testing.assert_allclose(nn.CrossEntropyLoss()(t64(x), flow.tensor(y)).item(), ref, 1e-7)
    np.testing.assert_allclose(nn.NLLLoss()(t64(lsm), flow.tensor(y)).item(), ref, 1e-7)


MODULES = [
    (nn.L1Loss, "l1", {}),
    (nn.MSELoss, "mse", {}),
    (nn.SmoothL1Loss, "smooth_l1", {"beta": 0.7}),
    (nn.HuberLoss, "huber", {"delta": 0.6}),
    (nn.BCELoss, "bce", {}),
    (nn.KLDivLoss, "kl_div", {}),
    (nn.MarginRankingLoss, "margin_ranking", {"margin": 0.3}),
    (nn.HingeEmbeddingLoss, "hinge_embedding", {"margin": 0.8}),
    (nn.SoftMarginLoss, "soft_margin", {}),
    (nn.CosineEmbeddingLoss, "cosine_embedding", {"margin": 0.1}),
    (nn.TripletMarginLoss, "triplet_margin", {"margin": 1.5}),
    (nn.PoissonNLLLoss, "poisson_nll", {}),
    (nn.GaussianNLLLoss, "gaussian_nll_full", {"full": True}),
]


@pytest.mark.parametrize("cls,name,kw", MODULES, ids=[m[0].__name__ for m in MODULES])
def test_loss_modules_match_functional(cls, name, kw):
    fn, arrays, _, fkw = CASES[name]
    ins = [t64(a) for a in arrays]
    for reduction in ("sum", "none"):
        m = cls(reduction=reduction, **kw)
        np.testing.assert_allclose(
            m(*ins).detach().numpy(),
            fn(*ins, reduction=reduction, **fkw).detach().numpy(),
            rtol=1e-12,
        )


def test_weighted_loss_modules():
    x, y = RNG.standard_normal((N, C)), (RNG.uniform(size=(N, C)) > 0.5).astype(np.float64)
    w = t64(RNG.uniform(0.5, 2, C))
    cls = flow.tensor(RNG.integers(0, C, N))
    np.testing.assert_allclose(
        nn.MultiLabelSoftMarginLoss(weight=w)(t64(x), t64(y)).item(),
        F.multilabel_soft_margin_loss(t64(x), t64(y), weight=w).item(),
    )
    np.testing.assert_allclose(
        nn.MultiMarginLoss(p=2, margin=0.5, weight=w)(t64(x), cls).item(),
        _multi_margin_np(x, cls.detach().numpy(), 2, 0.5, w.detach().numpy()).mean(),
    )
    pw = t64(RNG.uniform(0.5, 2, C))
    np.testing.assert_allclose(
        nn.BCEWithLogitsLoss(pos_weight=pw, reduction="sum")(t64(x), t64(y)).item(),
        -(pw.detach().numpy() * y * logsig(x) + (1 - y) * logsig(-x)).sum(),
    )


def test_legacy_flags_and_triplet_with_distance():
    x, y = t64(RNG.standard_normal((N, C))), t64(RNG.standard_normal((N, C)))
    np.testing.assert_allclose(
        F.l1_loss(x, y, size_average=False).item(), F.l1_loss(x, y, reduction="sum").item()
    )
    assert F.mse_loss(x, y, reduce=False).shape == (N, C)
    assert nn.L1Loss(reduce=False)(x, y).shape == (N, C)
    n = t64(RNG.standard_normal((N, C)))
    custom = F.triplet_margin_with_distance_loss(
        x, y, n, distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.5
    )
    cos = lambda a, b: (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))  # noqa: E731
    ref = np.maximum(
        0,
        (1 - cos(x.detach().numpy(), y.detach().numpy()))
        - (1 - cos(x.detach().numpy(), n.detach().numpy()))
        + 0.5,
    )
    np.testing.assert_allclose(custom.item(), ref.mean(), rtol=1e-10)
    default = nn.TripletMarginWithDistanceLoss()(x, y, n)
    np.testing.assert_allclose(default.item(), F.triplet_margin_loss(x, y, n).item(), rtol=1e-12)


def _multilabel_margin_np(x, t):
    out = np.zeros(x.shape[0])
    for n in range(x.shape[0]):
        targets = []
        for j in t[n]:
            if j < 0:
                break
            targets.append(j)
        for j in targets:
            for i in range(x.shape[1]):
                if i not in targets:
                    out[n] += max(0.0, 1.0 - (x[n, j] - x[n, i]))
    return out / x.shape[1]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss(reduction):
    x = RNG.standard_normal((3, C))
    t = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 0, 0]])
    got = F.multilabel_margin_loss(t64(x), flow.tensor(t), reduction=reduction)
    np.testing.assert_allclose(
        got.detach().numpy(), reduce_np(_multilabel_margin_np(x, t), reduction)
    )
    m = nn.MultiLabelMarginLoss(reduction=reduction)
    np.testing.assert_allclose(m(t64(x), flow.tensor(t)).detach().numpy(), got.detach().numpy())
    check_backward(
        lambda a: F.multilabel_margin_loss(a, flow.tensor(t), reduction="none"),
        [x],
        atol=1e-6,
        rtol=1e-5,
    )
    one = F.multilabel_margin_loss(t64(x[0]), flow.tensor(t[0]), reduction=reduction)
    np.testing.assert_allclose(
        one.detach().numpy(), reduce_np(_multilabel_margin_np(x[:1], t[:1]), reduction).reshape(())
    )
    with pytest.raises(ValueError, match=r"\[multilabel_margin_loss\] target class 9"):
        F.multilabel_margin_loss(t64(x), flow.tensor(np.full((3, C), 9)))


def test_loss_errors_name_the_function_and_values():
    x = t64(RNG.uniform(0.1, 0.9, (N, C)))
    with pytest.raises(ValueError, match=r"\[binary_cross_entropy\].*\(5, 3\).*\(5, 4\)"):
        F.binary_cross_entropy(x, t64(np.zeros((N, 3))))
    with pytest.raises(ValueError, match=r"\[smooth_l1_loss\] reduction.*'avg'"):
        F.smooth_l1_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match=r"\[MSELoss\] reduction.*'bad'"):
        nn.MSELoss(reduction="bad")
    with pytest.raises(ValueError, match=r"\[gaussian_nll_loss\] var is of incorrect size"):
        F.gaussian_nll_loss(x, x, t64(np.ones((2, 2))))
    with pytest.raises(ValueError, match=r"\[gaussian_nll_loss\] var has negative"):
        F.gaussian_nll_loss(x, x, -x)
    with pytest.raises(ValueError, match=r"\[multi_margin_loss\].*p == 3|got 3"):
        F.multi_margin_loss(x, flow.tensor([0] * N), p=3)
    with pytest.raises(ValueError, match=r"\[huber_loss\] delta"):
        F.huber_loss(x, x, delta=0.0)


def test_gaussian_nll_shared_variance_shapes():
    x, y = RNG.standard_normal((N, C)), RNG.standard_normal((N, C))
    v = RNG.uniform(0.5, 2, N)
    for var in (v, v[:, None]):
        vv = t64(var, requires_grad=True)
        out = F.gaussian_nll_loss(t64(x), t64(y), vv)
        ref = (0.5 * (np.log(v[:, None]) + (x - y) ** 2 / v[:, None])).mean()
        np.testing.assert_allclose(out.item(), ref, rtol=1e-10)
        out.backward()
        g = (0.5 * (1 / v[:, None] - (x - y) ** 2 / v[:, None] ** 2)).sum(1) / (N * C)
        np.testing.assert_allclose(vv.grad.detach().numpy().reshape(-1), g, rtol=1e-8)
