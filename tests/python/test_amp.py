"""Mixed precision: bf16/f16 compute on the CPU, flow.autocast against torch.autocast, autograd
through autocast, training curves of bf16 autocast vs f32, and GradScaler against torch's own
GradScaler class (torch 1.13 on this machine lacks the CPU kernels of its two fused amp ops, so
those two are supplied from PyTorch's documented semantics; the class's logic is torch's)."""
import os
import warnings

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F

torch = pytest.importorskip("torch")

BF16_RTOL, BF16_ATOL = 2e-2, 2e-2
DIGITS_CSV = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return flow.tensor(a), torch.tensor(a)


def to64(t):
    return t.float().detach().numpy().astype(np.float64)


# ---- bf16/f16 compute ----------------------------------------------------------------------

LOWP_OPS = [
    ("add", lambda x, y: x + y, lambda x, y: x + y),
    ("mul", lambda x, y: x * y, lambda x, y: x * y),
    ("sub_scalar", lambda x, y: x - 0.5, lambda x, y: x - 0.5),
    ("div", lambda x, y: x / (y.abs() + 1), lambda x, y: x / (np.abs(y) + 1)),
    ("exp", lambda x, y: x.exp(), lambda x, y: np.exp(x)),
    ("tanh", lambda x, y: flow.tanh(x), lambda x, y: np.tanh(x)),
    ("relu", lambda x, y: F.relu(x), lambda x, y: np.maximum(x, 0)),
    ("where", lambda x, y: flow.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y)),
    ("sum", lambda x, y: x.sum(1), lambda x, y: x.sum(1)),
    ("mean", lambda x, y: x.mean(), lambda x, y: x.mean()),
    ("amax", lambda x, y: x.amax(0), lambda x, y: x.max(0)),
    (
        "softmax",
        lambda x, y: F.softmax(x, dim=1),
        lambda x, y: np.exp(x) / np.exp(x).sum(1, keepdims=True),
    ),
    (
        "log_softmax",
        lambda x, y: F.log_softmax(x, dim=1),
        lambda x, y: x - np.log(np.exp(x).sum(1, keepdims=True)),
    ),
    (
        "layer_norm",
        lambda x, y: F.layer_norm(x, (x.shape[1],)),
        lambda x, y: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
    ),
    ("matmul", lambda x, y: x @ y.t(), lambda x, y: x @ y.T),
    (
        "bmm",
        lambda x, y: flow.bmm(x.reshape(2, 4, 16), y.reshape(2, 16, 4)),
        lambda x, y: x.reshape(2, 4, 16) @ y.reshape(2, 16, 4),
    ),
    ("linear", lambda x, y: F.linear(x, y, y[:, 0]), lambda x, y: x @ y.T + y[:, 0]),
    ("mse_loss", lambda x, y: F.mse_loss(x, y), lambda x, y: ((x - y) ** 2).mean()),
    ("cat", lambda x, y: flow.cat([x, y], 0), lambda x, y: np.concatenate([x, y], 0)),
    ("transpose_contig", lambda x, y: x.t().contiguous(), lambda x, y: x.T),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,fn,ref", LOWP_OPS, ids=[o[0] for o in LOWP_OPS])
def test_low_precision_forward_vs_float64(name, fn, ref, dtype):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 16)), rng.standard_normal((8, 16))
    dt = getattr(flow, dtype)
    xl, yl = flow.tensor(x).to(dt), flow.tensor(y).to(dt)
    out = fn(xl, yl)
    assert out.dtype == dt, f"{name}: {out.dtype}"
    # The reference sees the inputs as rounded to the low precision type.
    expect = ref(to64(xl), to64(yl))
    tol = BF16_RTOL if dtype == "bfloat16" else 2e-3
    np.testing.assert_allclose(to64(out), expect, rtol=tol, atol=tol * 4)


def test_bf16_backward_matches_f64():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((6, 32)), rng.standard_normal((5, 32))
    xl = flow.tensor(x, dtype=flow.bfloat16, requires_grad=True)
    wl = flow.tensor(w, dtype=flow.bfloat16, requires_grad=True)
    F.log_softmax(F.linear(xl, wl).tanh(), dim=1).sum().backward()
    assert xl.grad.dtype == flow.bfloat16 and wl.grad.dtype == flow.bfloat16
    xd = flow.tensor(to64(xl), requires_grad=True)
    wd = flow.tensor(to64(wl), requires_grad=True)
    F.log_softmax(F.linear(xd, wd).tanh(), dim=1).sum().backward()
    np.testing.assert_allclose(to64(xl.grad), xd.grad.detach().numpy(), rtol=5e-2, atol=5e-2)
    np.testing.assert_allclose(to64(wl.grad), wd.grad.detach().numpy(), rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("shape", [(1, 7, 9), (3, 64, 80), (2, 128, 256)])
def test_bf16_matmul_accumulates_in_f32(shape):
    b, m, k = shape
    rng = np.random.default_rng(3)
    a = flow.tensor(rng.standard_normal((b, m, k)), dtype=flow.bfloat16)
    w = flow.tensor(rng.standard_normal((k, m)), dtype=flow.bfloat16)
    out = flow.matmul(a, w)
    ref = to64(a) @ to64(w)
    # One rounding of an f32-accumulated result: relative error ~2^-8 of the largest entries.
    scale = np.abs(ref).max()
    assert np.abs(to64(out) - ref).max() <= scale * 2**-7
    outt = flow.matmul(a, w.t().contiguous().t())  # transposed operand view
    np.testing.assert_array_equal(to64(outt), to64(out))


def test_bf16_casts_round_trip_every_dtype():
    x = flow.tensor([1.0, -2.5, 3.0, 0.0])
    for name in ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]:
        dt = getattr(flow, name)
        y = x.abs().to(dt).to(flow.bfloat16).to(dt)
        assert y.dtype == dt
        np.testing.assert_array_equal(y.detach().numpy(), x.abs().to(dt).detach().numpy())


# ---- autocast dtypes vs torch.autocast -----------------------------------------------------


def _ops(m):
    """(id, fn(lib, F, x, w, xb)) over PyTorch's lists; x/w f32 [4, 8] and [8, 8], xb bf16."""
    return [
        ("matmul", lambda L, Fn, x, w, xb: L.matmul(x, w)),
        ("mm", lambda L, Fn, x, w, xb: L.mm(x, w)),
        ("bmm", lambda L, Fn, x, w, xb: L.bmm(x[None], w[None])),
        ("linear", lambda L, Fn, x, w, xb: Fn.linear(x, w, w[0])),
        ("addmm", lambda L, Fn, x, w, xb: L.addmm(w[0], x, w)),
        (
            "conv2d",
            lambda L, Fn, x, w, xb: Fn.conv2d(
                x.reshape(1, 2, 4, 4), w.reshape(4, 2, 2, 4)[:, :, :2, :2]
            ),
        ),
        ("softmax", lambda L, Fn, x, w, xb: Fn.softmax(x, dim=1)),
        ("softmax_bf16", lambda L, Fn, x, w, xb: Fn.softmax(xb, dim=1)),
        ("log_softmax_bf16", lambda L, Fn, x, w, xb: Fn.log_softmax(xb, dim=1)),
        ("layer_norm_bf16", lambda L, Fn, x, w, xb: Fn.layer_norm(xb, (8,))),
        ("relu_mm", lambda L, Fn, x, w, xb: Fn.relu(L.mm(x, w))),
        ("add_mixed", lambda L, Fn, x, w, xb: xb + x),
        ("sum_bf16", lambda L, Fn, x, w, xb: xb.sum()),
        ("exp_bf16", lambda L, Fn, x, w, xb: xb.exp()),
        ("cat_mixed", lambda L, Fn, x, w, xb: L.cat([xb, x])),
        ("stack_mixed", lambda L, Fn, x, w, xb: L.stack([xb, x])),
        ("nll_loss_bf16", lambda L, Fn, x, w, xb: Fn.nll_loss(xb, L.tensor([0, 1, 2, 3]))),
        (
            "cross_entropy_bf16",
            lambda L, Fn, x, w, xb: Fn.cross_entropy(xb, L.tensor([0, 1, 2, 3])),
        ),
        ("mse_loss_bf16", lambda L, Fn, x, w, xb: Fn.mse_loss(xb, xb)),
        ("l1_loss_bf16", lambda L, Fn, x, w, xb: Fn.l1_loss(xb, xb)),
        (
            "bce_logits_bf16",
            lambda L, Fn, x, w, xb: Fn.binary_cross_entropy_with_logits(xb, xb.sigmoid()),
        ),
        ("prod_bf16", lambda L, Fn, x, w, xb: xb.prod()),
        ("cumprod_bf16", lambda L, Fn, x, w, xb: L.cumprod(xb, 0)),
        ("index_bf16", lambda L, Fn, x, w, xb: xb[L.tensor([2, 0])]),
        ("index_select_bf16", lambda L, Fn, x, w, xb: L.index_select(xb, 1, L.tensor([1, 3]))),
        ("f64_mm", lambda L, Fn, x, w, xb: L.mm(x.double(), w.double())),
    ]


AUTOCAST_OPS = _ops(None)


@pytest.mark.parametrize("name,fn", AUTOCAST_OPS, ids=[o[0] for o in AUTOCAST_OPS])
def test_autocast_output_dtype_matches_torch(name, fn):
    fx, tx = pair((4, 8), 0)
    fw, tw = pair((8, 8), 1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expect = fn(torch, torch.nn.functional, tx, tw, tx.bfloat16()).dtype
    with flow.autocast("cpu", dtype=flow.bfloat16):
        got = fn(flow, F, fx, fw, fx.bfloat16()).dtype
    assert str(got).split(".")[-1] == str(expect).split(".")[-1], (name, got, expect)


def test_autocast_values_match_torch():
    fx, tx = pair((16, 64), 0)
    fw, tw = pair((32, 64), 1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ref = torch.log_softmax(torch.nn.functional.linear(tx, tw), 1).float().detach().numpy()
    with flow.autocast("cpu"):
        got = F.log_softmax(F.linear(fx, fw), dim=1).float().detach().numpy()
    np.testing.assert_allclose(got, ref, rtol=3e-2, atol=3e-2)


def test_autocast_state_nesting_and_decorator():
    assert not flow.is_autocast_enabled("cpu")
    assert flow.get_autocast_dtype("cpu") == flow.bfloat16
    x, w = flow.randn(2, 3), flow.randn(3, 3)
    with flow.autocast("cpu"):
        assert flow.is_autocast_enabled("cpu") and not flow.is_autocast_enabled("cuda")
        assert (x @ w).dtype == flow.bfloat16
        with flow.autocast("cpu", enabled=False):
            assert not flow.is_autocast_enabled("cpu")
            assert (x @ w).dtype == flow.float32
        with flow.amp.autocast("cpu", dtype=flow.float16):
            assert (x @ w).dtype == flow.float16
            assert flow.get_autocast_dtype("cpu") == flow.float16
        assert (x @ w).dtype == flow.bfloat16
    assert not flow.is_autocast_enabled("cpu") and (x @ w).dtype == flow.float32

    @flow.autocast("cpu")
    def f(a, b):
        return a @ b

    assert f(x, w).dtype == flow.bfloat16 and not flow.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning):
        ctx = flow.cpu.amp.autocast()
    with ctx:
        assert (x @ w).dtype == flow.bfloat16
    with pytest.raises(ValueError, match="device_type"):
        flow.autocast("tpu")
    with pytest.raises(Exception):
        with flow.autocast("cpu"):
            raise KeyError("x")
    assert not flow.is_autocast_enabled("cpu")  # restored after an exception


def test_autocast_grads_come_back_in_param_dtype():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = flow.randn(5, 8)
    with flow.autocast("cpu"):
        out = model(x)
        assert out.dtype == flow.bfloat16
        loss = F.cross_entropy(out, flow.tensor([0, 1, 2, 3, 0]))
        assert loss.dtype == flow.float32
    loss.backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.dtype == flow.float32
    # Same as f32 within bf16 rounding.
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    ref.load_state_dict(model.state_dict())
    F.cross_entropy(ref(x), flow.tensor([0, 1, 2, 3, 0])).backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(
            p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=0.1, atol=3e-2
        )


def test_autocast_weight_cast_cache_follows_updates():
    lin = nn.Linear(4, 4)
    x = flow.randn(2, 4)
    with flow.autocast("cpu"):
        a = lin(x)
        b = lin(x)  # the cached bf16 weight
        np.testing.assert_array_equal(a.float().detach().numpy(), b.float().detach().numpy())
        with flow.no_grad():
            lin.weight.add_(1.0)  # a new version: the cache must not serve the old cast
        c = lin(x)
    assert not np.allclose(c.float().detach().numpy(), a.float().detach().numpy())


def _digits_batches(n, bs=32):
    raw = np.loadtxt(DIGITS_CSV, delimiter=",", dtype=np.float32)
    x, y = (raw[:, :64] / 16.0 - 0.3).reshape(-1, 1, 8, 8), raw[:, 64].astype(np.int64)
    return [(flow.tensor(x[i : i + bs]), flow.tensor(y[i : i + bs])) for i in range(0, n * bs, bs)]


def _small_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(8 * 64, 32),
        nn.GELU(),
        nn.Linear(32, 10),
    )


def test_graph_called_under_autocast_matches_eager_autocast():
    flow.manual_seed(0)
    model = _small_cnn()

    class G(nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = model

        def build(self, x):
            return self.m(x)

    g = G()
    x = flow.randn(4, 1, 8, 8)
    with flow.autocast("cpu"):
        eager = model(x)
        lazy = g(x)
    assert eager.dtype == lazy.dtype == flow.bfloat16
    np.testing.assert_array_equal(lazy.float().detach().numpy(), eager.float().detach().numpy())
    # Outside autocast the same graph object compiles an f32 graph of its own.
    out32 = g(x)
    assert out32.dtype == flow.float32
    np.testing.assert_allclose(
        out32.detach().numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-6
    )
    assert any("autocast state changed" in r for r in g.recompile_reasons)
    with flow.autocast("cpu"):
        again = g(x)  # the bf16 graph is cached
    np.testing.assert_array_equal(again.float().detach().numpy(), eager.float().detach().numpy())
    assert len(g.recompile_reasons) == 2
    assert not flow.is_autocast_enabled("cpu")


@pytest.mark.skipif(not os.path.exists(DIGITS_CSV), reason="python3-sklearn's digits data")
def test_graph_training_with_autocast_region_in_build_matches_eager():
    batches = _digits_batches(12)
    flow.manual_seed(0)
    a, b = _small_cnn(), _small_cnn()
    b.load_state_dict(a.state_dict())

    def eager_step(opt, x, y):
        with flow.autocast("cpu", dtype=flow.bfloat16):
            loss = F.cross_entropy(a(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    class Step(nn.Graph):
        def __init__(self, opt):
            super().__init__()
            self.m = b
            self.add_optimizer(opt)

        def build(self, x, y):
            with flow.autocast("cpu", dtype=flow.bfloat16):
                out = self.m(x)
                assert out.dtype == flow.bfloat16
                loss = F.cross_entropy(out, y)  # f32 by the autocast lists
            loss.backward()
            return loss

    opt_a = flow.optim.SGD(a.parameters(), lr=0.05, momentum=0.9)
    step = Step(flow.optim.SGD(b.parameters(), lr=0.05, momentum=0.9))
    le = [eager_step(opt_a, x, y).item() for x, y in batches]
    lazy_losses = [step(x, y) for x, y in batches]
    assert all(v.dtype == flow.float32 for v in lazy_losses)
    ll = [v.item() for v in lazy_losses]
    assert all(p.dtype == flow.float32 for p in b.parameters())  # updates in f32
    # eager == lazy: the graph runs the same casts and kernels in the same order.
    np.testing.assert_allclose(ll, le, rtol=1e-5, atol=1e-6)
    for pa, pb in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(pb.detach().numpy(), pa.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert le[-3:] and np.mean(le[-3:]) < np.mean(le[:3])  # it learns


# ---- training curves: bf16 autocast vs f32 -------------------------------------------------


def _train(model, batches, amp, lr=0.05):
    opt = flow.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for x, y in batches:
        with flow.autocast("cpu", enabled=amp):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def _curves(make, batches, lr):
    flow.manual_seed(0)
    a = make()
    b = make()
    b.load_state_dict(a.state_dict())
    return _train(a, batches, False, lr), _train(b, batches, True, lr)


@pytest.mark.skipif(not os.path.exists(DIGITS_CSV), reason="python3-sklearn's digits data")
def test_digits_cnn_bf16_autocast_curve_tracks_f32():
    raw = np.loadtxt(DIGITS_CSV, delimiter=",", dtype=np.float32)
    x, y = (raw[:, :64] / 16.0 - 0.3).reshape(-1, 1, 8, 8), raw[:, 64].astype(np.int64)
    batches = [(flow.tensor(x[i : i + 64]), flow.tensor(y[i : i + 64])) for i in range(0, 1280, 64)]
    batches = batches * 3

    def make():
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * 16, 10),
        )

    f32, bf16 = _curves(make, batches, 0.05)
    assert f32[-10:].mean() < 0.5 * f32[:5].mean()  # it learns
    # Per-window means within bf16 tolerance of the f32 curve.
    for w in range(0, len(f32), 10):
        assert (
            abs(bf16[w : w + 10].mean() - f32[w : w + 10].mean())
            < 0.1 + 0.1 * f32[w : w + 10].mean()
        )


def test_transformer_layer_bf16_autocast_curve_tracks_f32():
    rng = np.random.default_rng(0)
    # A token-classification task: the class is the argmax of the mean of the sequence.
    xs = rng.standard_normal((60, 16, 10, 32)).astype(np.float32)
    ys = xs.mean(2)[..., :4].argmax(-1)
    batches = [(flow.tensor(x), flow.tensor(y)) for x, y in zip(xs, ys)]

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
            self.head = nn.Linear(32, 4)

        def forward(self, x):
            return self.head(self.enc(x).mean(1))

    f32, bf16 = _curves(Model, batches, 0.05)
    assert f32[-10:].mean() < 0.8 * f32[:5].mean()
    for w in range(0, len(f32), 10):
        assert (
            abs(bf16[w : w + 10].mean() - f32[w : w + 10].mean())
            < 0.05 + 0.1 * f32[w : w + 10].mean()
        )


# ---- GradScaler vs torch's GradScaler ------------------------------------------------------


def _torch_cpu_amp_ops(monkeypatch):
    """CPU versions of the two fused ops torch's GradScaler calls (CUDA-only in torch 1.13),
    per PyTorch's definition: grads *= inv_scale, found_inf = 1 if any is inf/nan; scale backs
    off on inf, grows after `interval` clean steps (if the grown scale is finite)."""

    def unscale_(grads, found_inf, inv_scale):
        for g in grads:
            if not torch.isfinite(g).all():
                found_inf.fill_(1.0)
            g.mul_(inv_scale)

    def update_scale_(scale, tracker, found_inf, growth, backoff, interval):
        if found_inf.item() > 0:
            scale.mul_(backoff)
            tracker.fill_(0)
        else:
            n = int(tracker.item()) + 1
            if n == interval:
                grown = scale * growth
                if torch.isfinite(grown):
                    scale.copy_(grown)
                n = 0
            tracker.fill_(n)
        return scale

    monkeypatch.setattr(
        torch, "_amp_foreach_non_finite_check_and_unscale_", unscale_, raising=False
    )
    monkeypatch.setattr(torch, "_amp_update_scale_", update_scale_, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    # torch 1.13's class asserts CUDA tensors in two places; the same code minus the asserts.
    import torch.cuda.amp.grad_scaler as gs

    class Replicator(gs._MultiDeviceReplicator):
        def __init__(self, master_tensor):
            self.master = master_tensor
            self._per_device_tensors = {}

    monkeypatch.setattr(gs, "_MultiDeviceReplicator", Replicator)

    class TorchScaler(gs.GradScaler):
        def scale(self, outputs):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

    return TorchScaler


def test_grad_scaler_matches_torch(monkeypatch):
    TorchScaler = _torch_cpu_amp_ops(monkeypatch)
    w0 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    fw = flow.tensor(w0, requires_grad=True)
    tw = torch.tensor(w0, requires_grad=True)
    fopt, topt = flow.optim.SGD([fw], lr=0.1), torch.optim.SGD([tw], lr=0.1)
    kw = dict(init_scale=2.0**4, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    fs = flow.amp.GradScaler("cpu", **kw)
    ts = TorchScaler(**kw)
    rng = np.random.default_rng(1)
    bad = {2: np.inf, 5: np.nan, 6: -np.inf, 11: np.inf}
    for step in range(14):
        x = rng.standard_normal(4).astype(np.float32)
        if step in bad:
            x[1] = bad[step]
        for w, s, opt, lib in ((fw, fs, fopt, flow), (tw, ts, topt, torch)):
            opt.zero_grad()
            loss = (w * lib.tensor(x)).sum()
            s.scale(loss).backward()
            if step % 4 == 0:
                s.unscale_(opt)  # explicit unscale (e.g. for clipping) then step
            s.step(opt)
            s.update()
        assert fs.get_scale() == ts.get_scale(), step
        np.testing.assert_allclose(fw.detach().numpy(), tw.detach().numpy(), rtol=1e-6, atol=1e-6)
        assert fs.state_dict() == ts.state_dict()
    # Errors and state round trips as torch's.
    fs2 = flow.amp.GradScaler("cpu", **kw)
    fs2.load_state_dict(fs.state_dict())
    assert fs2.state_dict() == fs.state_dict()
    loss = (fw * flow.ones(4)).sum()
    fs.scale(loss).backward()
    fs.unscale_(fopt)
    with pytest.raises(RuntimeError, match="already been called"):
        fs.unscale_(fopt)
    fs.step(fopt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        fs.step(fopt)
    fs.update(8.0)
    assert fs.get_scale() == 8.0


def test_grad_scaler_disabled_and_cuda_without_device():
    s = flow.amp.GradScaler("cpu", enabled=False)
    t = flow.ones(2)
    assert s.scale(t) is t and s.get_scale() == 1.0 and s.state_dict() == {}
    if not flow.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            c = flow.cuda.amp.GradScaler()
        assert not c.is_enabled()


def test_amp_namespaces_import_through_mock_torch():
    import subprocess
    import sys

    code = (
        "import oneflow_like.mock_torch as mt; mt.enable()\n"
        "import torch\n"
        "from torch.cuda.amp import GradScaler, autocast\n"
        "import torch.cpu.amp\n"
        "x, w = torch.randn(2, 3), torch.randn(3, 3)\n"
        "with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
        "    assert (x @ w).dtype == torch.bfloat16 and torch.is_autocast_enabled('cpu')\n"
        "assert torch.amp.GradScaler('cpu').get_scale() == 65536.0\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
