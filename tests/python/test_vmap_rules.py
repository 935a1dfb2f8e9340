"""flow.func.vmap's batching rules (python/oneflow_like/_vmap_rules.py): each rule against the
per-sample loop (the same values to 1e-6 in float32, exactly the same shapes and dtypes), the
batched path taken without per-sample fallbacks, and torch 1.13's functorch where handy."""
import warnings

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.func as ff
import oneflow_like.nn.functional as F
from oneflow_like import _vmap_rules

torch = pytest.importorskip("torch")
functorch = pytest.importorskip("functorch")


def arr(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, size=shape).astype(np.float32)


def t(a):
    return flow.tensor(a)


def loop(f, *args, **kw):
    _vmap_rules.enabled = False
    try:
        return ff.vmap(f, **kw)(*args)
    finally:
        _vmap_rules.enabled = True


def leaves(x):
    return ff._flatten(x)[0]


def same(a, b, tol=1e-6):
    la, lb = leaves(a), leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert tuple(x.shape) == tuple(y.shape), (x.shape, y.shape)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=tol, atol=tol)


def check(f, *args, fallbacks=(), tol=1e-6, **kw):
    """vmap(f) batched equals the loop; the batched path ran with exactly `fallbacks` per-sample."""
    got = ff.vmap(f, **kw)(*args)
    run = dict(_vmap_rules.last_run)
    assert run["path"] == "batched", run
    assert sorted(set(run["fallback_ops"])) == sorted(fallbacks), run
    same(got, loop(f, *args, **kw), tol)
    return got


def check_grad(f, *args, in_dims=0, argnums=0, **kw):
    """vmap(grad(f)) batched (backward ops included) equals the loop."""
    return check(ff.grad(f, argnums=argnums), *args, in_dims=in_dims, **kw)


# ---- elementwise --------------------------------------------------------------------------------
UNARY = {
    "sin": lambda x: x.sin(),
    "exp": lambda x: x.exp(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: F.relu(x),
    "gelu": lambda x: F.gelu(x),
    "silu": lambda x: F.silu(x),
    "softplus": lambda x: F.softplus(x),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "elu": lambda x: F.elu(x),
    "abs": lambda x: x.abs(),
    "sqrt": lambda x: (x * x + 1).sqrt(),
    "rsqrt": lambda x: (x * x + 1).rsqrt(),
    "log": lambda x: (x * x + 1).log(),
    "pow": lambda x: x**3,
    "reciprocal": lambda x: (x * x + 1).reciprocal(),
    "erf": lambda x: x.erf(),
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "atan": lambda x: x.atan(),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_and_its_backward(name):
    f = UNARY[name]
    x = t(arr(5, 3, 4, seed=1))
    check(f, x)
    check(f, x, in_dims=1, out_dims=2)
    check_grad(lambda a: f(a).sum(), x)


def test_binary_broadcasting_aligns_batch_dims():
    x, y, z = t(arr(4, 3, 5, seed=1)), t(arr(5, seed=2)), t(arr(3, 4, seed=3))
    f = lambda a, b: a * b + a / (b * b + 1) - b  # noqa: E731
    check(f, x, y, in_dims=(0, None))  # batched [3,5] with unbatched [5]
    check(f, y, x, in_dims=(None, 0))
    check(lambda a, b: a.unsqueeze(1) - b, z, x, in_dims=(1, 0))  # sample [3] against [3,5]
    check(lambda a, b: flow.maximum(a, b) + flow.pow(a.abs() + 1, b), x, y.expand(4, 5))
    check_grad(lambda a, b: (a * b).sin().sum(), x, y, in_dims=(0, None), argnums=(0, 1))
    check(lambda a: a + 2.5, x)
    check(lambda a: (a > 0).to(flow.float32) * a, x)


def test_where_clamp_masked_fill_ternary():
    x, y = t(arr(4, 6, seed=4)), t(arr(6, seed=5))
    check(lambda a, b: flow.where(a > 0, a, b), x, y, in_dims=(0, None))
    check(lambda a, b: flow.where(b > 0, a, 0.5), x, y, in_dims=(0, None))
    check(lambda a, lo: a.clamp(min=lo), x, y, in_dims=(0, None))
    check(lambda a: a.masked_fill(a > 0.3, -2.0), x)
    check(lambda a, b: flow.lerp(a, b, 0.25), x, y, in_dims=(0, None))
    check_grad(lambda a: flow.where(a > 0, a * a, -a).sum(), x)
    check_grad(lambda a: flow.maximum(a, a.flip(0)).sum(), x)


# ---- reductions, softmax ------------------------------------------------------------------------
REDUCTIONS = [
    ("sum", lambda a: a.sum()),
    ("sum_dim", lambda a: a.sum(1)),
    ("sum_keep", lambda a: a.sum(-1, keepdim=True)),
    ("mean", lambda a: a.mean((0, 2))),
    ("amax", lambda a: a.amax(1)),
    ("amin", lambda a: a.amin(-1, keepdim=True)),
    ("max_dim", lambda a: a.max(1)[0] + a.max(1)[1].to(flow.float32)),
    ("min_dim", lambda a: a.min(-1, keepdim=True)[0]),
    ("max_all", lambda a: a.max()),
    ("logsumexp", lambda a: a.logsumexp(1)),
    ("var", lambda a: a.var(1)),
    ("std", lambda a: a.std(-1, keepdim=True)),
    ("norm", lambda a: a.norm(dim=1)),
    ("norm_all", lambda a: a.norm()),
    ("prod", lambda a: a.prod(1)),
]


@pytest.mark.parametrize("name,f", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_and_backward(name, f):
    x = t(arr(4, 3, 5, 2, seed=6))
    check(f, x)
    check(f, x, in_dims=2)
    check_grad(lambda a: f(a).sum(), x)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_dims_and_backward(fn):
    x = t(arr(4, 3, 5, seed=7))
    for d in (0, 1, -1):
        check(lambda a: getattr(F, fn)(a, dim=d), x)
        check_grad(lambda a: (getattr(F, fn)(a, dim=d) * a).sum(), x)


# ---- matmul family ------------------------------------------------------------------------------
def test_matmul_family_batched_and_unbatched_operands():
    A, B3, v = t(arr(4, 3, 5, seed=8)), t(arr(4, 5, 2, seed=9)), t(arr(4, 5, seed=10))
    W, b = t(arr(2, 5, seed=11)), t(arr(2, seed=12))
    check(lambda a, w: a @ w.t(), A, W, in_dims=(0, None))
    check(lambda a, w: a @ w, A, B3)  # both batched: bmm
    check(lambda w, a: w @ a, W, B3, in_dims=(None, 0))
    check(lambda a, x: flow.mv(a, x), A, v)
    check(lambda x, y: flow.dot(x, y), v, v.flip(0))
    check(lambda a, w: flow.mm(a, w), A, B3)
    check(lambda x, w, bb: F.linear(x, w, bb), v, W, b, in_dims=(0, None, None))
    check(
        lambda x, w, bb: F.linear(x, w, bb),
        A,
        W.unsqueeze(0).expand(4, 2, 5),
        b,
        in_dims=(0, 0, None),
    )
    check(lambda x, w, bb: F.linear(x, w, bb), A, W, t(arr(4, 2, seed=5)), in_dims=(0, None, 0))
    check(
        lambda w, x, bb: F.linear(x, w, bb),
        B3.transpose(1, 2),
        t(arr(7, 5, seed=6)),
        b,
        in_dims=(0, None, None),
    )
    check(
        lambda c, a, w: flow.addmm(c, a, w, beta=0.5, alpha=2.0),
        t(arr(3, 2, seed=13)),
        A,
        B3,
        in_dims=(None, 0, 0),
    )
    check(
        lambda c, a, w: flow.addmm(c, a, w, beta=0.5),
        t(arr(4, 3, 2, seed=13)),
        A,
        W.t(),
        in_dims=(0, 0, None),
    )
    check(
        lambda c, a, w: flow.addmm(c, a, w),
        t(arr(3, 2, seed=13)),
        t(arr(3, 5, seed=3)),
        B3,
        in_dims=(None, None, 0),
    )
    check(lambda a, w: a[:, :1] @ w[:1], A, B3)  # contraction of size 1
    check(lambda a, w: flow.bmm(a.unsqueeze(0), w.unsqueeze(0)), A, B3)
    check(lambda a, w: flow.einsum("ij,jk->ik", a, w), A, B3)
    check(lambda x, y: x @ y, v, B3)  # 1-D @ 3-D sample
    check_grad(lambda a, w: ((a @ w).tanh()).sum(), A, B3, argnums=(0, 1))
    check_grad(lambda w, x: F.linear(x, w).pow(2).sum(), W, v, in_dims=(None, 0))


# ---- shape ops ----------------------------------------------------------------------------------
SHAPES = [
    ("view", lambda a: a.view(15, 2)),
    ("reshape", lambda a: a.reshape(-1)),
    ("flatten", lambda a: a.flatten(1)),
    ("unsqueeze", lambda a: a.unsqueeze(-1).unsqueeze(0)),
    ("squeeze", lambda a: a.unsqueeze(1).squeeze(1)),
    ("squeeze_all", lambda a: a.unsqueeze(1).squeeze()),
    ("transpose", lambda a: a.transpose(0, 2)),
    ("permute", lambda a: a.permute(2, 0, 1)),
    ("expand", lambda a: a[:, :1].expand(3, 4, 2)),
    ("expand_new", lambda a: a.expand(6, 3, 5, 2)),
    ("cat", lambda a: flow.cat([a, a * 2], dim=1)),
    ("stack", lambda a: flow.stack([a, a + 1], dim=-1)),
    ("split", lambda a: a.split([2, 3], dim=1)[1]),
    ("chunk", lambda a: a.chunk(2, dim=-1)[0]),
    ("select", lambda a: a.select(1, 2)),
    ("narrow", lambda a: a.narrow(1, 1, 3)),
    ("getitem", lambda a: a[1:, ::2, 0]),
    ("getitem_none", lambda a: a[None, 0, ..., 1]),
    ("flip", lambda a: a.flip(1)),
    ("pad", lambda a: F.pad(a, (1, 2))),
    ("tril", lambda a: a[..., 0].tril()),
    ("contiguous", lambda a: a.transpose(0, 1).contiguous().view(-1)),
]


@pytest.mark.parametrize("name,f", SHAPES, ids=[s[0] for s in SHAPES])
def test_shape_ops_and_backward(name, f):
    x = t(arr(4, 3, 5, 2, seed=14))
    check(f, x)
    check(f, x.movedim(0, 3), in_dims=3, out_dims=1)
    check_grad(lambda a: (f(a) * f(a).detach().sin()).sum(), x)


def test_cat_of_batched_and_unbatched():
    x, y = t(arr(4, 3, seed=15)), t(arr(2, seed=16))
    check(lambda a, b: flow.cat([a, b]), x, y, in_dims=(0, None))
    check(lambda a, b: flow.stack([a[:2], b]), x, y, in_dims=(0, None))


def test_index_select_and_gather():
    x = t(arr(4, 5, 3, seed=17))
    idx = flow.tensor([2, 0, 4])
    check(lambda a: a.index_select(0, idx), x)
    check(lambda a: a.index_select(1, idx[:2]), x)
    g = flow.tensor(np.random.default_rng(1).integers(0, 3, size=(4, 5, 2)))
    check(lambda a, i: a.gather(1, i), x, g)
    check(lambda a, i: a.gather(1, i), x, g[0], in_dims=(0, None))
    check_grad(lambda a: (a.index_select(0, idx) ** 2).sum(), x)
    check_grad(lambda a, i: a.gather(1, i).exp().sum(), x, g)


# ---- nn ops -------------------------------------------------------------------------------------
def test_conv_pool_unbatched_weights_fold_into_n():
    x = t(arr(4, 2, 9, 9, seed=18))
    w, b = t(arr(3, 2, 3, 3, seed=19)), t(arr(3, seed=20))
    f = lambda a: F.max_pool2d(F.relu(F.conv2d(a.unsqueeze(0), w, b, padding=1)), 2)  # noqa: E731
    check(f, x)
    check(lambda a: F.avg_pool2d(F.conv2d(a, w, stride=2), 2), x.unsqueeze(1))
    check(lambda a: F.conv1d(a.unsqueeze(0), w[:, :, 0], b), x[:, :, 0])
    check(lambda a: F.adaptive_avg_pool2d(a, 2), x)
    check_grad(lambda a: f(a).square().sum(), x)
    check_grad(lambda a: F.avg_pool2d(a, 3, stride=2, padding=1).exp().sum(), x)
    check_grad(lambda a: F.adaptive_avg_pool2d(a, 2).exp().sum(), x)
    check_grad(lambda a: F.conv1d(a.unsqueeze(0), w[:, :, 0], b).tanh().sum(), x[:, :, 0])


def test_conv_per_sample_weights_and_gradients():
    x = t(arr(4, 2, 2, 7, 7, seed=21))
    ws, bs = t(arr(4, 3, 2, 3, 3, seed=22)), t(arr(4, 3, seed=23))

    def f(w, bb, a):
        return F.conv2d(a, w, bb, padding=1).tanh().sum()

    check(lambda w, bb, a: F.conv2d(a, w, bb, padding=1), ws, bs, x)  # groups trick
    check(lambda w, bb, a: F.conv2d(a, w, bb), ws, bs, x[0], in_dims=(0, 0, None))
    check_grad(f, ws, bs, x, argnums=(0, 1, 2))
    check_grad(f, ws[0], bs[0], x, in_dims=(None, None, 0), argnums=(0, 1))


def test_norms_embedding_dropout_eval():
    x = t(arr(4, 3, 6, seed=24))
    w, b = t(arr(6, seed=25)), t(arr(6, seed=26))
    check(lambda a: F.layer_norm(a, (6,), w, b), x)
    check(lambda a: F.group_norm(a.unsqueeze(0), 3), t(arr(4, 6, 5, seed=27)))
    rm, rv = t(arr(6, seed=28)), t(arr(6, seed=29, low=0.5, high=1.5))
    check(lambda a: F.batch_norm(a, rm, rv, w, b, training=False), x)
    check(lambda a: F.dropout(a, 0.5, training=False), x)
    emb = t(arr(10, 4, seed=30))
    ids = flow.tensor(np.random.default_rng(2).integers(0, 10, size=(4, 3)))
    check(lambda i: F.embedding(i, emb), ids)
    check(lambda e, i: F.embedding(i, e), t(arr(4, 10, 4, seed=31)), ids)
    check_grad(lambda e, i: F.embedding(i, e).square().sum(), emb, ids, in_dims=(None, 0))
    check_grad(lambda a: F.layer_norm(a, (6,)).exp().sum(), x)
    # per-sample gradients of the affine parameters (the op sums them over every row)
    ln = lambda a, ww, bb: F.layer_norm(a, (6,), ww, bb).exp().sum()  # noqa: E731
    check_grad(ln, x, w, b, in_dims=(0, None, None), argnums=(0, 1, 2))
    gx = t(arr(4, 2, 6, 5, seed=34))
    gn = lambda a, ww, bb: F.group_norm(a, 3, ww, bb).exp().sum()  # noqa: E731
    check_grad(gn, gx, w, b, in_dims=(0, None, None), argnums=(0, 1, 2))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_and_their_backward(reduction):
    logits, y = t(arr(5, 3, 4, seed=32)), flow.tensor(
        [[0, 3, 1], [2, 2, 0], [1, 0, 3], [3, 1, 1], [0, 0, 2]]
    )
    tgt = t(arr(5, 3, 4, seed=33))

    def red(v):
        return v.sum() if reduction == "none" else v

    for loss in (
        lambda a, yy: F.cross_entropy(a, yy, reduction=reduction),
        lambda a, yy: F.nll_loss(F.log_softmax(a, -1), yy, reduction=reduction),
    ):
        check(loss, logits, y)
        check_grad(lambda a, yy: red(loss(a, yy)), logits, y)
    check(lambda a, yy: F.cross_entropy(a, yy, ignore_index=2), logits, y)
    for loss in (F.mse_loss, F.l1_loss):
        check(lambda a, b: loss(a, b, reduction=reduction), logits, tgt)
        check_grad(lambda a, b: red(loss(a, b, reduction=reduction)), logits, tgt)


# ---- randomness ---------------------------------------------------------------------------------
def test_random_ops_same_and_different():
    x = flow.ones(6, 1000)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ff.vmap(lambda a: F.dropout(a, 0.5))(x)
    same_ = ff.vmap(lambda a: F.dropout(a, 0.5), randomness="same")(x)
    assert _vmap_rules.last_run["path"] == "batched"
    assert all(flow.equal(same_[0], same_[i]) for i in range(6))
    diff = ff.vmap(lambda a: F.dropout(a, 0.5), randomness="different")(x)
    assert not flow.equal(diff[0], diff[1])
    assert abs(float((diff == 0).to(flow.float32).mean()) - 0.5) < 0.05
    r = ff.vmap(lambda a: a + flow.rand(1000), randomness="same")(x)
    assert tuple(r.shape) == (6, 1000) and flow.equal(r[0], r[5])
    r = ff.vmap(lambda a: a + flow.randn(1000), randomness="different")(x)
    assert not flow.equal(r[0], r[5]) and abs(float(r.std()) - 1.0) < 0.05
    # dropout's backward replays the forward's mask, per sample
    g, y = ff.vmap(
        ff.grad(lambda a: (lambda o: (o.sum(), o))(F.dropout(a, 0.5)), has_aux=True),
        randomness="different",
    )(x)
    same(g, (y != 0).to(flow.float32) * 2)
    assert not flow.equal(y[0], y[1])
    p = ff.vmap(lambda a: a[flow.randperm(1000)], randomness="different")(x * flow.arange(1000.0))
    assert _vmap_rules.last_run["path"] == "loop" and not flow.equal(p[0], p[1])
    # "same" reproduces the loop's draws exactly (one draw from the same generator state)
    flow.manual_seed(3)
    a = ff.vmap(lambda a: a * flow.rand(3), randomness="same")(x[:, :3])
    flow.manual_seed(3)
    b = loop(lambda a: a * flow.rand(3), x[:, :3], randomness="same")
    same(a, b)


# ---- in-place -----------------------------------------------------------------------------------
def test_inplace_on_batched_intermediates_and_the_unbatched_error():
    x, y = t(arr(4, 3, seed=34)), t(arr(3, seed=35))

    def f(a, b):
        c = a * 2
        c.add_(b)
        c.mul_(a)
        return c

    check(f, x, y, in_dims=(0, None))

    def g(a, b):
        c = b * 1.0  # unbatched
        c.add_(a)
        return c

    # torch 2.x's message (torch 1.13 raised its broadcast error instead)
    with pytest.raises(RuntimeError, match="is not possible because there exists a Tensor `other`"):
        ff.vmap(g, in_dims=(0, None))(x, y)
    # an in-place write into the caller's tensor runs the loop (which writes through its slices)
    z = x.clone()
    ff.vmap(lambda a: a.mul_(2))(z)
    assert _vmap_rules.last_run["path"] == "loop"
    same(z, x * 2)


# ---- composition --------------------------------------------------------------------------------
def test_in_dims_out_dims_pytrees_and_chunks():
    x, y = t(arr(3, 4, 5, seed=36)), t(arr(5, 4, seed=37))
    f = lambda d: {"s": d["a"] * d["b"], "t": (d["a"].sum(), d["b"])}  # noqa: E731
    check(f, {"a": x, "b": y}, in_dims=({"a": 1, "b": 1},), out_dims={"s": 1, "t": (0, -1)})
    check(lambda a, b: a @ b, x, y.t(), in_dims=(2, None), chunk_size=2)


def test_nested_vmap_and_vmap_of_grad_and_grad_of_vmap():
    x, W = t(arr(3, 4, 5, seed=38)), t(arr(5, 5, seed=39))
    f = lambda a: (a @ W).tanh().sum()  # noqa: E731
    got = check(ff.vmap(lambda a: (a @ W).tanh()), x)  # vmap(vmap(f))
    xt, Wt = torch.tensor(x.detach().numpy()), torch.tensor(W.detach().numpy())
    np.testing.assert_allclose(
        got.detach().numpy(),
        functorch.vmap(functorch.vmap(lambda a: (a @ Wt).tanh()))(xt).detach().numpy(),
        1e-6,
        1e-6,
    )
    check(ff.vmap(ff.grad(f)), x)
    # grad(vmap(f)): the replay is differentiated by the autograd engine
    xg = x.clone().requires_grad_()
    g = ff.grad(lambda a: ff.vmap(lambda r: (r @ W).tanh())(a).sum())(xg)
    assert _vmap_rules.last_run["path"] == "batched"
    gt = functorch.grad(lambda a: functorch.vmap(lambda r: (r @ Wt).tanh())(a).sum())(xt)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), 1e-5, 1e-6)
    # vmap(grad(f)) under an outer grad: second order through the batched backward ops
    h = ff.grad(lambda w: ff.vmap(ff.grad(lambda a: (a @ w).tanh().sum()))(x[0]).sum())(W)
    ht = functorch.grad(
        lambda w: functorch.vmap(functorch.grad(lambda a: (a @ w).tanh().sum()))(xt[0]).sum()
    )(Wt)
    np.testing.assert_allclose(h.detach().numpy(), ht.detach().numpy(), 1e-5, 1e-5)
    # detach inside the function stops the outer gradient in the replay too
    d = ff.grad(lambda a: ff.vmap(lambda r: r * r.detach())(a).sum())(xg)
    same(d, x)


def test_jacrev_jacfwd_hessian_unchanged_and_vmap_of_jacrev():
    x, W = t(arr(6, seed=40)), t(arr(6, 6, seed=41))
    f = lambda a: (W @ a).sin() * a  # noqa: E731
    for T in (ff.jacrev(f), ff.jacfwd(f), ff.hessian(lambda a: f(a).sum())):
        got = T(x)
        _vmap_rules.enabled = False
        try:
            ref = T(x)
        finally:
            _vmap_rules.enabled = True
        same(got, ref)
    xs = t(arr(3, 6, seed=42))
    check(ff.jacrev(f), xs)
    Wt = torch.tensor(W.detach().numpy())
    jt = functorch.vmap(functorch.jacrev(lambda a: (Wt @ a).sin() * a))(
        torch.tensor(xs.detach().numpy())
    )
    np.testing.assert_allclose(
        ff.vmap(ff.jacrev(f))(xs).detach().numpy(), jt.detach().numpy(), 1e-5, 1e-6
    )


def test_per_sample_grads_of_a_model_and_ensembling():
    model = flow.nn.Sequential(flow.nn.Linear(5, 8), flow.nn.ReLU(), flow.nn.Linear(8, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = t(arr(6, 5, seed=43)), flow.tensor([0, 1, 2, 1, 0, 2])

    def loss(p, a, b):
        return F.cross_entropy(ff.functional_call(model, p, (a.unsqueeze(0),)), b.unsqueeze(0))

    check(ff.grad(loss), params, x, y, in_dims=(None, 0, 0))
    models = [flow.nn.Linear(5, 3) for _ in range(4)]
    ps, bs = ff.stack_module_state(models)
    out = check(
        lambda p, b, a: ff.functional_call(models[0], (p, b), (a,)), ps, bs, x, in_dims=(0, 0, None)
    )
    same(out[2], models[2](x))


# ---- fallbacks ----------------------------------------------------------------------------------
def test_op_without_rule_runs_per_sample_with_a_warning(monkeypatch):
    a = t(arr(3, 4, 4, seed=44)) + 4 * flow.eye(4)
    ff.vmap(lambda m: m * 2)(a)  # the rule table is built
    monkeypatch.delitem(_vmap_rules._RULES, "linalg_inv")  # an op without a rule
    _vmap_rules._WARNED.discard("linalg_inv")
    with pytest.warns(UserWarning, match="batching rule for linalg_inv"):
        got = ff.vmap(lambda m: flow.linalg.inv(m) * 2)(a)
    assert "linalg_inv" in _vmap_rules.last_run["fallback_ops"]
    same(got, loop(lambda m: flow.linalg.inv(m) * 2, a), 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per op
        ff.vmap(lambda m: flow.linalg.inv(m))(a)


def test_unrecordable_function_runs_the_loop():
    x = t(arr(4, 3, seed=45))

    def f(a):
        return a * 2 if a.sum().item() > 0 else -a

    got = ff.vmap(f)(x)
    assert _vmap_rules.last_run["path"] == "loop"
    same(got, flow.stack([f(x[i]) for i in range(4)]))


def test_error_messages_unchanged():
    x = t(arr(4, 3, seed=46))
    with pytest.raises(ValueError, match="must only return Tensors"):
        ff.vmap(lambda a: 1.0)(x)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        ff.vmap(lambda a, b: a + b)(x, x[:3])
    with pytest.raises(ValueError, match=r"\[matmul\] size mismatch"):
        ff.vmap(lambda a: a @ flow.ones(4, 2))(x)


# ---- linear algebra -----------------------------------------------------------------------------
def f64(*shape, seed=0):
    return flow.tensor(np.random.default_rng(seed).uniform(-1, 1, size=shape))


def well_conditioned(*shape, seed=0):
    return f64(*shape, seed=seed) + 3 * flow.eye(shape[-1], dtype=flow.float64)


def spd(m):
    return m @ m.transpose(-1, -2) + flow.eye(m.shape[-1], dtype=m.dtype)


LINALG = [
    ("solve", lambda a, b: flow.linalg.solve(a, b)),
    ("solve_matrix", lambda a, b: flow.linalg.solve(a, b.unsqueeze(-1).expand(3, 2) * 1.5)),
    ("inv", lambda a, b: flow.linalg.inv(a) @ b),
    ("det", lambda a, b: flow.linalg.det(a) * b),
    ("slogdet", lambda a, b: flow.linalg.slogdet(a)[1] * b),
    ("cholesky", lambda a, b: flow.linalg.cholesky(spd(a)) @ b),
    ("qr", lambda a, b: flow.linalg.qr(a)[1] @ b),
    ("svdvals", lambda a, b: flow.linalg.svdvals(a) * b),
    ("eigh", lambda a, b: flow.linalg.eigh(spd(a))[0] * b),
    ("lstsq", lambda a, b: flow.linalg.lstsq(a, b.unsqueeze(-1)).solution),
    ("pinv", lambda a, b: flow.linalg.pinv(a) @ b),
    ("matrix_norm_fro", lambda a, b: flow.linalg.matrix_norm(a) * b),
    ("matrix_norm_2", lambda a, b: flow.linalg.matrix_norm(a, ord=2) * b),
    ("cross", lambda a, b: flow.linalg.cross(a, b.expand(3, 3))),
]


@pytest.mark.parametrize("name,f", LINALG, ids=[r[0] for r in LINALG])
def test_linalg_and_backward_f64(name, f):
    A, b = well_conditioned(4, 3, 3, seed=50), f64(4, 3, seed=51)
    check(f, A, b, tol=1e-10)
    check(f, A[0], b, in_dims=(None, 0), tol=1e-10)  # one side unbatched
    check(f, A, b[0], in_dims=(0, None), tol=1e-10)
    check_grad(lambda a, v: f(a, v).sin().sum(), A, b, argnums=(0, 1), tol=1e-10)


def test_linalg_against_functorch_and_nested():
    A, b = well_conditioned(4, 3, 3, seed=52), f64(4, 3, seed=53)
    At, bt = torch.tensor(A.detach().numpy()), torch.tensor(b.detach().numpy())
    got = check(lambda a, v: flow.linalg.solve(a, v), A, b, tol=1e-10)
    ref = functorch.vmap(torch.linalg.solve)(At, bt)
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), 1e-10, 1e-10)
    g = check_grad(lambda a: flow.linalg.det(a), A, tol=1e-10)
    np.testing.assert_allclose(
        g.detach().numpy(), functorch.vmap(functorch.grad(torch.linalg.det))(At)
    )
    # vmap(vmap(inv)) and vmap(grad) of an SVD-based function
    AA = well_conditioned(2, 4, 3, 3, seed=54)
    check(ff.vmap(lambda a: flow.linalg.inv(a)), AA, tol=1e-10)
    check_grad(lambda a: flow.linalg.svdvals(a).sum(), f64(4, 5, 3, seed=55), tol=1e-10)


def test_linalg_float32():
    A = t(arr(4, 3, 3, seed=56)) + 3 * flow.eye(3)
    check(lambda a: flow.linalg.inv(a), A, tol=1e-6)
    check_grad(lambda a: flow.linalg.slogdet(a)[1], A, tol=1e-6)


# ---- advanced indexing --------------------------------------------------------------------------
def test_tensor_indexing_batched_and_unbatched_indices():
    x = t(arr(4, 5, 3, seed=57))
    rng = np.random.default_rng(3)
    i_b = flow.tensor(rng.integers(0, 5, size=(4, 2)))
    j_b = flow.tensor(rng.integers(0, 3, size=(4, 2)))
    i_u = flow.tensor([4, 0, 2])
    check(lambda a: a[i_u], x)  # unbatched index
    check(lambda a: a[:, flow.tensor([2, 0])], x)
    check(lambda a, i: a[i], x, i_b)  # batched index
    check(lambda a, i, j: a[i, j], x, i_b, j_b)
    check(lambda a, j: a[:, j], x, j_b)
    check(lambda a, i: a[i], x[0], i_b, in_dims=(None, 0))  # only the index batched
    check(lambda a, i: flow.take_along_dim(a, i.unsqueeze(-1), dim=0), x, i_b)
    check_grad(lambda a, i: a[i].exp().sum(), x, i_b)
    check_grad(lambda a, i, j: (a[i, j] ** 2).sum(), x, i_b, j_b)
    check_grad(lambda a: a[:, flow.tensor([2, 2, 0])].exp().sum(), x)
    xt, it = torch.tensor(x.detach().numpy()), torch.tensor(i_b.detach().numpy())
    np.testing.assert_allclose(
        ff.vmap(lambda a, i: a[i])(x, i_b).detach().numpy(),
        functorch.vmap(lambda a, i: a[i])(xt, it),
    )


def test_index_put_and_setitem():
    x, v = t(arr(4, 5, 3, seed=58)), t(arr(4, 2, 3, seed=59))
    i_b = flow.tensor(np.random.default_rng(4).integers(0, 5, size=(4, 2)))
    i_u = flow.tensor([1, 3])
    check(lambda a, vv: flow.index_put(a, (i_u,), vv), x, v)
    check(lambda a, vv: flow.index_put(a, (i_u,), vv, accumulate=True), x, v)
    check(lambda a, vv, i: flow.index_put(a, (i,), vv, accumulate=True), x, v, i_b)
    check(lambda a, vv: flow.index_put(a, (i_u,), vv), x[0], v, in_dims=(None, 0))

    def setitem(a, i):
        c = a * 1.0
        c[i] = 2.0
        return c

    check(setitem, x, i_b)
    check(setitem, x, i_u, in_dims=(0, None))
    check_grad(lambda a, vv, i: flow.index_put(a, (i,), vv).sin().sum(), x, v, i_b, argnums=(0, 1))


def test_data_dependent_shapes_raise_like_torch():
    x = t(arr(4, 5, seed=60))
    with pytest.raises(RuntimeError, match=r"vmap over `mask` in torch.masked_select"):
        ff.vmap(lambda a: flow.masked_select(a, a > 0))(x)
    with pytest.raises(RuntimeError, match="Attempted to vmap over aten::nonzero"):
        ff.vmap(lambda a: flow.nonzero(a > 0))(x)
    with pytest.raises(RuntimeError, match="indexing with a boolean mask"):
        ff.vmap(lambda a: a[a > 0])(x)
    m = flow.tensor([True, False, True, True, False])  # an unbatched mask is fine
    check(lambda a: a[m], x)


# ---- losses with weights and label smoothing ----------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_and_label_smoothed_cross_entropy(reduction):
    logits = t(arr(5, 3, 4, seed=61))
    y = flow.tensor(np.random.default_rng(5).integers(0, 4, size=(5, 3)))
    y_all = y.clone()
    y[1, 2] = -100
    w = flow.tensor([1.0, 2.0, 0.5, 1.5])
    red = (lambda v: v.sum()) if reduction == "none" else (lambda v: v)
    for kw in ({"weight": w}, {"label_smoothing": 0.2}, {"weight": w, "label_smoothing": 0.1}):

        def loss(a, yy):
            return F.cross_entropy(a, yy, reduction=reduction, **kw)

        check(loss, logits, y)
        check_grad(lambda a, yy: red(loss(a, yy)), logits, y)
        # torch 1.13's label smoothing fails on ignored targets: compared without them
        got = check(loss, logits, y_all)
        tkw = {
            k: torch.tensor(v.detach().numpy()) if isinstance(v, flow.Tensor) else v
            for k, v in kw.items()
        }
        lt, yt = torch.tensor(logits.detach().numpy()), torch.tensor(y_all.detach().numpy())
        tl = lambda a, yy: torch.nn.functional.cross_entropy(  # noqa: E731
            a, yy, reduction=reduction, **tkw
        )
        if "label_smoothing" in kw:  # functorch 1.13 cannot vmap it: torch per sample
            ref = torch.stack([tl(lt[i], yt[i]) for i in range(5)])
        else:
            ref = functorch.vmap(tl)(lt, yt)
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), 1e-5, 1e-6)
    check(
        lambda a, yy: F.nll_loss(F.log_softmax(a, -1), yy, weight=w, reduction=reduction), logits, y
    )


# ---- normalization ------------------------------------------------------------------------------
def test_training_batch_norm_per_sample_statistics():
    x, w, b = t(arr(4, 6, 3, 5, seed=62)), t(arr(3, seed=63)), t(arr(3, seed=64))
    bn = lambda a, ww, bb: F.batch_norm(a, None, None, ww, bb, training=True)  # noqa: E731
    got = check(bn, x, w, b, in_dims=(0, None, None))
    check(bn, x, t(arr(4, 3, seed=65)), b, in_dims=(0, 0, None))
    check_grad(
        lambda a, ww, bb: bn(a, ww, bb).exp().sum(),
        x,
        w,
        b,
        in_dims=(0, None, None),
        argnums=(0, 1, 2),
    )
    ref = functorch.vmap(
        lambda a: torch.nn.functional.batch_norm(
            a,
            None,
            None,
            torch.tensor(w.detach().numpy()),
            torch.tensor(b.detach().numpy()),
            training=True,
        )
    )(torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), 1e-5, 1e-5)
    m = flow.nn.BatchNorm1d(3, track_running_stats=False)
    check(lambda a: m(a), x)
    check(lambda a: F.instance_norm(a), x)
    # running statistics updated in place under vmap: torch's error
    with pytest.raises(RuntimeError, match="Batch norm got a batched tensor as input while the"):
        ff.vmap(flow.nn.BatchNorm1d(3))(x)
    m2 = flow.nn.BatchNorm1d(3).eval()
    check(lambda a: m2(a), x)


# ---- recurrent networks, attention --------------------------------------------------------------
@pytest.mark.parametrize(
    "kind,kw",
    [
        ("LSTM", {}),
        ("GRU", {}),
        ("RNN", {}),
        ("LSTM", {"num_layers": 2, "bidirectional": True}),
        ("LSTM", {"proj_size": 2}),
    ],
    ids=["lstm", "gru", "rnn", "lstm2bi", "lstm_proj"],
)
def test_rnn_seq_forward_and_per_sample_gradients(kind, kw):
    flow.manual_seed(0)
    net = getattr(flow.nn, kind)(3, 4, batch_first=True, **kw)
    params = {k: v.detach() for k, v in net.named_parameters()}
    x = t(arr(5, 6, 3, seed=66))
    check(lambda a: net(a.unsqueeze(0))[0], x)
    check(lambda a: net(a)[1], x)  # unbatched sample: h_n

    def loss(p, a):
        out = ff.functional_call(net, p, (a.unsqueeze(0),))[0]
        return out.tanh().sum()

    check(ff.grad(loss, argnums=(0, 1)), params, x, in_dims=(None, 0))


def test_rnn_cells_and_their_gradients():
    flow.manual_seed(1)
    x, h = t(arr(5, 2, 3, seed=67)), t(arr(5, 2, 4, seed=68))
    for cell in (flow.nn.LSTMCell(3, 4), flow.nn.GRUCell(3, 4), flow.nn.RNNCell(3, 4)):
        params = {k: v.detach() for k, v in cell.named_parameters()}
        hx = (h, h * 0.5) if isinstance(cell, flow.nn.LSTMCell) else h
        f = lambda p, a, s: ff.functional_call(cell, p, (a, s))  # noqa: E731
        check(f, params, x, hx, in_dims=(None, 0, 0))
        g = lambda p, a, s: sum(o.sin().sum() for o in leaves(f(p, a, s)))  # noqa: E731
        check(ff.grad(g, argnums=(0, 1)), params, x, hx, in_dims=(None, 0, 0))


def torch_attention(q, k, v, causal):
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        L, S = s.shape[-2], s.shape[-1]
        s = s.masked_fill(torch.ones(L, S, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1) @ v


def test_scaled_dot_product_attention_fused_and_backward():
    q, k, v = (t(arr(4, 2, 5, 8, seed=s)) for s in (69, 70, 71))
    for causal in (False, True):
        f = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal)  # noqa: E731
        got = check(f, q, k, v)
        check(f, q, k[0], v[0], in_dims=(0, None, None))
        check_grad(lambda a, b, c: f(a, b, c).exp().sum(), q, k, v, argnums=(0, 1, 2))
        # torch 1.13 has no scaled_dot_product_attention: its math composite under functorch
        ref = functorch.vmap(lambda a, b, c: torch_attention(a, b, c, causal))(
            *(torch.tensor(z.detach().numpy()) for z in (q, k, v))
        )
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), 1e-5, 1e-6)
    # per-sample gradients of a Transformer layer: in float64 (float32 gradients near zero,
    # where layer_norm's invariance cancels terms, differ from the loop's by rounding)
    layer = flow.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    params = {k_: p.detach() for k_, p in layer.named_parameters()}
    loss = lambda p, a: ff.functional_call(layer, p, (a.unsqueeze(0),)).square().sum()  # noqa
    check(ff.grad(loss), params, q[:, 0].double(), in_dims=(None, 0), tol=1e-10)


def test_dropout_family_batched():
    x = flow.ones(6, 40, 50)
    for f in (
        lambda a: F.dropout(a, 0.3, training=True),
        lambda a: F.alpha_dropout(a, 0.3, training=True),
        lambda a: F.dropout1d(a, 0.3, training=True),
        lambda a: F.feature_alpha_dropout(a, 0.3, training=True),
    ):
        out = ff.vmap(f, randomness="different")(x)
        assert _vmap_rules.last_run["path"] == "batched", _vmap_rules.last_run
        assert _vmap_rules.last_run["fallback_ops"] == []
        assert not flow.equal(out[0], out[1])
        same_ = ff.vmap(f, randomness="same")(x)
        assert all(flow.equal(same_[0], same_[i]) for i in range(6))


# ---- out_dims=None, the trace cache -------------------------------------------------------------
def test_out_dims_none_raises_on_a_batched_output():
    x = t(arr(4, 3, seed=72))
    W = t(arr(3, seed=73))

    def f(a):
        return a * 2

    with pytest.raises(ValueError, match=r"vmap\(f, \.\.\.\): `f` can not return a BatchedTensor"):
        ff.vmap(f, out_dims=None)(x)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        loop(f, x, out_dims=None)
    out = ff.vmap(lambda a: (a * 2, W * 3), out_dims=(0, None))(x)
    same(out[1], W * 3)
    same(out[0], x * 2)


def test_trace_cache_records_once_and_guards_what_it_read():
    W = t(arr(3, 3, seed=74))
    x = t(arr(4, 3, seed=75))

    def f(w, a):
        return (a @ w).tanh().sum()

    g = ff.vmap(ff.grad(f), in_dims=(None, 0))
    _vmap_rules._CACHE.clear()
    h0 = _vmap_rules.cache_stats["hits"]
    for _ in range(3):
        r = g(W, x)
    assert _vmap_rules.cache_stats["hits"] - h0 == 2
    same(r, loop(ff.grad(f), W, x, in_dims=(None, 0)))
    # a new vmap(grad(f)) each step (the same f) hits too
    for _ in range(2):
        ff.vmap(ff.grad(f), in_dims=(None, 0))(W, x)
    assert _vmap_rules.cache_stats["hits"] - h0 == 4
    # another shape, dtype or requires_grad records again
    m0 = _vmap_rules.cache_stats["misses"]
    g(W, x[:3])
    g(W.double(), x.double())
    assert _vmap_rules.cache_stats["misses"] - m0 == 2
    # a captured tensor rebound in the closure (or a module's parameter replaced) is a new key;
    # an in-place update is seen by the cached trace
    V = t(arr(3, seed=76))
    k = ff.vmap(lambda a: a * V)
    same(k(x), x * V)
    V.mul_(2)
    same(k(x), x * V)
    V = t(arr(3, seed=77))
    same(k(x), x * V)
    lin = flow.nn.Linear(3, 2)
    k2 = ff.vmap(lambda a: lin(a))
    k2(x)
    lin.weight = flow.nn.Parameter(lin.weight.detach() * 3)
    same(k2(x), lin(x))


G_SCALE = t(arr(3, seed=78))


def _reads_a_global(a):
    return a * G_SCALE


def test_trace_cache_guards_globals_module_attributes_and_random_ops():
    global G_SCALE
    x = t(arr(4, 3, seed=79))
    k = ff.vmap(_reads_a_global)
    same(k(x), x * G_SCALE)
    G_SCALE = t(arr(3, seed=80))  # rebound global: recorded again
    same(k(x), x * G_SCALE)

    class Scaled(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.s = t(arr(3, seed=81))  # a plain tensor attribute (no buffer)
            self.p = 2.0

        def forward(self, a):
            return a * self.s * self.p

    m = Scaled()
    km = ff.vmap(m)
    same(km(x), m(x))
    m.s = t(arr(3, seed=82))
    m.p = 3.0
    same(km(x), m(x))
    # a function drawing random numbers is recorded every call (its seeds are in the trace)
    d = ff.vmap(lambda a: F.dropout(a, 0.5), randomness="different")
    ones = flow.ones(4, 200)
    assert not flow.equal(d(ones), d(ones))


def test_rnn_input_gradients_fold_and_lstm_against_torch():
    flow.manual_seed(2)
    net = flow.nn.LSTM(3, 4, batch_first=True)
    x = t(arr(5, 6, 3, seed=83))
    # only the input's gradient: rnn_seq_grad runs once with the batch folded into N
    check(ff.grad(lambda a: net(a.unsqueeze(0))[0].tanh().sum()), x)
    tnet = torch.nn.LSTM(3, 4, batch_first=True)
    with torch.no_grad():
        for (_, tp), (_, p) in zip(tnet.named_parameters(), net.named_parameters()):
            tp.copy_(torch.tensor(p.detach().numpy()))
    params = {k: v.detach() for k, v in net.named_parameters()}

    def loss(p, a):
        return ff.functional_call(net, p, (a.unsqueeze(0),))[0].tanh().sum()

    got = check(ff.grad(loss), params, x, in_dims=(None, 0))
    # functorch 1.13 cannot vmap nn.LSTM's per-sample gradients: torch.autograd per sample
    xt = torch.tensor(x.detach().numpy())
    names = [k for k, _ in tnet.named_parameters()]
    per = [
        torch.autograd.grad(tnet(xt[i].unsqueeze(0))[0].tanh().sum(), list(tnet.parameters()))
        for i in range(5)
    ]
    ref = {k: torch.stack([g[j] for g in per]) for j, k in enumerate(names)}
    for k in params:
        np.testing.assert_allclose(got[k].detach().numpy(), ref[k].detach().numpy(), 1e-5, 1e-6)


def test_attention_dropout_and_nested_vmap_of_new_rules():
    q = t(arr(4, 3, 6, 8, seed=84))
    f = lambda a: F.scaled_dot_product_attention(a, a, a, dropout_p=0.3)  # noqa: E731
    out = ff.vmap(f, randomness="different")(q)
    assert _vmap_rules.last_run["fallback_ops"] == [] and not flow.equal(out[0], out[1])
    # "same": one seed, every sample the loop's mask (the op runs per sample)
    flow.manual_seed(4)
    with pytest.warns(UserWarning, match="_scaled_dot_product_flash_attention"):
        got = ff.vmap(f, randomness="same")(q)
    assert _vmap_rules.last_run["fallback_ops"] == ["_scaled_dot_product_flash_attention"]
    flow.manual_seed(4)
    same(got, loop(f, q, randomness="same"))
    # vmap(vmap(f)) through the new rules
    check(ff.vmap(lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True)), q)
    idx = flow.tensor(np.random.default_rng(6).integers(0, 6, size=(4, 3, 2)))
    check(ff.vmap(lambda a, i: a[i]), q, idx)
    check(ff.vmap(lambda a: F.batch_norm(a, None, None, training=True)), q)
    check(ff.vmap(ff.grad(lambda a: flow.linalg.det(a[:, :6]))), q, tol=1e-5)


def test_eval_batch_norm_per_sample_affine_gradients():
    x, w, b = t(arr(4, 6, 3, 5, seed=85)), t(arr(3, seed=86)), t(arr(3, seed=87))
    rm, rv = t(arr(3, seed=88)), t(arr(3, seed=89, low=0.5, high=1.5))

    def f(a, ww, bb):
        return F.batch_norm(a, rm, rv, ww, bb, training=False).exp().sum()

    check_grad(f, x, w, b, in_dims=(0, None, None), argnums=(0, 1, 2))


# ---- complex tensors ----------------------------------------------------------------------------
def c128(*shape, seed=0):
    r = np.random.default_rng(seed)
    return flow.tensor(r.uniform(-1, 1, size=shape) + 1j * r.uniform(-1, 1, size=shape))


def c64(*shape, seed=0):
    return c128(*shape, seed=seed).to(flow.complex64)


def ceye(n, dtype=flow.complex128):
    return flow.eye(n, dtype=flow.float64).to(dtype)


def tt(x):
    """A flow tensor as torch's."""
    return torch.from_numpy(x.detach().numpy().copy())


COMPLEX_ELEMENTWISE = [
    ("mul_scalar", lambda z, w: z * 2),
    ("mul_complex_scalar", lambda z, w: z * (1 - 2j)),
    ("add_conj", lambda z, w: z + w.conj()),
    ("mul", lambda z, w: z * w),
    ("div", lambda z, w: z / (w + 3)),
    ("pow", lambda z, w: z**3),
    ("exp", lambda z, w: z.exp()),
    ("sqrt", lambda z, w: z.sqrt()),
    ("log", lambda z, w: (z + 3).log()),
    ("reciprocal", lambda z, w: (z + 3).reciprocal()),
    ("view_as_real", lambda z, w: flow.view_as_real(z) * 1),
    ("view_as_complex", lambda z, w: flow.view_as_complex(flow.view_as_real(z) * 2)),
    ("real_imag", lambda z, w: z.real * w.imag),
    ("conj", lambda z, w: z.conj() * w),
    ("abs", lambda z, w: z.abs()),
    ("angle", lambda z, w: z.angle()),
    ("polar", lambda z, w: flow.polar(z.abs(), w.angle())),
    ("complex", lambda z, w: flow.complex(z.real, w.imag)),
    ("where", lambda z, w: flow.where(z.real > 0, z, w)),
    ("sum", lambda z, w: z.sum()),
    ("sum_dim_mean", lambda z, w: z.sum(-1) + w.mean(-1)),
    ("vector_norm", lambda z, w: flow.linalg.vector_norm(z) + w.abs().sum()),
]


@pytest.mark.parametrize("name,f", COMPLEX_ELEMENTWISE, ids=[r[0] for r in COMPLEX_ELEMENTWISE])
def test_complex_elementwise_views_parts_and_reductions(name, f):
    z, w = c128(4, 3, 5, seed=70), c128(4, 3, 5, seed=71)
    check(f, z, w, tol=1e-10)
    check(f, z[0], w, in_dims=(None, 0), tol=1e-10)  # one side unbatched
    check(f, z.movedim(0, 1), w.movedim(0, 2), in_dims=(1, 2), tol=1e-10)  # strided batches
    check(f, c64(4, 3, 5, seed=72), c64(4, 3, 5, seed=73), tol=1e-6)
    if name not in ("view_as_real", "real_imag", "abs", "angle"):
        # vmap(grad) of a real loss of the complex result, against functorch 1.13
        def loss(z, w):
            y = f(z, w)
            y = y if y.dtype.is_complex else flow.complex(y, y * 0)
            return (y * y.conj()).real.sum() + y.imag.sum()

        g = check_grad(loss, z, w, argnums=(0, 1), tol=1e-10)

        def tloss(z, w):
            y = _TORCH_ELEMENTWISE[name](z, w)
            y = y if y.is_complex() else torch.complex(y, y * 0)
            return (y * y.conj()).real.sum() + y.imag.sum()

        ref = functorch.vmap(functorch.grad(tloss, argnums=(0, 1)))(tt(z), tt(w))
        for a, b in zip(g, ref):
            np.testing.assert_allclose(
                a.detach().numpy(), b.resolve_conj().detach().numpy(), rtol=1e-10, atol=1e-10
            )


_TORCH_ELEMENTWISE = {
    "mul_scalar": lambda z, w: z * 2,
    "mul_complex_scalar": lambda z, w: z * (1 - 2j),
    "add_conj": lambda z, w: z + w.conj(),
    "mul": lambda z, w: z * w,
    "div": lambda z, w: z / (w + 3),
    "pow": lambda z, w: z**3,
    "exp": lambda z, w: z.exp(),
    "sqrt": lambda z, w: z.sqrt(),
    "log": lambda z, w: (z + 3).log(),
    "reciprocal": lambda z, w: (z + 3).reciprocal(),
    "view_as_complex": lambda z, w: torch.view_as_complex(torch.view_as_real(z) * 2),
    "conj": lambda z, w: z.conj() * w,
    "polar": lambda z, w: torch.polar(z.abs(), w.angle()),
    "complex": lambda z, w: torch.complex(z.real, w.imag),
    "where": lambda z, w: torch.where(z.real > 0, z, w),
    "sum": lambda z, w: z.sum(),
    "sum_dim_mean": lambda z, w: z.sum(-1) + w.mean(-1),
    "vector_norm": lambda z, w: torch.linalg.vector_norm(z) + w.abs().sum(),
}


COMPLEX_MATMUL = [
    ("matmul", lambda a, b: a @ b),
    ("mv", lambda a, b: a @ b[:, 0]),
    ("bmm", lambda a, b: flow.bmm(a.unsqueeze(0), b.unsqueeze(0))),
    ("einsum", lambda a, b: flow.einsum("ij,jk->ik", a, b.conj())),
    ("adjoint", lambda a, b: a.mH @ b),
    ("linear", lambda a, b: flow.nn.functional.linear(a, b)),
]


@pytest.mark.parametrize("name,f", COMPLEX_MATMUL, ids=[r[0] for r in COMPLEX_MATMUL])
def test_complex_matmul_family(name, f):
    A, B = c128(4, 3, 3, seed=74), c128(4, 3, 3, seed=75)
    check(f, A, B, tol=1e-10)
    check(f, A[0], B, in_dims=(None, 0), tol=1e-10)
    check(f, A, B[0], in_dims=(0, None), tol=1e-10)
    check(f, c64(4, 3, 3, seed=76), c64(4, 3, 3, seed=77), tol=1e-6)
    check_grad(lambda a, b: f(a, b).abs().sum(), A, B, argnums=(0, 1), tol=1e-10)


COMPLEX_FFT = [
    ("fft", lambda z: flow.fft.fft(z)),
    ("ifft_dim0", lambda z: flow.fft.ifft(z, dim=0, norm="ortho")),
    ("fft_n", lambda z: flow.fft.fft(z, n=7)),
    ("fft2", lambda z: flow.fft.fft2(z)),
    ("fftn", lambda z: flow.fft.fftn(z, dim=(-1, 0))),
    ("rfft", lambda z: flow.fft.rfft(z.real)),
    ("irfft", lambda z: flow.fft.irfft(z)),
    ("rfft2_irfft2", lambda z: flow.fft.irfft2(flow.fft.rfft2(z.imag), s=(3, 6))),
    ("hfft", lambda z: flow.fft.hfft(z)),
    ("ihfft", lambda z: flow.fft.ihfft(z.real)),
    ("fftshift", lambda z: flow.fft.fftshift(z)),
]


@pytest.mark.parametrize("name,f", COMPLEX_FFT, ids=[r[0] for r in COMPLEX_FFT])
def test_complex_fft_family(name, f):
    z = c128(4, 3, 6, seed=78)
    check(f, z, tol=1e-10)
    check(f, z, in_dims=2, tol=1e-10)
    check(f, c64(4, 3, 6, seed=79), tol=1e-5)
    check_grad(lambda x: f(x).abs().sum(), z, tol=1e-10)


def test_complex_fft_against_functorch():
    z = c128(4, 3, 6, seed=80)
    got = check(lambda x: flow.fft.fft2(x, norm="forward"), z, tol=1e-10)
    ref = functorch.vmap(lambda x: torch.fft.fft2(x, norm="forward"))(tt(z))
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = check_grad(lambda x: flow.fft.rfft(x.real).abs().sum(), z, tol=1e-10)
    ref = functorch.vmap(functorch.grad(lambda x: torch.fft.rfft(x.real).abs().sum()))(tt(z))
    np.testing.assert_allclose(g.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10)


def chermitian(a):
    return a + a.mH


def cspd(a):
    return a @ a.mH + ceye(a.shape[-1], a.dtype)


COMPLEX_LINALG = [
    ("solve", lambda a, b: flow.linalg.solve(a + 3 * ceye(3), b)),
    ("inv", lambda a, b: flow.linalg.inv(a + 3 * ceye(3)) @ b),
    ("det", lambda a, b: flow.linalg.det(a) * b),
    ("slogdet", lambda a, b: flow.linalg.slogdet(a)[0] * flow.linalg.slogdet(a)[1] * b),
    ("cholesky", lambda a, b: flow.linalg.cholesky(cspd(a)) @ b),
    ("qr", lambda a, b: flow.linalg.qr(a)[1] @ b),
    ("svdvals", lambda a, b: flow.linalg.svdvals(a) * b),
    ("svd_gauge_invariant", lambda a, b: _usv(a) @ b),
    ("eigh_values", lambda a, b: flow.linalg.eigh(chermitian(a))[0] * b),
    ("eigh_projector", lambda a, b: _projector(flow.linalg.eigh(chermitian(a))[1]) @ b),
    ("eigvals", lambda a, b: flow.linalg.eigvals(a) * b),
    ("eig_invariant", lambda a, b: flow.linalg.eig(a)[1].abs() * b),
    ("lstsq", lambda a, b: flow.linalg.lstsq(a + 3 * ceye(3), b.unsqueeze(-1)).solution),
    ("pinv", lambda a, b: flow.linalg.pinv(a) @ b),
]


def _usv(a):
    u, s, vh = flow.linalg.svd(a, full_matrices=False)
    return (u * s.to(a.dtype).unsqueeze(-2)) @ vh


def _projector(v):
    return v[..., :1] @ v[..., :1].mH


@pytest.mark.parametrize("name,f", COMPLEX_LINALG, ids=[r[0] for r in COMPLEX_LINALG])
def test_complex_linalg_and_backward(name, f):
    A, b = c128(4, 3, 3, seed=81), c128(4, 3, seed=82)
    check(f, A, b, tol=1e-10)
    check(f, A[0], b, in_dims=(None, 0), tol=1e-10)
    check(f, A, b[0], in_dims=(0, None), tol=1e-10)
    check_grad(lambda a, v: f(a, v).abs().sum(), A, b, argnums=(0, 1), tol=1e-10)


@pytest.mark.parametrize("op", ["eigh", "eig", "svd"])
def test_complex_vector_phase_check_under_vmap_of_grad(op):
    A = c128(4, 3, 3, seed=93)
    vectors = {
        "eigh": lambda a: flow.linalg.eigh(chermitian(a))[1],
        "eig": lambda a: flow.linalg.eig(a)[1],
        "svd": lambda a: flow.linalg.svd(a)[0],
    }[op]
    # the phase check recorded with the gradient runs on every sample after the batched replay
    with pytest.raises(RuntimeError, match="in the complex case are specified up to"):
        ff.vmap(ff.grad(lambda a: vectors(a).real.sum()))(A)
    check_grad(lambda a: (vectors(a).abs() ** 3).sum(), A, tol=1e-10)  # gauge invariant: batched


def test_complex_matrix_exp_runs_per_sample():
    """matrix_exp's number of squarings depends on ||A|| (read on the host), so a function calling
    it cannot be recorded: vmap runs it once per sample (real and complex alike), with
    functorch's values."""
    A = c128(4, 3, 3, seed=89)
    got = ff.vmap(flow.linalg.matrix_exp)(A)
    assert _vmap_rules.last_run["path"] == "loop"
    ref = functorch.vmap(torch.linalg.matrix_exp)(tt(A))
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_complex_linalg_against_functorch():
    A, b = c128(4, 3, 3, seed=83), c128(4, 3, seed=84)
    At, bt = tt(A), tt(b)
    ops = [
        (lambda a, v: flow.linalg.solve(a, v), lambda a, v: torch.linalg.solve(a, v)),
        (lambda a, v: flow.linalg.det(a) * v, lambda a, v: torch.linalg.det(a) * v),
        (lambda a, v: flow.linalg.eigvals(a), lambda a, v: torch.linalg.eigvals(a)),
        (lambda a, v: flow.linalg.svdvals(a), lambda a, v: torch.linalg.svdvals(a)),
    ]
    for fo, tf in ops:
        got = check(fo, A, b, tol=1e-10)
        ref = functorch.vmap(tf)(At, bt)
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-9)
        g = check_grad(lambda a, v: fo(a, v).abs().sum(), A, b, argnums=(0, 1), tol=1e-10)
        ref = functorch.vmap(functorch.grad(lambda a, v: tf(a, v).abs().sum(), argnums=(0, 1)))(
            At, bt
        )
        for x, y in zip(g, ref):
            np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-8, atol=1e-8)


def test_complex_nested_vmap_and_grad_of_vmap():
    Z = c128(2, 4, 3, seed=85)
    check(ff.vmap(lambda z: (z * z.conj()).sum() + flow.fft.fft(z)[0]), Z, tol=1e-10)
    A = c128(4, 3, 3, seed=86)
    g = ff.grad(lambda a: ff.vmap(lambda m: flow.linalg.det(m))(a).abs().sum())(A)
    ref = functorch.grad(lambda a: functorch.vmap(torch.linalg.det)(a).abs().sum())(tt(A))
    np.testing.assert_allclose(g.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_complex_transforms_against_functorch():
    """grad (complex inputs, complex scalar outputs), vjp, jvp, jacrev, jacfwd, hessian on complex
    as torch 1.13's functorch (complex -> complex, complex -> real, real -> complex)."""
    z = c128(3, seed=87)
    x = z.real.contiguous()
    zt, xt = tt(z), tt(x)
    cases = [
        (
            ff.grad(lambda z: (z.abs() ** 2).sum()),
            functorch.grad(lambda z: (z.abs() ** 2).sum()),
            z,
        ),
        (ff.grad(lambda z: (z * z).sum()), functorch.grad(lambda z: (z * z).sum()), z),
        (ff.jacrev(lambda z: z * z), functorch.jacrev(lambda z: z * z), z),
        (ff.jacrev(lambda z: z.abs()), functorch.jacrev(lambda z: z.abs()), z),
        (ff.jacrev(lambda x: x * (1 + 2j)), functorch.jacrev(lambda x: x * (1 + 2j)), x),
        (ff.jacfwd(lambda z: z * z), functorch.jacfwd(lambda z: z * z), z),
        (ff.jacfwd(lambda z: z.abs()), functorch.jacfwd(lambda z: z.abs()), z),
        (ff.jacfwd(lambda x: x * (1 + 2j)), functorch.jacfwd(lambda x: x * (1 + 2j)), x),
        (
            ff.jacrev(lambda z: z.conj() * z.exp()),
            functorch.jacrev(lambda z: z.conj() * z.exp()),
            z,
        ),
        (
            ff.jacfwd(lambda z: z.conj() * z.exp()),
            functorch.jacfwd(lambda z: z.conj() * z.exp()),
            z,
        ),
        (
            ff.hessian(lambda z: (z.abs() ** 2).sum()),
            functorch.hessian(lambda z: (z.abs() ** 2).sum()),
            z,
        ),
        (
            ff.hessian(lambda x: (x * (1 + 2j)).abs().sum()),
            functorch.hessian(lambda x: (x * (1 + 2j)).abs().sum()),
            x,
        ),
    ]
    for i, (mine, theirs, arg) in enumerate(cases):
        got, ref = mine(arg), theirs(tt(arg))
        assert got.dtype.is_complex == ref.is_complex(), i
        np.testing.assert_allclose(
            got.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10, err_msg=str(i)
        )
    one = flow.ones(3, dtype=flow.complex128) * (0.5 - 1j)
    f, tf = (lambda z: z.conj() * z.exp()), (lambda z: z.conj() * z.exp())
    out, jv = ff.jvp(f, (z,), (one,))
    rout, rjv = functorch.jvp(tf, (zt,), (tt(one),))
    np.testing.assert_allclose(jv.detach().numpy(), rjv.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.detach().numpy(), rout.detach().numpy(), rtol=1e-12)
    _, fn = ff.vjp(f, z)
    _, tfn = functorch.vjp(tf, zt)
    np.testing.assert_allclose(
        fn(one)[0].detach().numpy(), tfn(tt(one))[0].detach().numpy(), rtol=1e-10, atol=1e-10
    )
    # vmap of jacrev / grad over a batch of complex inputs
    Z = c128(4, 3, seed=88)
    got = check(ff.jacrev(lambda z: z * z.exp()), Z, tol=1e-10)
    ref = functorch.vmap(functorch.jacrev(lambda z: z * z.exp()))(tt(Z))
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_complex_transform_dtypes_and_errors_as_functorch():
    z, x = c128(3, seed=90), c128(3, seed=91).real.contiguous()
    zt, xt = tt(z), tt(x)
    f = lambda z: z * z.exp()  # noqa: E731
    # a real tangent of a complex primal; a complex tangent of a real primal (J re t + i J im t)
    got = ff.jvp(f, (z,), (x,))[1]
    np.testing.assert_allclose(
        got.detach().numpy(), functorch.jvp(f, (zt,), (xt,))[1].detach().numpy(), 1e-10, 1e-12
    )
    got = ff.jvp(lambda x: x * x, (x,), (z,))[1]
    ref = functorch.jvp(lambda x: x * x, (xt,), (zt,))[1]
    assert got.dtype == flow.complex128
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    msg = "For complex Tensors, both grad_output and output are required to have the same dtype"
    with pytest.raises(RuntimeError, match=msg):
        ff.vjp(lambda z: z * z, z)[1](x)
    with pytest.raises(RuntimeError, match=msg):
        functorch.vjp(lambda z: z * z, zt)[1](xt)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        ff.grad(lambda a: a.sum())(flow.arange(3))
    # a complex scalar output: grad is the vjp with 1 (functorch 1.13)
    got = ff.vmap(ff.grad(lambda z: (z * z.exp()).sum()))(c128(4, 3, seed=92))
    ref = functorch.vmap(functorch.grad(lambda z: (z * z.exp()).sum()))(tt(c128(4, 3, seed=92)))
    np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
