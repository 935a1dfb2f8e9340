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
        np.testing.assert_allclose(p.detach().numpy(), r, rtol=1e-5, atol=1e-6)
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
    np.testing.assert_array_equal(params[0].grad.detach().numpy(), 0.0)
    opt.zero_grad()
    assert params[0].grad is None
    opt.step()  # no grads: nothing happens
    with pytest.raises(ValueError):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([{"params": [params[0]]}, {"params": [params[0]]}], lr=0.1)
    assert optim.SGD(params).param_groups[0]["lr"] == 1e-3  # PyTorch 2.x default
    with pytest.raises(ValueError, match=r"\[SGD\] Invalid learning rate: -1"):
        optim.SGD(params, lr=-1)


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
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6, atol=1e-7)


def ref_adadelta(p, g, s, t, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0):
    g = g + weight_decay * p
    s["v"] = rho * s.get("v", 0) + (1 - rho) * g * g
    delta = np.sqrt(s.get("u", 0) + eps) / np.sqrt(s["v"] + eps) * g
    s["u"] = rho * s.get("u", 0) + (1 - rho) * delta * delta
    return p - lr * delta


def ref_adagrad(
    p, g, s, t, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10
):
    g = g + weight_decay * p
    s["sum"] = s.get("sum", initial_accumulator_value) + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)


def ref_adamax(p, g, s, t, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    g = g + weight_decay * p
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["u"] = np.maximum(b2 * s.get("u", 0), np.abs(g) + eps)
    return p - lr / (1 - b1**t) * s["m"] / s["u"]


def _decay(p, g, lr, wd, decoupled):
    return (p * (1 - lr * wd), g) if decoupled else (p, g + wd * p)


def ref_nadam(
    p,
    g,
    s,
    t,
    lr=2e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    momentum_decay=4e-3,
    decoupled_weight_decay=False,
):
    b1, b2 = betas
    p, g = _decay(p, g, lr, weight_decay, decoupled_weight_decay)
    mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    s["prod"] = s.get("prod", 1.0) * mu
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    denom = np.sqrt(s["v"] / (1 - b2**t)) + eps
    p = p - lr * (1 - mu) / (1 - s["prod"]) * g / denom
    return p - lr * mu_next / (1 - s["prod"] * mu_next) * s["m"] / denom


def ref_radam(
    p,
    g,
    s,
    t,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    decoupled_weight_decay=False,
):
    b1, b2 = betas
    p, g = _decay(p, g, lr, weight_decay, decoupled_weight_decay)
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    m_hat = s["m"] / (1 - b1**t)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
    if rho_t <= 5:
        return p - lr * m_hat
    rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
    adaptive = np.sqrt(1 - b2**t) / (np.sqrt(s["v"]) + eps)
    return p - lr * m_hat * rect * adaptive


def ref_asgd(p, g, s, t, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0):
    g = g + weight_decay * p
    eta, mu = s.get("eta", lr), s.get("mu", 1.0)
    p = p * (1 - lambd * eta) - eta * g
    s["ax"] = p.copy() if mu == 1 else s["ax"] + mu * (p - s["ax"])
    s["eta"] = lr / (1 + lambd * lr * t) ** alpha
    s["mu"] = 1 / max(1, t - t0)
    return p


def ref_rprop(p, g, s, t, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50)):
    sign = np.sign(g * s.get("prev", np.zeros_like(g)))
    factor = np.where(sign > 0, etas[1], np.where(sign < 0, etas[0], 1.0))
    s["step"] = np.clip(s.get("step", np.full_like(g, lr)) * factor, *step_sizes)
    g = np.where(sign < 0, 0.0, g)
    s["prev"] = g
    return p - np.sign(g) * s["step"]


FAMILY = [
    (optim.Adadelta, ref_adadelta, dict()),
    (optim.Adadelta, ref_adadelta, dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    (optim.Adagrad, ref_adagrad, dict()),
    (
        optim.Adagrad,
        ref_adagrad,
        dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2),
    ),
    (optim.Adamax, ref_adamax, dict()),
    (optim.Adamax, ref_adamax, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    (optim.NAdam, ref_nadam, dict()),
    (optim.NAdam, ref_nadam, dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    (optim.NAdam, ref_nadam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.RAdam, ref_radam, dict(lr=0.01)),
    (optim.RAdam, ref_radam, dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1)),
    (optim.RAdam, ref_radam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.ASGD, ref_asgd, dict()),
    (optim.ASGD, ref_asgd, dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    (optim.Rprop, ref_rprop, dict()),
    (optim.Rprop, ref_rprop, dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.06))),
]


@pytest.mark.parametrize(
    "cls,ref,kw", FAMILY, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(FAMILY)]
)
def test_optimizer_family(cls, ref, kw):
    run(cls, ref, steps=8, **kw)


def test_asgd_keeps_the_parameter_average():
    params, ref = make_params()
    opt = optim.ASGD(params, lr=0.05, t0=2)
    states = [dict() for _ in ref]
    for t in range(1, 6):
        grads = [RNG.standard_normal(s).astype(np.float32).astype(np.float64) for s in SHAPES]
        set_grads(params, grads)
        opt.step()
        ref = [ref_asgd(r, g, st, t, lr=0.05, t0=2) for r, g, st in zip(ref, grads, states)]
    for p, st in zip(params, states):
        np.testing.assert_allclose(
            opt.state[p]["ax"].detach().numpy(), st["ax"], rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize(
    "cls,kw",
    [
        (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
        (optim.Adam, dict(lr=0.01, amsgrad=True)),
        (optim.Adagrad, dict()),
        (optim.NAdam, dict()),
        (optim.Rprop, dict()),
        (optim.Adadelta, dict()),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_maximize_equals_negated_gradient(cls, kw):
    grads = [[RNG.standard_normal(s) for s in SHAPES] for _ in range(4)]
    pa, _ = make_params()
    pb = [nn.Parameter(p.detach().clone()) for p in pa]
    a, b = cls(pa, maximize=True, foreach=False, **kw), cls(pb, **kw)
    for g in grads:
        set_grads(pa, g)
        set_grads(pb, [-x for x in g])
        a.step()
        b.step()
    for x, y in zip(pa, pb):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert a.param_groups[0]["maximize"] is True and a.param_groups[0]["foreach"] is False


def test_adam_decoupled_weight_decay_is_adamw():
    grads = [[RNG.standard_normal(s) for s in SHAPES] for _ in range(3)]
    pa, _ = make_params()
    pb = [nn.Parameter(p.detach().clone()) for p in pa]
    a = optim.Adam(pa, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)
    b = optim.AdamW(pb, lr=0.01, weight_decay=0.1)
    for g in grads:
        set_grads(pa, g)
        set_grads(pb, g)
        a.step()
        b.step()
    for x, y in zip(pa, pb):
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())


def test_optimizer_errors_name_the_optimizer():
    params, _ = make_params()
    with pytest.raises(ValueError, match=r"\[Adadelta\] Invalid rho value: 1.5"):
        optim.Adadelta(params, rho=1.5)
    with pytest.raises(ValueError, match=r"\[Adagrad\] Invalid lr_decay value: -0.1"):
        optim.Adagrad(params, lr_decay=-0.1)
    with pytest.raises(ValueError, match=r"\[NAdam\] Invalid beta parameters"):
        optim.NAdam(params, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match=r"\[Rprop\] Invalid eta values: 1.2, 0.5"):
        optim.Rprop(params, etas=(1.2, 0.5))
    with pytest.raises(NotImplementedError, match=r"\[Adam\] differentiable=True"):
        optim.Adam(params, differentiable=True)
    with pytest.raises(ValueError, match=r"\[LBFGS\] line_search_fn.*'armijo'"):
        optim.LBFGS(params, line_search_fn="armijo")
    with pytest.raises(ValueError, match=r"\[LBFGS\] doesn't support"):
        optim.LBFGS([{"params": [params[0]]}, {"params": [params[1]]}])


@pytest.mark.parametrize(
    "cls,kw",
    [
        (optim.Adadelta, dict()),
        (optim.Adagrad, dict(lr=0.1, lr_decay=0.01)),
        (optim.Adamax, dict()),
        (optim.Adafactor, dict(weight_decay=0.01)),
        (optim.NAdam, dict()),
        (optim.RAdam, dict(lr=0.01)),
        (optim.ASGD, dict(t0=2)),
        (optim.Rprop, dict()),
        (optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
        (optim.AdamW, dict(lr=0.01)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_family_state_dict_resume_matches_uninterrupted(cls, kw):
    test_state_dict_resume_matches_uninterrupted(cls, dict(kw, lr=kw.get("lr", 0.01)))


def test_adagrad_state_exists_before_the_first_step():
    params, _ = make_params()
    opt = optim.Adagrad(params, initial_accumulator_value=0.5)
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1] and sd["state"][0]["step"] == 0
    np.testing.assert_array_equal(sd["state"][1]["sum"].detach().numpy(), 0.5)


def _rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_minimizes_rosenbrock(line_search_fn):
    x = nn.Parameter(flow.tensor([-1.5, 2.0], dtype=flow.float64))
    lr = 1.0 if line_search_fn else 0.05
    opt = optim.LBFGS([x], lr=lr, history_size=10, max_iter=50, line_search_fn=line_search_fn)
    calls = []

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        calls.append(loss.item())
        return loss

    first = opt.step(closure).item()
    assert first == pytest.approx(_rosenbrock(np.array([-1.5, 2.0])))
    for _ in range(20 if line_search_fn else 200):
        opt.step(closure)
    final = _rosenbrock(x.detach().numpy())
    if line_search_fn:
        np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-4)
        assert final < 1e-9
        assert opt.state[x]["func_evals"] == len(calls)
    else:
        assert final < 0.5 * calls[0]


def test_lbfgs_fixed_step_matches_numpy_two_loop():
    """Without a line search, each iteration is x += lr * d with d from the two-loop recursion."""
    a = RNG.standard_normal((4, 4))
    A = a @ a.T + 4 * np.eye(4)
    b = RNG.standard_normal(4)
    x = nn.Parameter(flow.tensor(np.zeros(4), dtype=flow.float64))
    At, bt = flow.tensor(A, dtype=flow.float64), flow.tensor(b, dtype=flow.float64)
    opt = optim.LBFGS([x], lr=0.5, max_iter=6, history_size=3)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x * (At @ x)).sum() - (bt * x).sum()
        loss.backward()
        return loss

    opt.step(closure)
    xr = np.zeros(4)
    g = A @ xr - b
    dirs, stps = [], []
    for it in range(6):
        if it == 0:
            d, h = -g, 1.0
            t = min(1.0, 1.0 / np.abs(g).sum()) * 0.5
        else:
            y, s = g - g_prev, d * t
            if y @ s > 1e-10:
                if len(dirs) == 3:
                    dirs.pop(0), stps.pop(0)
                dirs.append(y), stps.append(s)
                h = (y @ s) / (y @ y)
            q = -g
            al = []
            for yi, si in reversed(list(zip(dirs, stps))):
                al.append((si @ q) / (yi @ si))
                q = q - al[-1] * yi
            r = q * h
            for (yi, si), ai in zip(zip(dirs, stps), reversed(al)):
                r = r + si * (ai - (yi @ r) / (yi @ si))
            d, t = r, 0.5
        g_prev = g
        xr = xr + t * d
        g = A @ xr - b
    np.testing.assert_allclose(x.detach().numpy(), xr, rtol=1e-10, atol=1e-12)


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


def test_multiplicative_and_polynomial_lr():
    o = _opt(1.0)
    np.testing.assert_allclose(
        _lrs(o, lrs.MultiplicativeLR(o, lambda e: 0.9), 5), 0.9 ** np.arange(5), rtol=1e-12
    )
    o = _opt(2.0)
    got = _lrs(o, lrs.PolynomialLR(o, total_iters=4, power=2.0), 6)
    want = [2.0 * (1 - min(e, 4) / 4) ** 2 for e in range(6)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def _sgdr_ref(e, T_0, T_mult):
    """T_cur, T_i of SGDR by walking the cycles."""
    t_i, t_cur = T_0, e
    while t_cur >= t_i:
        t_cur -= t_i
        t_i *= T_mult
    return t_cur, t_i


@pytest.mark.parametrize("T_mult", [1, 2])
def test_cosine_annealing_warm_restarts(T_mult):
    o = _opt(0.5)
    s = lrs.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=T_mult, eta_min=0.01)
    got = _lrs(o, s, 20)
    want = []
    for e in range(20):
        t_cur, t_i = _sgdr_ref(e, 3, T_mult)
        want.append(0.01 + (0.5 - 0.01) * (1 + math.cos(math.pi * t_cur / t_i)) / 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    s.step(4.5)  # fractional epochs, as in `scheduler.step(epoch + i / iters)`
    t_cur, t_i = (1.5, 3) if T_mult == 1 else (1.5, 6)
    want = 0.01 + 0.49 * (1 + math.cos(math.pi * t_cur / t_i)) / 2
    assert o.param_groups[0]["lr"] == pytest.approx(want, rel=1e-12) and s.T_i == t_i


def _cyclic_ref(e, base, top, up, down, mode, gamma):
    total = up + down
    cycle = math.floor(1 + e / total)
    x = 1 + e / total - cycle
    frac = x / (up / total) if x <= up / total else (x - 1) / (up / total - 1)
    scale = {"triangular": 1.0, "triangular2": 1 / 2 ** (cycle - 1), "exp_range": gamma**e}[mode]
    return base + (top - base) * frac * scale, frac * scale


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic_lr(mode):
    o = _opt(1.0)
    s = lrs.CyclicLR(o, 0.1, 1.0, step_size_up=3, step_size_down=2, mode=mode, gamma=0.95)
    lrs_got, moms = [], []
    for _ in range(16):
        lrs_got.append(o.param_groups[0]["lr"])
        moms.append(o.param_groups[0]["momentum"])
        o.step()
        s.step()
    refs = [_cyclic_ref(e, 0.1, 1.0, 3, 2, mode, 0.95) for e in range(16)]
    np.testing.assert_allclose(lrs_got, [r[0] for r in refs], rtol=1e-12)
    np.testing.assert_allclose(moms, [0.9 - 0.1 * r[1] for r in refs], rtol=1e-12)
    a = optim.Adam([nn.Parameter(flow.zeros(1))])
    lrs.CyclicLR(a, 0.01, 0.1, step_size_up=2)
    assert a.param_groups[0]["betas"] == (0.9, 0.999) and a.param_groups[0]["lr"] == 0.01
    with pytest.raises(ValueError, match=r"\[CyclicLR\] optimizer must support momentum"):
        lrs.CyclicLR(optim.Adagrad([nn.Parameter(flow.zeros(1))]), 0.01, 0.1)


def test_reduce_lr_on_plateau():
    o = _opt(1.0)
    s = lrs.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1, min_lr=0.2)
    metrics = [5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3]
    got = []
    for m in metrics:
        s.step(m)
        got.append(o.param_groups[0]["lr"])
    # Three bad epochs in a row (> patience 2) halve the lr; the cooldown epoch after a cut
    # counts none; a new best resets the count; min_lr bounds the last cut (0.125 -> 0.2).
    want = [1, 1, 1, 1] + [0.5] * 7 + [0.25] * 4 + [0.2]
    assert got == want
    assert s.get_last_lr() == [0.2]
    o = _opt(1.0)
    s = lrs.ReduceLROnPlateau(o, mode="max", patience=0, threshold=0.5, threshold_mode="abs")
    for m in [1.0, 1.4, 2.0]:
        s.step(m)
    assert o.param_groups[0]["lr"] == pytest.approx(0.1)  # 1.4 is not 0.5 better than 1.0
    with pytest.raises(ValueError, match=r"\[ReduceLROnPlateau\] factor should be < 1.0, got 2"):
        lrs.ReduceLROnPlateau(o, factor=2)


def test_chained_scheduler_and_side_by_side_schedulers_multiply():
    o = _opt(1.0)
    c = lrs.ChainedScheduler(
        [lrs.ConstantLR(o, factor=0.1, total_iters=2), lrs.ExponentialLR(o, 0.9)]
    )
    got = []
    for _ in range(5):
        got.append(o.param_groups[0]["lr"])
        c.step()
    np.testing.assert_allclose(got, [0.1, 0.09, 0.81, 0.729, 0.6561], rtol=1e-12)
    assert c.get_last_lr() == [o.param_groups[0]["lr"]]
    o = _opt(1.0)
    warm, decay = lrs.LinearLR(o, 0.5, total_iters=2), lrs.StepLR(o, 2, gamma=0.1)
    got = []
    for _ in range(5):
        got.append(o.param_groups[0]["lr"])
        warm.step()
        decay.step()
    np.testing.assert_allclose(got, [0.5, 0.75, 0.1, 0.1, 0.01], rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda o: lrs.StepLR(o, 2, 0.5),
        lambda o: lrs.CosineAnnealingWarmRestarts(o, 2, 2),
        lambda o: lrs.CyclicLR(o, 0.1, 1.0, step_size_up=2),
        lambda o: lrs.OneCycleLR(o, 1.0, total_steps=12),
        lambda o: lrs.PolynomialLR(o, 8, 0.5),
        lambda o: lrs.SequentialLR(
            o, [lrs.LinearLR(o, 0.1, total_iters=2), lrs.ExponentialLR(o, 0.8)], [2]
        ),
        lambda o: lrs.ChainedScheduler([lrs.ExponentialLR(o, 0.9), lrs.MultiStepLR(o, [3, 5])]),
    ],
    ids=["step", "sgdr", "cyclic", "onecycle", "poly", "sequential", "chained"],
)
def test_scheduler_state_dict_resume(make):
    o = _opt(1.0)
    s = make(o)
    full = _lrs(o, s, 10)
    o2 = _opt(1.0)
    s2 = make(o2)
    _lrs(o2, s2, 4)
    sd_opt, sd_s = o2.state_dict(), s2.state_dict()
    o3 = _opt(1.0)
    s3 = make(o3)
    o3.load_state_dict(sd_opt)
    s3.load_state_dict(sd_s)
    np.testing.assert_allclose(_lrs(o3, s3, 6), full[4:], rtol=1e-12)


def test_reduce_lr_on_plateau_state_dict():
    o = _opt(1.0)
    s = lrs.ReduceLROnPlateau(o, patience=1)
    for m in [3, 3, 3]:
        s.step(m)
    s2 = lrs.ReduceLROnPlateau(_opt(1.0), patience=1)
    s2.load_state_dict(s.state_dict())
    assert (s2.best, s2.num_bad_epochs, s2.last_epoch) == (3, 0, 3)


def test_lbfgs_state_dict_resume_matches_uninterrupted():
    target = flow.tensor(RNG.standard_normal(5))

    def make():
        x = nn.Parameter(flow.zeros(5, dtype=flow.float64))
        return x, optim.LBFGS([x], lr=0.5, max_iter=3, history_size=4)

    def closure_for(x, opt):
        def closure():
            opt.zero_grad()
            loss = ((x - target) ** 4).sum() + (x * x).sum()
            loss.backward()
            return loss

        return closure

    xa, a = make()
    for _ in range(4):
        a.step(closure_for(xa, a))
    xb, b = make()
    for _ in range(2):
        b.step(closure_for(xb, b))
    xc, c = make()
    with flow.no_grad():
        xc.copy_(xb)
    c.load_state_dict(b.state_dict())
    assert c.state[xc]["old_dirs"][0] is not b.state[xb]["old_dirs"][0]
    for _ in range(2):
        c.step(closure_for(xc, c))
    np.testing.assert_allclose(xc.detach().numpy(), xa.detach().numpy(), rtol=1e-12)


def test_step_hooks_run_once_per_step_and_remove():
    params, _ = make_params()
    opt = optim.AdamW(params, lr=0.01)  # AdamW inherits Adam's step
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    post = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    set_grads(params, [np.ones(s) for s in SHAPES])
    opt.step()
    assert calls == ["pre", "post"]
    pre.remove()
    post.remove()
    opt.step()
    assert calls == ["pre", "post"]

    class MySGD(optim.SGD):  # a subclass whose step calls the parent's: hooks still run once
        def step(self, closure=None):
            return super().step(closure)

    opt = MySGD(params, lr=0.1)
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post2"))
    opt.step()
    assert calls[-1] == "post2" and calls.count("post2") == 1


def test_lambda_lr_is_absolute_step_lr_is_chainable():
    o = _opt(1.0)
    lam = lrs.LambdaLR(o, lambda e: 0.5**e)
    o.param_groups[0]["lr"] = 123.0  # someone else changed it: LambdaLR overrides, as PyTorch's
    lam.step()
    assert o.param_groups[0]["lr"] == 0.5
    o = _opt(1.0)
    step = lrs.StepLR(o, 1, gamma=0.5)
    o.param_groups[0]["lr"] = 4.0  # StepLR scales whatever lr the group has
    step.step()
    assert o.param_groups[0]["lr"] == 2.0
