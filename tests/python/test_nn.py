"""nn modules against NumPy float64 references: forward values, and gradients of sum(out * G)
for a random G compared with central differences of the float64 reference."""
import math

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F
from oneflow_like.nn import init

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape)


def ft(a, requires_grad=False, dtype=np.float32):
    t = flow.tensor(np.asarray(a, dtype=dtype))
    if requires_grad:
        t.requires_grad = True
    return t


def numeric_grad(f, a, eps=1e-6):
    """Central differences of the scalar f at the float64 array a."""
    g = np.zeros_like(a)
    it = np.nditer(a, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = a[i]
        a[i] = old + eps
        hi = f()
        a[i] = old - eps
        lo = f()
        a[i] = old
        g[i] = (hi - lo) / (2 * eps)
    return g


def check(out, ref_fn, leaves, arrays, rtol=1e-4, atol=1e-5, grad_rtol=1e-3, grad_atol=1e-4):
    """out: a flow tensor computed from `leaves` (flow tensors requiring grad);
    ref_fn(): the float64 NumPy reference reading `arrays` (float64 copies of the leaves)."""
    ref = ref_fn()
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=rtol, atol=atol)
    if not leaves:
        return
    G = RNG.standard_normal(ref.shape)
    (out * ft(G)).sum().backward()
    for leaf, a in zip(leaves, arrays):
        want = numeric_grad(lambda: float((ref_fn() * G).sum()), a)
        assert leaf.grad is not None
        np.testing.assert_allclose(leaf.grad.detach().numpy(), want, rtol=grad_rtol, atol=grad_atol)


def params64(module):
    """float64 copies of the module's parameters, by name."""
    return {n: p.detach().numpy().astype(np.float64) for n, p in module.named_parameters()}


def check_module(module, x, ref, **tol):
    """ref(x64, params64) -> output; checks output and grads for x and every parameter."""
    x64 = np.asarray(x, np.float64).copy()
    xt = ft(x64, requires_grad=True)
    ps = params64(module)
    out = module(xt)
    names = list(ps)
    check(
        out,
        lambda: ref(x64, ps),
        [xt] + [dict(module.named_parameters())[n] for n in names],
        [x64] + [ps[n] for n in names],
        **tol,
    )


# ---- NumPy references --------------------------------------------------------------------------


def np_conv2d(x, w, b, stride=1, padding=0):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - kh) // stride + 1
    ow = (wd + 2 * padding - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def np_layer_norm(x, w, b, eps=1e-5, axes=(-1,)):
    mu = x.mean(axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


# ---- Module API --------------------------------------------------------------------------------


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 2)])
        self.register_buffer("steps", flow.zeros(1))
        self.register_buffer("scratch", flow.zeros(2), persistent=False)

    def forward(self, x):
        x = self.act(self.fc1(x))
        for b in self.blocks:
            x = b(x)
        return x


def test_parameter_shares_storage_and_requires_grad():
    t = flow.ones(2, 3)
    p = nn.Parameter(t)
    assert isinstance(p, flow.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    with flow.no_grad():
        p.mul_(2.0)
    np.testing.assert_allclose(t.detach().numpy(), 2 * np.ones((2, 3)))
    assert not nn.Parameter(flow.ones(1), requires_grad=False).requires_grad


def test_registration_and_traversal():
    m = Net()
    names = [n for n, _ in m.named_parameters()]
    assert names == [
        "fc1.weight",
        "fc1.bias",
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
    ]
    assert len(list(m.parameters())) == 6
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "blocks"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "blocks", "blocks.0", "blocks.1"]
    assert list(m.state_dict()) == [
        "steps",
        "fc1.weight",
        "fc1.bias",
        "blocks.0.weight",
        "blocks.0.bias",
        "blocks.1.weight",
        "blocks.1.bias",
    ]
    assert m.get_submodule("blocks.1") is m.blocks[1]
    shared = nn.Linear(2, 2)
    s = nn.Sequential(shared, shared)
    assert len(list(s.parameters())) == 2  # de-duplicated
    with pytest.raises(TypeError):
        m.fc1.weight = flow.ones(3, 4)  # a plain tensor is not a Parameter
    m.fc1.bias = None
    assert [n for n, _ in m.fc1.named_parameters()] == ["weight"]
    del m.act
    assert "act" not in dict(m.named_children())


def test_train_eval_apply_zero_grad_and_repr():
    m = Net()
    assert m.training and m.blocks[0].training
    m.eval()
    assert not m.training and not m.blocks[1].training
    m.train()
    assert m.blocks[1].training
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 3
    r = repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU()))
    assert r == (
        "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n" "  (1): ReLU()\n)"
    )
    p = m.fc1.weight
    (p * 1.0).sum().backward()
    assert p.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_allclose(p.grad.detach().numpy(), 0.0)
    m.zero_grad()
    assert p.grad is None


def test_state_dict_round_trip_and_strict_errors():
    a, b = Net(), Net()
    missing, unexpected = b.load_state_dict(a.state_dict())
    assert missing == [] and unexpected == []
    for (n, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy())
    sd = a.state_dict()
    del sd["fc1.bias"]
    sd["extra.weight"] = flow.zeros(1)
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(sd)
    msg = str(e.value)
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    res = b.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"] and res.unexpected_keys == ["extra.weight"]
    sd = a.state_dict()
    sd["fc1.weight"] = flow.zeros(5, 5)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight"):
        b.load_state_dict(sd)


def test_forward_hooks():
    m = nn.ReLU()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2.0,))
    h2 = m.register_forward_hook(
        lambda mod, args, out: calls.append(out.detach().numpy().tolist()) or out + 1.0
    )
    out = m(flow.tensor([-1.0, 3.0]))
    np.testing.assert_allclose(out.detach().numpy(), [1.0, 7.0])
    assert calls == [[0.0, 6.0]]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(m(flow.tensor([-1.0, 3.0])).detach().numpy(), [0.0, 3.0])


def test_containers():
    seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
    assert len(seq) == 3 and isinstance(seq[-1], nn.Sigmoid)
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Tanh())
    ml.insert(0, nn.Sigmoid())
    assert [type(x).__name__ for x in ml] == ["Sigmoid", "ReLU", "Tanh"]
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
    assert list(md.keys()) == ["a", "b"] and "a" in md
    assert [n for n, _ in md.named_modules()] == ["", "a", "b"]
    with pytest.raises(IndexError):
        seq[5]


def test_to_dtype_converts_floating_parameters_only():
    m = nn.BatchNorm1d(3)
    m.to(flow.float64)
    assert m.weight.dtype == flow.float64 and m.running_mean.dtype == flow.float64
    assert m.num_batches_tracked.dtype == flow.int64
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad


# ---- layers ------------------------------------------------------------------------------------


def test_linear():
    m = nn.Linear(5, 3)
    check_module(m, rand(4, 5), lambda x, p: x @ p["weight"].T + p["bias"])
    m = nn.Linear(5, 3, bias=False)
    check_module(m, rand(2, 4, 5), lambda x, p: x @ p["weight"].T)


def test_conv2d():
    m = nn.Conv2d(2, 3, 3, stride=1, padding=1)
    check_module(
        m, rand(2, 2, 5, 5), lambda x, p: np_conv2d(x, p["weight"], p["bias"], 1, 1), grad_rtol=2e-3
    )
    m = nn.Conv2d(2, 2, 2, stride=2, bias=False)
    check_module(m, rand(1, 2, 4, 4), lambda x, p: np_conv2d(x, p["weight"], None, 2, 0))


def test_conv1d():
    m = nn.Conv1d(2, 3, 3, padding=1)
    check_module(m, rand(2, 2, 6), lambda x, p: _np_conv1d(x, p["weight"], p["bias"], 1))


def _np_conv1d(x, w, b, padding):
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    k = w.shape[2]
    out = np.stack(
        [np.einsum("ncl,ocl->no", x[:, :, i : i + k], w) for i in range(x.shape[2] - k + 1)], -1
    )
    return out + b.reshape(1, -1, 1)


def test_max_pool2d():
    x = rand(2, 3, 4, 6)
    m = nn.MaxPool2d(2)
    check_module(m, x, lambda a, p: a.reshape(2, 3, 2, 2, 3, 2).max((3, 5)))


def test_avg_pool2d():
    x = rand(2, 3, 4, 6)
    check_module(nn.AvgPool2d(2), x, lambda a, p: a.reshape(2, 3, 2, 2, 3, 2).mean((3, 5)))


def test_adaptive_avg_pool2d_global():
    x = rand(2, 3, 4, 5)
    check_module(nn.AdaptiveAvgPool2d(1), x, lambda a, p: a.mean((2, 3), keepdims=True))


def test_batch_norm2d_train_and_eval():
    m = nn.BatchNorm2d(3, momentum=0.1)
    with flow.no_grad():
        m.weight.copy_(ft([1.0, 2.0, 0.5]))
        m.bias.copy_(ft([0.0, 1.0, -1.0]))
    x = rand(4, 3, 2, 2) * 2 + 1

    def ref(a, p):
        mu = a.mean((0, 2, 3), keepdims=True)
        var = a.var((0, 2, 3), keepdims=True)
        return (a - mu) / np.sqrt(var + 1e-5) * p["weight"].reshape(1, -1, 1, 1) + p[
            "bias"
        ].reshape(1, -1, 1, 1)

    check_module(m, x, ref, grad_rtol=2e-3, grad_atol=2e-4)
    # running stats: momentum-weighted mean and unbiased variance (one forward in check_module)
    np.testing.assert_allclose(
        m.running_mean.detach().numpy(), 0.1 * x.mean((0, 2, 3)), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        m.running_var.detach().numpy(), 0.9 + 0.1 * x.var((0, 2, 3), ddof=1), rtol=1e-4
    )
    assert int(m.num_batches_tracked.item()) == 1
    m.eval()
    rm, rv = m.running_mean.detach().numpy().astype(
        np.float64
    ), m.running_var.detach().numpy().astype(np.float64)
    out = m(ft(x)).detach().numpy()
    want = (x - rm.reshape(1, -1, 1, 1)) / np.sqrt(rv.reshape(1, -1, 1, 1) + 1e-5) * np.array(
        [1.0, 2.0, 0.5]
    ).reshape(1, -1, 1, 1) + np.array([0.0, 1.0, -1.0]).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_batch_norm1d():
    m = nn.BatchNorm1d(4)
    x = rand(6, 4)
    check_module(
        m,
        x,
        lambda a, p: (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5) * p["weight"] + p["bias"],
        grad_rtol=2e-3,
        grad_atol=2e-4,
    )
    with pytest.raises(ValueError):
        m(ft(rand(2, 4, 3, 3)))


def test_layer_norm():
    m = nn.LayerNorm(5)
    with flow.no_grad():
        m.weight.copy_(ft(rand(5)))
        m.bias.copy_(ft(rand(5)))
    check_module(
        m,
        rand(3, 5),
        lambda a, p: np_layer_norm(a, p["weight"], p["bias"]),
        grad_rtol=2e-3,
        grad_atol=2e-4,
    )


def test_group_norm():
    m = nn.GroupNorm(2, 4)
    x = rand(2, 4, 3)

    def ref(a, p):
        g = a.reshape(2, 2, -1)
        g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
        return g.reshape(a.shape) * p["weight"].reshape(1, -1, 1) + p["bias"].reshape(1, -1, 1)

    check_module(m, x, ref, grad_rtol=2e-3, grad_atol=2e-4)


def test_embedding():
    m = nn.Embedding(6, 3, padding_idx=0)
    np.testing.assert_array_equal(m.weight.detach().numpy()[0], 0.0)
    idx = np.array([[1, 2, 1], [0, 5, 4]])
    out = m(flow.tensor(idx))
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), w[idx])
    G = rand(2, 3, 3)
    (out * ft(G)).sum().backward()
    want = np.zeros((6, 3))
    np.add.at(want, idx.reshape(-1), G.reshape(-1, 3))
    want[0] = 0.0  # padding_idx gets no gradient
    np.testing.assert_allclose(m.weight.grad.detach().numpy(), want, rtol=1e-5, atol=1e-6)


def test_dropout():
    flow.manual_seed(0)
    m = nn.Dropout(0.25)
    x = flow.ones(200, 100)
    y = m(x).detach().numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    m.eval()
    np.testing.assert_array_equal(m(x).detach().numpy(), 1.0)
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


def test_flatten_unflatten():
    x = ft(rand(2, 3, 4, 5))
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 1)(x).shape) == (6, 4, 5)
    assert tuple(nn.Unflatten(1, (3, 4))(ft(rand(2, 12))).shape) == (2, 3, 4)


_erf = np.vectorize(math.erf)

ACTIVATIONS = [
    ("relu", nn.ReLU(), lambda a: np.maximum(a, 0)),
    ("gelu", nn.GELU(), lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2)))),
    ("silu", nn.SiLU(), lambda a: a / (1 + np.exp(-a))),
    ("tanh", nn.Tanh(), np.tanh),
    ("sigmoid", nn.Sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
    ("leaky_relu", nn.LeakyReLU(0.1), lambda a: np.where(a > 0, a, 0.1 * a)),
    ("softmax", nn.Softmax(1), lambda a: np_softmax(a, 1)),
    ("log_softmax", nn.LogSoftmax(-1), lambda a: np.log(np_softmax(a, -1))),
]


@pytest.mark.parametrize("name,module,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation(name, module, ref):
    x = rand(3, 4)
    x[np.abs(x) < 1e-3] = 0.5  # keep away from relu's kink
    check_module(module, x, lambda a, p: ref(a))


# ---- losses ------------------------------------------------------------------------------------


def np_cross_entropy(x, y, ignore_index=-100, label_smoothing=0.0):
    logp = np.log(np_softmax(x, 1))
    valid = y != ignore_index
    ys = np.where(valid, y, 0)
    nll = -logp[np.arange(len(y)), ys]
    smooth = -logp.mean(1)
    per = (1 - label_smoothing) * nll + label_smoothing * smooth
    return (per * valid).sum() / valid.sum()


@pytest.mark.parametrize("ignore_index,label_smoothing", [(-100, 0.0), (2, 0.0), (-100, 0.1)])
def test_cross_entropy(ignore_index, label_smoothing):
    x = rand(6, 5)
    y = np.array([0, 2, 4, 1, 2, 3])
    x64 = x.copy()
    xt = ft(x, requires_grad=True)
    loss = nn.CrossEntropyLoss(ignore_index=ignore_index, label_smoothing=label_smoothing)(
        xt, flow.tensor(y)
    )
    check(
        loss, lambda: np.array(np_cross_entropy(x64, y, ignore_index, label_smoothing)), [xt], [x64]
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    a, b = rand(3, 4), rand(3, 4)
    at = ft(a, requires_grad=True)
    red = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    check(
        nn.MSELoss(reduction=reduction)(at, ft(b)), lambda: np.asarray(red((a - b) ** 2)), [at], [a]
    )


def test_bce_with_logits():
    x, y = rand(4, 3) * 3, (rand(4, 3) > 0).astype(np.float64)
    xt = ft(x, requires_grad=True)
    ref = lambda: np.asarray(np.mean(np.maximum(x, 0) - x * y + np.log1p(np.exp(-np.abs(x)))))
    check(nn.BCEWithLogitsLoss()(xt, ft(y)), ref, [xt], [x])


# ---- attention ---------------------------------------------------------------------------------


def np_mha(q, k, v, p, H, kpm=None):
    """q (L, B, E) sequence-first; p: params64 of a MultiheadAttention."""
    E = q.shape[-1]
    D = E // H
    w, b = p["in_proj_weight"], p["in_proj_bias"]
    Q, K, V = (
        a @ w[i * E : (i + 1) * E].T + b[i * E : (i + 1) * E] for i, a in enumerate((q, k, v))
    )
    L, B, _ = Q.shape
    S = K.shape[0]
    Q = Q.reshape(L, B, H, D).transpose(1, 2, 0, 3)
    K = K.reshape(S, B, H, D).transpose(1, 2, 0, 3)
    V = V.reshape(S, B, H, D).transpose(1, 2, 0, 3)
    s = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(D)
    if kpm is not None:
        s = s + np.where(kpm, -np.inf, 0.0)[:, None, None, :]
    a = np_softmax(s, -1)
    o = (a @ V).transpose(2, 0, 1, 3).reshape(L, B, E)
    return o @ p["out_proj.weight"].T + p["out_proj.bias"], a.mean(1)


def test_multihead_attention_self_and_cross():
    m = nn.MultiheadAttention(8, 2)
    with flow.no_grad():
        m.in_proj_bias.copy_(ft(rand(24) * 0.1))
    p = params64(m)
    x = rand(5, 2, 8)
    x64 = x.copy()
    xt = ft(x, requires_grad=True)
    out, w = m(xt, xt, xt)
    ref_o, ref_w = np_mha(x64, x64, x64, p, 2)
    np.testing.assert_allclose(w.detach().numpy(), ref_w, rtol=1e-4, atol=1e-5)
    check(out, lambda: np_mha(x64, x64, x64, p, 2)[0], [xt], [x64], grad_rtol=2e-3, grad_atol=2e-4)
    # cross attention with a key padding mask, batch_first, no weights (the sdpa path)
    mb = nn.MultiheadAttention(8, 2, batch_first=True)
    pb = params64(mb)
    q, kv = rand(2, 3, 8), rand(2, 4, 8)
    kpm = np.array([[False, False, True, False], [False, False, False, True]])
    out, w = mb(ft(q), ft(kv), ft(kv), key_padding_mask=flow.tensor(kpm), need_weights=False)
    assert w is None
    ref = np_mha(q.transpose(1, 0, 2), kv.transpose(1, 0, 2), kv.transpose(1, 0, 2), pb, 2, kpm)[0]
    np.testing.assert_allclose(out.detach().numpy(), ref.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


def test_transformer_encoder_layer():
    m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    m.eval()
    p = params64(m)
    x = rand(4, 2, 8)
    x64 = x.copy()
    xt = ft(x, requires_grad=True)

    def ref():
        sp = {k[len("self_attn.") :]: v for k, v in p.items() if k.startswith("self_attn.")}
        h = np_layer_norm(x64 + np_mha(x64, x64, x64, sp, 2)[0], p["norm1.weight"], p["norm1.bias"])
        ff = (
            np.maximum(h @ p["linear1.weight"].T + p["linear1.bias"], 0) @ p["linear2.weight"].T
            + p["linear2.bias"]
        )
        return np_layer_norm(h + ff, p["norm2.weight"], p["norm2.bias"])

    check(m(xt), ref, [xt], [x64], grad_rtol=3e-3, grad_atol=3e-4)
    enc = nn.TransformerEncoder(m, 2)
    assert len(list(enc.parameters())) == 2 * len(list(m.parameters()))
    assert tuple(enc(xt).shape) == (4, 2, 8)


# ---- init and utils ----------------------------------------------------------------------------


def test_init():
    w = flow.empty(200, 100)
    init.xavier_uniform_(w)
    a = math.sqrt(6 / 300)
    v = w.detach().numpy()
    assert v.min() >= -a and v.max() <= a and abs(v.std() - a / math.sqrt(3)) < 0.01
    init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 100)) < 0.01
    init.normal_(w, 1.0, 0.5)
    assert (
        abs(w.detach().numpy().mean() - 1.0) < 0.02 and abs(w.detach().numpy().std() - 0.5) < 0.02
    )
    init.uniform_(w, 2.0, 3.0)
    assert w.detach().numpy().min() >= 2.0 and w.detach().numpy().max() <= 3.0
    init.zeros_(w)
    assert (w.detach().numpy() == 0).all()
    init.constant_(w, 0.3)
    np.testing.assert_allclose(w.detach().numpy(), 0.3)
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init._calculate_fan_in_and_fan_out(flow.empty(4, 3, 2, 2)) == (12, 16)


def test_clip_grad_norm():
    a = nn.Parameter(ft([3.0, 0.0]))
    b = nn.Parameter(ft([[4.0]]))
    (a * ft([3.0, 0.0])).sum().backward()  # grad a = [3, 0]
    (b * ft([[4.0]])).sum().backward()  # grad b = [[4]]
    total = nn.utils.clip_grad_norm_([a, b], 1.0)
    assert abs(total.item() - 5.0) < 1e-5
    np.testing.assert_allclose(a.grad.detach().numpy(), [0.6, 0.0], rtol=1e-5)
    np.testing.assert_allclose(b.grad.detach().numpy(), [[0.8]], rtol=1e-5)
    total = nn.utils.clip_grad_norm_([a, b], 10.0)  # below the limit: unchanged
    np.testing.assert_allclose(a.grad.detach().numpy(), [0.6, 0.0], rtol=1e-5)


def test_functional_calls_primitives_directly():
    # Every nn.functional op is bound in the extension: nothing is looked up at call time.
    for name in (
        "conv1d",
        "conv2d",
        "max_pool2d",
        "avg_pool2d",
        "batch_norm",
        "layer_norm",
        "group_norm",
        "embedding",
        "dropout",
        "cross_entropy",
        "nll_loss",
        "mse_loss",
        "binary_cross_entropy_with_logits",
        "scaled_dot_product_attention",
        "softmax",
    ):
        assert callable(getattr(flow._C.nn_functional, name)), name
    assert not hasattr(F, "_prim") and not hasattr(F, "_missing_primitives")
