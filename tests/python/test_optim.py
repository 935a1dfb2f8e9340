"""Optimizers against their update rules written in NumPy (float64), optimizer state_dict round
trips, and the lr schedulers against closed forms (and torch.optim when Debian's torch is there)."""
import math

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
from oneflow_like import optim
from oneflow_like.optim import lr_scheduler as lrs

RNG = np.random.default_rng(1)
SHAPES = [(3, 4), (5,)]


def make_params():
    init = [RNG.standard_normal(s) for s in SHAPES]
    params = [nn.Parameter(flow.tensor(a.astype(np.float32))) for a in init]
    return params, [a.astype(np.float32).astype(np.float64) for a in init]


def set_grads(params, grads):
    """p.grad = g for each pair, through backward of sum(p * g)."""
    for p in params:
        p.grad = None
    loss = None
    for p, g in zip(params, grads):
        term = (p * flow.tensor(g.astype(np.float32))).sum()
        loss = term if loss is None else loss + term
    loss.backward()


def run(opt_cls, ref_step, steps=5, **kw):
    params, ref = make_params()
    opt = opt_cls(params, **kw)
    state = [dict() for _ in ref]
    for t in range(1, steps + 1):
        grads = [RNG.standard_normal(s).astype(np.float32).astype(np.float64) for s in SHAPES]
        set_grads(params, grads)
        opt.step()
        for i, g in enumerate(grads):
            ref[i] = ref_step(ref[i], g, state[i], t, **kw)
    for p, r in zip(params, ref):
        np.testing.assert_allclose(p.numpy(), r, rtol=1e-5, atol=1e-6)
    return opt, params


def ref_sgd(p, g, s, t, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    g = g + weight_decay * p
    if momentum:
        s["buf"] = g.copy() if t == 1 else momentum * s["buf"] + (1 - dampening) * g
        g = g + momentum * s["buf"] if nesterov else s["buf"]
    return p - lr * g


def ref_adam(
    p,
    g,
    s,
    t,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    decoupled=False,
):
    b1, b2 = betas
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    v = s["v"]
    if amsgrad:
        s["vmax"] = np.maximum(s.get("vmax", 0), v)
        v = s["vmax"]
    mhat = s["m"] / (1 - b1**t)
    vhat = v / (1 - b2**t)
    return p - lr * mhat / (np.sqrt(vhat) + eps)


def ref_adamw(p, g, s, t, **kw):
    return ref_adam(p, g, s, t, decoupled=True, **kw)


def ref_rmsprop(
    p, g, s, t, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False
):
    g = g + weight_decay * p
    s["v"] = alpha * s.get("v", 0) + (1 - alpha) * g * g
    avg = s["v"]
    if centered:
        s["ga"] = alpha * s.get("ga", 0) + (1 - alpha) * g
        avg = avg - s["ga"] ** 2
    avg = np.sqrt(avg) + eps
    if momentum:
        s["buf"] = momentum * s.get("buf", 0) + g / avg
        return p - lr * s["buf"]
    return p - lr * g / avg


@pytest.mark.parametrize(
    "kw",
    [
        dict(lr=0.1),
        dict(lr=0.1, momentum=0.9),
        dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
        dict(lr=0.1, momentum=0.5, dampening=0.3),
    ],
    ids=["plain", "momentum", "nesterov_wd", "dampening"],
)
def test_sgd(kw):
    run(optim.SGD, ref_sgd, **kw)


@pytest.mark.parametrize(
    "kw",
    [dict(lr=0.01), dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, betas=(0.8, 0.9), amsgrad=True)],
    ids=["plain", "l2", "amsgrad"],
)
def test_adam(kw):
    run(optim.Adam, ref_adam, **kw)


@pytest.mark.parametrize(
    "kw",
    [dict(lr=0.01), dict(lr=0.01, weight_decay=0.1, amsgrad=True)],
    ids=["plain", "wd_amsgrad"],
)
def test_adamw(kw):
    run(optim.AdamW, ref_adamw, **dict(dict(weight_decay=1e-2), **kw))


@pytest.mark.parametrize(
    "kw",
    [
        dict(lr=0.01),
        dict(lr=0.01, momentum=0.9, weight_decay=0.1),
        dict(lr=0.01, centered=True, alpha=0.9),
    ],
    ids=["plain", "momentum_wd", "centered"],
)
def test_rmsprop(kw):
    run(optim.RMSprop, ref_rmsprop, **kw)


def test_param_groups_zero_grad_and_errors():
    params, _ = make_params()
    opt = optim.SGD(
        [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.5}], lr=0.1, momentum=0.9
    )
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    set_grads(params, [np.ones(s) for s in SHAPES])
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(params[0].grad.numpy(), 0.0)
    opt.zero_grad()
    assert params[0].grad is None
    opt.step()  # no grads: nothing happens
    with pytest.raises(ValueError):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([{"params": [params[0]]}, {"params": [params[0]]}], lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD(params)  # lr is required


@pytest.mark.parametrize(
    "cls,kw",
    [
        (optim.SGD, dict(lr=0.1, momentum=0.9)),
        (optim.Adam, dict(lr=0.01)),
        (optim.RMSprop, dict(lr=0.01, momentum=0.5)),
    ],
    ids=["sgd", "adam", "rmsprop"],
)
def test_state_dict_resume_matches_uninterrupted(cls, kw):
    grads = [[RNG.standard_normal(s) for s in SHAPES] for _ in range(6)]
    pa, _ = make_params()
    pb = [nn.Parameter(p.detach().clone()) for p in pa]
    a = cls(pa, **kw)
    for g in grads:
        set_grads(pa, g)
        a.step()
    b = cls(pb, **kw)
    for g in grads[:3]:
        set_grads(pb, g)
        b.step()
    sd = b.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    pc = [nn.Parameter(p.detach().clone()) for p in pb]
    c = cls(pc, **dict(kw, lr=123.0))
    c.load_state_dict(sd)
    assert c.param_groups[0]["lr"] == kw["lr"]
    for g in grads[3:]:
        set_grads(pc, g)
        c.step()
    for x, y in zip(pa, pc):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6, atol=1e-7)


# ---- lr schedulers -----------------------------------------------------------------------------


def _opt(lr=1.0):
    return optim.SGD([nn.Parameter(flow.zeros(1))], lr=lr, momentum=0.9)


def _lrs(opt, sched, n):
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


def test_step_lr():
    o = _opt()
    assert _lrs(o, lrs.StepLR(o, 3, 0.5), 7) == [1, 1, 1, 0.5, 0.5, 0.5, 0.25]


def test_cosine_annealing_lr():
    o = _opt(0.1)
    got = _lrs(o, lrs.CosineAnnealingLR(o, T_max=10, eta_min=0.001), 11)
    want = [0.001 + (0.1 - 0.001) * (1 + math.cos(math.pi * e / 10)) / 2 for e in range(11)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_linear_lr_and_warmup_then_cosine():
    o = _opt(1.0)
    np.testing.assert_allclose(
        _lrs(o, lrs.LinearLR(o, 0.25, 1.0, total_iters=3), 5), [0.25, 0.5, 0.75, 1, 1]
    )
    o = _opt(1.0)
    warm = lrs.LinearLR(o, start_factor=0.1, total_iters=2)
    cos = lrs.CosineAnnealingLR(o, T_max=4)
    got = _lrs(o, lrs.SequentialLR(o, [warm, cos], milestones=[2]), 7)
    want = [0.1, 0.55] + [(1 + math.cos(math.pi * e / 4)) / 2 for e in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_lambda_lr_and_state_dict():
    o = _opt(2.0)
    s = lrs.LambdaLR(o, lambda e: 1.0 / (e + 1))
    np.testing.assert_allclose(_lrs(o, s, 3), [2.0, 1.0, 2.0 / 3])
    o2 = _opt(2.0)
    s2 = lrs.StepLR(o2, 2)
    s2.step()
    s2.step()
    sd = s2.state_dict()
    assert sd["last_epoch"] == 2 and "optimizer" not in sd


def test_one_cycle_lr_shape():
    o = optim.Adam([nn.Parameter(flow.zeros(1))], lr=0.01)
    s = lrs.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=0.3)
    got, betas = [], []
    for _ in range(10):
        got.append(o.param_groups[0]["lr"])
        betas.append(o.param_groups[0]["betas"][0])
        s.step()
    assert got[0] == pytest.approx(1.0 / 25)
    assert max(got) == pytest.approx(1.0) and got.index(max(got)) == 2
    assert got[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert betas[0] == pytest.approx(0.95) and betas[2] == pytest.approx(0.85)
    with pytest.raises(ValueError):
        for _ in range(5):
            s.step()


def test_schedulers_match_torch():
    torch = pytest.importorskip("torch")
    if torch is flow or getattr(flow, "__name__", "") == "torch":
        pytest.skip("flow is torch")
    cases = [
        (lambda o, m: m.StepLR(o, 3, 0.5), 10),
        (lambda o, m: m.CosineAnnealingLR(o, 8, 0.01), 8),
        (lambda o, m: m.LinearLR(o, 0.2, 1.0, 4), 8),
        (lambda o, m: m.OneCycleLR(o, max_lr=0.5, total_steps=20), 20),
        (
            lambda o, m: m.OneCycleLR(
                o, max_lr=0.5, total_steps=20, anneal_strategy="linear", three_phase=True
            ),
            20,
        ),
    ]
    for make, n in cases:
        to = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        fo = optim.SGD([nn.Parameter(flow.zeros(1))], lr=0.1, momentum=0.9)
        ts, fs = make(to, torch.optim.lr_scheduler), make(fo, lrs)
        for _ in range(n):
            assert fo.param_groups[0]["lr"] == pytest.approx(
                to.param_groups[0]["lr"], rel=1e-9, abs=1e-12
            )
            assert fo.param_groups[0]["momentum"] == pytest.approx(to.param_groups[0]["momentum"])
            to.step()
            fo.step()
            ts.step()
            fs.step()
