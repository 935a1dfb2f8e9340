"""Higher-order gradients (create_graph=True): second derivatives of the twice-differentiable ops
against torch in float64, a WGAN-GP gradient-penalty step, flow.autograd.functional against
torch.autograd.functional, and the clear error of each op kind whose double backward is not
implemented."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import oneflow_like as flow
import oneflow_like.nn.functional as F

RNG = np.random.default_rng(0)


def pair(a, rg=True):
    """The same float64 values as a flow and a torch tensor."""
    a = np.asarray(a, dtype=np.float64)
    return flow.tensor(a, requires_grad=rg), torch.tensor(a, requires_grad=rg)


def tnp(b):
    """A torch tensor's values (torch 1.13 returns zero gradients as ZeroTensors, whose .numpy()
    reads unrelated memory: adding a dense zero materializes them)."""
    b = b.detach()
    return (b + torch.zeros(b.shape, dtype=b.dtype)).numpy()


def close(a, b, rtol=1e-7, atol=1e-9):
    a = a.detach().numpy() if isinstance(a, flow.Tensor) else np.asarray(a)
    b = tnp(b) if isinstance(b, torch.Tensor) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def second_order(lib, fn, xs, w, v):
    """g = d(sum(w * fn(xs)))/dxs with create_graph, then d(sum_i v_i g_i)/dxs: a Hessian-vector
    product (the first-order gradients returned too)."""
    grad = flow.autograd.grad if lib is flow else torch.autograd.grad
    y = fn(*xs)
    g = grad((y * w).sum(), xs, create_graph=True)
    if not any(gi.requires_grad for gi in g):  # only right where the second derivative is 0
        return g, (None,) * len(xs)
    s = sum((gi * vi).sum() for gi, vi in zip(g, v) if gi.requires_grad)
    gg = grad(s, xs, allow_unused=True)
    return g, gg


def check(flow_fn, torch_fn, arrays, rtol=1e-7, atol=1e-9):
    fx = [pair(a)[0] for a in arrays]
    tx = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out_shape = tuple(torch_fn(*tx).shape)
    w = RNG.standard_normal(out_shape)
    v = [RNG.standard_normal(np.shape(a)) for a in arrays]
    fg, fgg = second_order(flow, flow_fn, fx, flow.tensor(w), [flow.tensor(x) for x in v])
    tg, tgg = second_order(torch, torch_fn, tx, torch.tensor(w), [torch.tensor(x) for x in v])
    for a, b in zip(fg, tg):
        close(a, b, rtol, atol)
    for a, b in zip(fgg, tgg):
        if b is None:
            assert a is None or np.allclose(a.numpy(), 0)
            continue
        if a is None:  # not reached: only right where the true value is zero (relu, clamp, ...)
            assert np.allclose(tnp(b), 0), "second derivative missing"
            continue
        close(a, b, rtol, atol)


def uniform(lo, hi, shape=(3, 4)):
    return RNG.uniform(lo, hi, shape)


# (name, flow fn, torch fn, domain)
UNARY = [
    ("tanh", flow.tanh, torch.tanh, (-2, 2)),
    ("sigmoid", flow.sigmoid, torch.sigmoid, (-3, 3)),
    ("silu", F.silu, TF.silu, (-3, 3)),
    ("gelu", F.gelu, TF.gelu, (-3, 3)),
    (
        "gelu_tanh",
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: TF.gelu(x, approximate="tanh"),
        (-3, 3),
    ),
    ("elu", F.elu, TF.elu, (-2, 2)),
    ("elu_alpha", lambda x: F.elu(x, alpha=0.7), lambda x: TF.elu(x, alpha=0.7), (-2, 2)),
    ("softplus", F.softplus, TF.softplus, (-3, 3)),
    (
        "softplus_beta",
        lambda x: F.softplus(x, beta=2.0, threshold=3.0),
        lambda x: TF.softplus(x, beta=2.0, threshold=3.0),
        (-3, 3),
    ),
    ("relu", F.relu, TF.relu, (-2, 2)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2), (-2, 2)),
    ("hardtanh", F.hardtanh, TF.hardtanh, (-2, 2)),
    ("rsqrt", flow.rsqrt, torch.rsqrt, (0.5, 2)),
    ("reciprocal", flow.reciprocal, torch.reciprocal, (0.5, 2)),
    ("exp", flow.exp, torch.exp, (-2, 2)),
    ("log", flow.log, torch.log, (0.5, 2)),
    ("log1p", flow.log1p, torch.log1p, (0, 2)),
    ("sqrt", flow.sqrt, torch.sqrt, (0.5, 2)),
    ("sin", flow.sin, torch.sin, (-2, 2)),
    ("cos", flow.cos, torch.cos, (-2, 2)),
    ("square", flow.square, torch.square, (-2, 2)),
    ("abs", flow.abs, torch.abs, (-2, 2)),
    ("erf", flow.erf, torch.erf, (-2, 2)),
    ("erfc", flow.erfc, torch.erfc, (-2, 2)),
    ("erfinv", flow.erfinv, torch.erfinv, (-0.8, 0.8)),
    ("lgamma", flow.lgamma, torch.lgamma, (0.5, 3)),
    ("digamma", flow.digamma, torch.digamma, (0.5, 3)),
    ("polygamma1", lambda x: flow.polygamma(1, x), lambda x: torch.polygamma(1, x), (0.5, 3)),
    ("i0", flow.i0, torch.i0, (-2, 2)),
    ("ndtri", flow.special.ndtri, torch.special.ndtri, (0.1, 0.9)),
    ("log_ndtr", flow.special.log_ndtr, torch.special.log_ndtr, (-2, 2)),
    ("erfcx", flow.special.erfcx, torch.special.erfcx, (-1, 2)),
    ("tan", flow.tan, torch.tan, (-1, 1)),
    ("asin", flow.asin, torch.asin, (-0.8, 0.8)),
    ("acos", flow.acos, torch.acos, (-0.8, 0.8)),
    ("atan", flow.atan, torch.atan, (-2, 2)),
    ("sinh", flow.sinh, torch.sinh, (-2, 2)),
    ("cosh", flow.cosh, torch.cosh, (-2, 2)),
    ("asinh", flow.asinh, torch.asinh, (-2, 2)),
    ("acosh", flow.acosh, torch.acosh, (1.2, 3)),
    ("atanh", flow.atanh, torch.atanh, (-0.8, 0.8)),
    ("expm1", flow.expm1, torch.expm1, (-2, 2)),
    ("exp2", flow.exp2, torch.exp2, (-2, 2)),
    ("log2", flow.log2, torch.log2, (0.5, 3)),
    ("log10", flow.log10, torch.log10, (0.5, 3)),
    ("mish", F.mish, TF.mish, (-3, 3)),
    ("hardswish", F.hardswish, TF.hardswish, (-4, 4)),
    # torch 1.13 has no double backward for hardsigmoid: its formula, op for op.
    ("hardsigmoid", F.hardsigmoid, lambda x: torch.clamp(x / 6 + 0.5, 0, 1), (-4, 4)),
    ("softsign", F.softsign, TF.softsign, (-2, 2)),
    ("tanhshrink", F.tanhshrink, TF.tanhshrink, (-2, 2)),
    ("pow3", lambda x: x**3, lambda x: x**3, (-2, 2)),
    ("pow_half", lambda x: x**0.5, lambda x: x**0.5, (0.5, 2)),
    ("pow_neg", lambda x: x**-1.5, lambda x: x**-1.5, (0.5, 2)),
    ("rpow", lambda x: 2.0**x, lambda x: 2.0**x, (-2, 2)),
    ("logit", flow.logit, torch.logit, (0.1, 0.9)),
    (
        "logit_eps",
        lambda x: flow.logit(x, eps=0.2),
        lambda x: torch.logit(x, eps=0.2),
        (0.05, 0.95),
    ),
]


@pytest.mark.parametrize("name,ffn,tfn,dom", UNARY, ids=[u[0] for u in UNARY])
def test_unary_second_derivative(name, ffn, tfn, dom):
    # f(x) * x mixes the op's own second derivative with the product rule's terms.
    x = uniform(*dom)
    check(ffn, tfn, [x], rtol=1e-6)
    check(lambda a: ffn(a) * a, lambda a: tfn(a) * a, [x], rtol=1e-6)


def test_tanh_gradient_keeps_its_graph():
    x, tx = pair([0.3, -0.7, 1.2])
    (g,) = flow.autograd.grad(flow.tanh(x).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    (tg,) = torch.autograd.grad(torch.tanh(tx).sum(), tx, create_graph=True)
    close(flow.autograd.grad(g.sum(), x)[0], torch.autograd.grad(tg.sum(), tx)[0])


def test_third_derivative():
    x, tx = pair([0.3, -0.7, 1.2])
    res = []
    for lib, t in ((flow, x), (torch, tx)):
        y = (lib.tanh(t) * lib.exp(t)).sum()
        for _ in range(3):
            (y,) = lib.autograd.grad(y, t, create_graph=True)
            y = y.sum()
        res.append(y)
    close(res[0], res[1])


def test_binary_and_reductions():
    a, b = uniform(0.5, 2), uniform(0.5, 2)
    check(lambda x, y: x * y, lambda x, y: x * y, [a, b])
    check(lambda x, y: x / y, lambda x, y: x / y, [a, b])
    check(lambda x, y: x**y, lambda x, y: x**y, [a, b])
    check(lambda x, y: (x - 2 * y) * x, lambda x, y: (x - 2 * y) * x, [a, b])
    check(lambda x, y: flow.maximum(x, y) * x, lambda x, y: torch.maximum(x, y) * x, [a, b])
    check(lambda x: (x * x).sum(1) * x.mean(), lambda x: (x * x).sum(1) * x.mean(), [a])
    check(lambda x: x.norm(dim=1), lambda x: x.norm(dim=1), [a])
    check(lambda x: x.norm(p=3, dim=0), lambda x: x.norm(p=3, dim=0), [a])
    check(lambda x: x.var(1) * x.std(0).sum(), lambda x: x.var(1) * x.std(0).sum(), [a])
    check(lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), [a])
    check(lambda x: x.prod(1), lambda x: x.prod(1), [a])


def test_matmul_linear():
    x, w, b = uniform(-1, 1, (3, 4)), uniform(-1, 1, (5, 4)), uniform(-1, 1, (5,))
    check(
        lambda x, w, b: flow.tanh(F.linear(x, w, b)) * 2,
        lambda x, w, b: torch.tanh(TF.linear(x, w, b)) * 2,
        [x, w, b],
    )
    m = uniform(-1, 1, (4, 2))
    check(
        lambda x, m: flow.sigmoid(x @ m) @ m.t(),
        lambda x, m: torch.sigmoid(x @ m) @ m.t(),
        [x, m],
    )


def test_softmax_log_softmax():
    x = uniform(-2, 2, (3, 5))
    check(lambda a: F.softmax(a, dim=1), lambda a: TF.softmax(a, dim=1), [x])
    check(lambda a: F.softmax(a, dim=0) * a, lambda a: TF.softmax(a, dim=0) * a, [x])
    check(lambda a: F.log_softmax(a, dim=1), lambda a: TF.log_softmax(a, dim=1), [x])
    check(lambda a: a.softmax(-1).log_softmax(0), lambda a: a.softmax(-1).log_softmax(0), [x])


def test_losses():
    x, y = uniform(-2, 2, (4, 3)), uniform(-2, 2, (4, 3))
    p = uniform(0.1, 0.9, (4, 3))
    t = np.array([0, 2, 1, 2])
    ft, tt = flow.tensor(t), torch.tensor(t)
    check(F.mse_loss, TF.mse_loss, [x, y])
    check(F.smooth_l1_loss, TF.smooth_l1_loss, [x, y])
    check(
        lambda a, b: F.huber_loss(a, b, delta=0.5),
        lambda a, b: TF.huber_loss(a, b, delta=0.5),
        [x, y],
    )
    check(lambda a: F.cross_entropy(a, ft), lambda a: TF.cross_entropy(a, tt), [x])
    check(
        lambda a: F.cross_entropy(a, ft, label_smoothing=0.1, reduction="sum"),
        lambda a: TF.cross_entropy(a, tt, label_smoothing=0.1, reduction="sum"),
        [x],
    )
    wc = np.array([0.5, 2.0, 1.0])
    check(
        lambda a: F.nll_loss(F.log_softmax(a, 1), ft, weight=flow.tensor(wc), reduction="none"),
        lambda a: TF.nll_loss(TF.log_softmax(a, 1), tt, weight=torch.tensor(wc), reduction="none"),
        [x],
    )
    check(F.binary_cross_entropy, TF.binary_cross_entropy, [p, p[::-1].copy()])
    check(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits, [x, p])
    pw = uniform(0.5, 2, (3,))  # torch does not differentiate pos_weight: a constant here
    check(
        lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=flow.tensor(pw)),
        lambda a, b: TF.binary_cross_entropy_with_logits(a, b, pos_weight=torch.tensor(pw)),
        [x, p],
    )


def mlp_params(seed):
    r = np.random.default_rng(seed)
    return [r.standard_normal(s) * 0.5 for s in [(8, 3), (8,), (8, 8), (8,), (1, 8), (1,)]]


def critic(lib, nnf, ps, x):
    w1, b1, w2, b2, w3, b3 = ps
    h = nnf.leaky_relu(nnf.linear(x, w1, b1), 0.2)
    h = lib.tanh(nnf.linear(h, w2, b2))
    h = nnf.silu(h) + nnf.softplus(h)
    return nnf.linear(h, w3, b3)


def wgan_gp_grads(lib, nnf, ps_np, real, fake, eps, lam=10.0):
    ps = [lib.tensor(p, requires_grad=True) for p in ps_np]
    real, fake, eps = lib.tensor(real), lib.tensor(fake), lib.tensor(eps)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    d_hat = critic(lib, nnf, ps, x_hat)
    (g,) = lib.autograd.grad(d_hat.sum(), x_hat, create_graph=True)
    gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(lib, nnf, ps, fake).mean() - critic(lib, nnf, ps, real).mean() + lam * gp
    loss.backward()
    return loss, [p.grad for p in ps]


def test_wgan_gp_step_matches_torch():
    ps = mlp_params(1)
    real, fake = RNG.standard_normal((6, 3)), RNG.standard_normal((6, 3))
    eps = RNG.uniform(0, 1, (6, 1))
    fl, fg = wgan_gp_grads(flow, F, ps, real, fake, eps)
    tl, tg = wgan_gp_grads(torch, TF, ps, real, fake, eps)
    close(fl, tl)
    for a, b in zip(fg, tg):
        close(a, b, rtol=1e-6)
    # The penalty's contribution is second order: without it the gradients differ.
    assert not np.allclose(fg[0].numpy(), wgan_gp_grads(torch, TF, ps, real, fake, eps, 0.0)[1][0])


def test_wgan_gp_with_optimizer_and_modules():
    flow.manual_seed(0)
    net = flow.nn.Sequential(flow.nn.Linear(3, 16), flow.nn.GELU(), flow.nn.Linear(16, 1)).double()
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.GELU(), torch.nn.Linear(16, 1))
    tnet = tnet.double()
    with torch.no_grad():
        for tp, fp in zip(tnet.parameters(), net.parameters()):
            tp.copy_(torch.tensor(fp.detach().numpy()))
    opt = flow.optim.Adam(net.parameters(), lr=1e-2)
    topt = torch.optim.Adam(tnet.parameters(), lr=1e-2)
    x = RNG.standard_normal((5, 3))
    for _ in range(3):
        for lib, m, o in ((flow, net, opt), (torch, tnet, topt)):
            xi = lib.tensor(x, requires_grad=True)
            (g,) = lib.autograd.grad(m(xi).sum(), xi, create_graph=True)
            loss = ((g.norm(2, dim=1) - 1) ** 2).mean()
            o.zero_grad()
            loss.backward()
            o.step()
    for tp, fp in zip(tnet.parameters(), net.parameters()):
        close(fp.detach(), tp, rtol=1e-6)


def test_transformer_layer_second_order():
    # attention (matmul, softmax), layer_norm, relu, linear: d/d(x, params) of |d out / dx|^2.
    flow.manual_seed(0)
    kw = dict(dim_feedforward=16, dropout=0.0, batch_first=True)
    fl = flow.nn.TransformerEncoderLayer(8, 2, **kw).double()
    tl = torch.nn.TransformerEncoderLayer(8, 2, **kw).double()
    tl.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in fl.state_dict().items()})
    x = RNG.standard_normal((2, 3, 8))
    res = []
    for lib, m in ((flow, fl), (torch, tl)):
        xi = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad((m(xi) ** 2).sum(), xi, create_graph=True)
        res.append(lib.autograd.grad((g * g).sum(), [xi] + list(m.parameters())))
    for a, b in zip(*res):
        close(a, b, rtol=1e-6, atol=1e-9)


# ---- flow.autograd.functional -------------------------------------------------------------------


def f_single(x):
    return flow.tanh(x) * x.exp() if isinstance(x, flow.Tensor) else torch.tanh(x) * x.exp()


def f_pair(x, y):
    lib = flow if isinstance(x, flow.Tensor) else torch
    return (lib.sigmoid(x @ y).sum(0), (x * x).sum() * y[0])


def f_scalar(x, y):
    lib = flow if isinstance(x, flow.Tensor) else torch
    return (lib.tanh(x @ y) ** 2).sum() + (x.exp() * x).sum()


def close_nested(a, b, rtol=1e-7):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            close_nested(x, y, rtol)
    else:
        close(a, b, rtol)


def both(*arrays):
    return (tuple(flow.tensor(a) for a in arrays), tuple(torch.tensor(a) for a in arrays))


def test_functional_jacobian():
    x = uniform(-1, 1, (3,))
    (fx,), (tx,) = both(x)
    close_nested(
        flow.autograd.functional.jacobian(f_single, fx),
        torch.autograd.functional.jacobian(f_single, tx),
    )
    a, b = uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 2))
    fa, ta = both(a, b)
    close_nested(
        flow.autograd.functional.jacobian(f_pair, fa),
        torch.autograd.functional.jacobian(f_pair, ta),
    )
    j = flow.autograd.functional.jacobian(f_single, fx)
    assert tuple(j.shape) == (3, 3) and not j.requires_grad


def test_functional_hessian():
    a, b = uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 2))
    fa, ta = both(a, b)
    close_nested(
        flow.autograd.functional.hessian(f_scalar, fa),
        torch.autograd.functional.hessian(f_scalar, ta),
        rtol=1e-6,
    )
    x = uniform(-1, 1, (4,))
    (fx,), (tx,) = both(x)
    h = flow.autograd.functional.hessian(lambda t: F.softmax(t, 0)[0] + flow.sigmoid(t).sum(), fx)
    th = torch.autograd.functional.hessian(
        lambda t: TF.softmax(t, 0)[0] + torch.sigmoid(t).sum(), tx
    )
    close(h, th, rtol=1e-6)


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_functional_products(name):
    a, b = uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 2))
    fa, ta = both(a, b)
    ffn, tfn = getattr(flow.autograd.functional, name), getattr(torch.autograd.functional, name)
    if name == "vjp":
        v = (uniform(-1, 1, (2,)), uniform(-1, 1, (2,)))
        func = f_pair
    elif name == "jvp":
        v = (uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 2)))
        func = f_pair
    else:
        v = (uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 2)))
        func = f_scalar
    fv, tv = both(*v)
    fo, fr = ffn(func, fa, fv)
    to, tr = tfn(func, ta, tv)
    close_nested(fo, to)
    close_nested(fr, tr, rtol=1e-6)


def test_functional_create_graph_and_strict():
    x = uniform(-1, 1, (3,))
    fx = flow.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    _, fr = flow.autograd.functional.vhp(
        lambda t: (t.sin() * t).sum(), fx, flow.ones(3, dtype=flow.float64), create_graph=True
    )
    _, tr = torch.autograd.functional.vhp(
        lambda t: (t.sin() * t).sum(), tx, torch.ones(3, dtype=torch.float64), create_graph=True
    )
    assert fr.requires_grad
    close(flow.autograd.grad(fr.sum(), fx)[0], torch.autograd.grad(tr.sum(), tx)[0])
    # strict: an output independent of an input raises; non-strict gives zeros.
    fa = (flow.tensor(x), flow.tensor(x))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        flow.autograd.functional.jacobian(lambda a, b: a * 2, fa, strict=True)
    j = flow.autograd.functional.jacobian(lambda a, b: a * 2, fa)
    close(j[1], np.zeros((3, 3)))
    with pytest.raises(NotImplementedError, match="vectorize"):
        flow.autograd.functional.jacobian(f_single, fa[0], vectorize=True)
    with pytest.raises(RuntimeError, match="wrong size"):
        flow.autograd.functional.vjp(f_single, fa[0], flow.ones(2, dtype=flow.float64))


# ---- the op kinds without double backward: a clear error, never a silent zero --------------------


def raises_double_backward(op_name, fn, *arrays, wrt=None):
    xs = [flow.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*xs)
    g = flow.autograd.grad((y * y).sum(), xs, create_graph=True, allow_unused=True)
    s = sum(gi.sum() for gi in g if gi is not None and gi.requires_grad)
    with pytest.raises(RuntimeError, match=rf"\[{op_name}\] double backward is not supported"):
        flow.autograd.grad(s, xs, allow_unused=True)


def test_conv():
    x, b = uniform(-1, 1, (2, 4, 6, 5)), uniform(-1, 1, (6,))
    for kw in ({}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}):
        w = uniform(-1, 1, (6, 4 // kw.get("groups", 1), 3, 3))
        check(
            lambda x, w, b: flow.tanh(F.conv2d(x, w, b, **kw)),
            lambda x, w, b: torch.tanh(TF.conv2d(x, w, b, **kw)),
            [x, w, b],
            rtol=1e-6,
        )
    x3, w3 = uniform(-1, 1, (1, 2, 4, 4, 4)), uniform(-1, 1, (3, 2, 2, 2, 2))
    check(lambda x, w: F.conv3d(x, w) ** 2, lambda x, w: TF.conv3d(x, w) ** 2, [x3, w3], rtol=1e-6)
    x1, w1 = uniform(-1, 1, (2, 3, 7)), uniform(-1, 1, (4, 3, 3))
    check(
        lambda x, w: F.conv1d(x, w, padding=1).sigmoid(),
        lambda x, w: TF.conv1d(x, w, padding=1).sigmoid(),
        [x1, w1],
        rtol=1e-6,
    )


def test_pool():
    x = uniform(-1, 1, (2, 3, 6, 6))
    for ffn, tfn in (
        (lambda a: F.max_pool2d(a, 2), lambda a: TF.max_pool2d(a, 2)),
        (lambda a: F.max_pool2d(a, 3, 2, 1), lambda a: TF.max_pool2d(a, 3, 2, 1)),
        (lambda a: F.avg_pool2d(a, 2), lambda a: TF.avg_pool2d(a, 2)),
        (
            lambda a: F.avg_pool2d(a, 3, 2, 1, count_include_pad=False),
            lambda a: TF.avg_pool2d(a, 3, 2, 1, count_include_pad=False),
        ),
        (lambda a: F.adaptive_avg_pool2d(a, (4, 3)), lambda a: TF.adaptive_avg_pool2d(a, (4, 3))),
    ):
        check(lambda a: ffn(a * a), lambda a: tfn(a * a), [x])
    x3 = uniform(-1, 1, (1, 2, 4, 4, 4))
    check(lambda a: F.max_pool3d(a * a, 2), lambda a: TF.max_pool3d(a * a, 2), [x3])
    check(lambda a: F.avg_pool3d(a * a, 2), lambda a: TF.avg_pool3d(a * a, 2), [x3])


def test_norms():
    x, w, b = uniform(-1, 1, (3, 4, 5)), uniform(0.5, 1.5, (4, 5)), uniform(-1, 1, (4, 5))
    check(
        lambda x, w, b: F.layer_norm(x, (4, 5), w, b) ** 2,
        lambda x, w, b: TF.layer_norm(x, (4, 5), w, b) ** 2,
        [x, w, b],
        rtol=1e-6,
    )
    check(
        lambda x: flow.tanh(F.layer_norm(x, (5,))),
        lambda x: torch.tanh(TF.layer_norm(x, (5,))),
        [x],
        rtol=1e-6,
    )
    x4, c = uniform(-1, 1, (2, 6, 3, 2)), uniform(0.5, 1.5, (6,))
    cb = uniform(-1, 1, (6,))
    check(
        lambda x, w, b: F.group_norm(x, 3, w, b) ** 2,
        lambda x, w, b: TF.group_norm(x, 3, w, b) ** 2,
        [x4, c, cb],
        rtol=1e-6,
    )
    check(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True) ** 2,
        lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True) ** 2,
        [x4, c, cb],
        rtol=1e-6,
    )
    rm, rv = uniform(-0.5, 0.5, (6,)), uniform(0.5, 2, (6,))
    check(
        lambda x, w, b: F.batch_norm(x, flow.tensor(rm), flow.tensor(rv), w, b) ** 2,
        lambda x, w, b: TF.batch_norm(x, torch.tensor(rm), torch.tensor(rv), w, b) ** 2,
        [x4, c, cb],
        rtol=1e-6,
    )
    # rms_norm (torch 1.13 has none): its formula, op for op.
    check(
        lambda x, w: F.rms_norm(x, (5,), w, eps=1e-6) ** 2,
        lambda x, w: (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w) ** 2,
        [x, uniform(0.5, 1.5, (5,))],
        rtol=1e-6,
    )


def test_maml_inner_step_matches_torch():
    # One MAML inner step through conv + batch_norm + relu + max_pool + linear, then the outer
    # gradient w.r.t. the initial parameters (second order through every op of the step).
    r = np.random.default_rng(3)
    ps_np = [r.standard_normal(s) * 0.3 for s in [(4, 1, 3, 3), (4,), (4,), (4,), (3, 16), (3,)]]
    xs, ys = r.standard_normal((5, 1, 6, 6)), np.array([0, 2, 1, 1, 0])
    xq, yq = r.standard_normal((4, 1, 6, 6)), np.array([2, 0, 1, 2])

    def net(lib, nnf, p, x):
        h = nnf.conv2d(x, p[0], p[1], padding=1)
        h = nnf.batch_norm(h, None, None, p[2], p[3], training=True)
        h = nnf.max_pool2d(nnf.relu(h), 3)
        return nnf.linear(h.reshape(h.shape[0], -1), p[4], p[5])

    res = []
    for lib, nnf in ((flow, F), (torch, TF)):
        p = [lib.tensor(a, requires_grad=True) for a in ps_np]
        loss = nnf.cross_entropy(net(lib, nnf, p, lib.tensor(xs)), lib.tensor(ys))
        g = lib.autograd.grad(loss, p, create_graph=True)
        fast = [a - 0.4 * b for a, b in zip(p, g)]
        outer = nnf.cross_entropy(net(lib, nnf, fast, lib.tensor(xq)), lib.tensor(yq))
        res.append((outer, lib.autograd.grad(outer, p)))
    close(res[0][0], res[1][0])
    for a, b in zip(res[0][1], res[1][1]):
        close(a, b, rtol=1e-6, atol=1e-8)


def test_unsupported_scan():
    raises_double_backward("cumprod_grad", lambda x: flow.cumprod(x, 1), uniform(0.5, 1, (2, 3)))
    raises_double_backward(
        "logcumsumexp_grad", lambda x: flow.logcumsumexp(x, 1), uniform(-1, 1, (2, 3))
    )


def test_unsupported_embedding():
    idx = flow.tensor([[0, 2], [1, 2]])
    raises_double_backward(
        "embedding_grad", lambda w: flow.tanh(F.embedding(idx, w)), uniform(-1, 1, (3, 4))
    )


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "LSTM", "GRU"])
def test_recurrent(kind):
    # The fused cells: d/d(x, h, params) of |d loss / dx|^2 against torch.
    flow.manual_seed(0)
    fm = getattr(flow.nn, kind)(3, 4).double()
    tm = getattr(torch.nn, kind)(3, 4).double()
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in fm.state_dict().items()})
    cell = kind.endswith("Cell")
    x = RNG.standard_normal((2, 3) if cell else (5, 2, 3))
    h0 = RNG.standard_normal((2, 4) if cell else (1, 2, 4))
    lstm = kind.startswith("LSTM")
    res = []
    for lib, m in ((flow, fm), (torch, tm)):
        xi, hi = lib.tensor(x, requires_grad=True), lib.tensor(h0, requires_grad=True)
        state = (hi, hi * 0.5) if lstm else hi
        out = m(xi, state)
        y = out[0] if lstm and cell else out if cell else out[0]
        (g,) = lib.autograd.grad((lib.tanh(y) ** 2).sum(), xi, create_graph=True)
        res.append(lib.autograd.grad((g * g).sum(), [xi, hi] + list(m.parameters())))
    for a, b in zip(*res):
        close(a, b, rtol=1e-6, atol=1e-9)


def test_unsupported_unary_special():
    raises_double_backward("special_i1_grad", flow.special.i1, uniform(0.5, 2))
    raises_double_backward("special_i1e_grad", flow.special.i1e, uniform(0.5, 2))
    raises_double_backward("special_i0e_grad", flow.special.i0e, uniform(0.5, 2))


def test_first_order_path_unchanged():
    # Without create_graph the gradients carry no graph (the fused backward ops ran).
    x = flow.tensor(uniform(-1, 1), requires_grad=True)
    (g,) = flow.autograd.grad((flow.tanh(x) * F.softmax(x, 1)).sum(), x)
    assert not g.requires_grad and g.grad_fn is None
