"""flow.compile's training path: a call that needs gradients runs a compiled forward graph and,
in backward, a compiled backward graph (explain()'s train_graph_calls and
compiled_backward_calls count them). Step by step, losses, .grad, parameters and BatchNorm running
statistics equal an eager twin of the model; dropout's forward and backward agree on one mask;
optimizers, hooks, clipping and GradScaler see the gradients; what the graphs cannot express runs
eagerly with its reason."""
import copy

import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like import nn
from oneflow_like.nn import functional as F
from test_jit import _close, _mlp
from test_jit import _cnn as _bn_cnn


def _train_twins(
    model, make_opt, steps, x, y, loss_fn, tol=1e-5, between=None, save_residuals=True
):
    """Trains `model` compiled and an eager deep copy side by side, comparing every step."""
    twin = copy.deepcopy(model)
    c = flow.compile(model)
    c._compiled.train.save_residuals = save_residuals
    opt, opt2 = make_opt(c.parameters()), make_opt(twin.parameters())
    losses = []
    for step in range(steps):
        loss = loss_fn(c(x), y)
        opt.zero_grad()
        loss.backward()
        loss2 = loss_fn(twin(x), y)
        opt2.zero_grad()
        loss2.backward()
        _close(loss, loss2, tol)
        for (name, p), q in zip(model.named_parameters(), twin.parameters()):
            assert p.grad is not None, name
            _close(p.grad, q.grad, tol)
        opt.step()
        opt2.step()
        if between is not None:
            between(model, twin)
        for b, b2 in zip(model.buffers(), twin.buffers()):
            _close(b, b2, tol)
        losses.append(loss.item())
    return c, losses


@pytest.mark.parametrize("save_residuals", [True, False])
def test_mlp_training_is_compiled_and_equals_eager_step_by_step(save_residuals):
    g = flow.Generator().manual_seed(3)
    x, y = flow.randn(32, 6, generator=g), flow.randn(32, 3, generator=g)
    c, losses = _train_twins(
        _mlp(),
        lambda ps: flow.optim.SGD(ps, lr=0.1, momentum=0.9),
        12,
        x,
        y,
        F.mse_loss,
        save_residuals=save_residuals,
    )
    assert losses[-1] < 0.7 * losses[0]
    e = c.explain()
    assert e["train_graph_calls"] == 12 and e["compiled_backward_calls"] == 12, e
    assert e["eager_calls"] == 0 and e["train_compile_count"] == 1, e
    assert e["train_recompile_reasons"] == ["first call"]
    with flow.no_grad():  # inference still takes the inference graph
        c(x)
    assert c.explain()["graph_calls"] == 1


def test_backward_graph_starts_from_residuals_instead_of_recomputing():
    """With residuals (the default) the backward graph's products are the gradients' only after
    dead-code elimination: 2 for the inputs of the last two Linears (the first's input needs
    none) and 3 weight gradients. Recomputing the forward adds the 2 forward products whose
    results the backward reads."""
    counts = {}
    for save in (True, False):
        flow.manual_seed(0)
        m = nn.Sequential(
            nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)
        )
        c = flow.compile(m)
        c._compiled.train.save_residuals = save
        c(flow.randn(32, 64)).sum().backward()
        (entry,) = c._compiled.train.entries.values()
        counts[save] = (
            entry.fwd.compiled.hlo_after.count(" dot("),
            entry.bwd.compiled.hlo_after.count(" dot("),
        )
    assert counts == {True: (3, 5), False: (3, 7)}, counts


def test_float64_gradients_match_torch():
    m = _mlp().double()
    ref = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    ref = ref.double()
    with torch.no_grad():
        for p, q in zip(m.parameters(), ref.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy()))
    xn = np.random.default_rng(0).standard_normal((5, 6))
    x = flow.tensor(xn, requires_grad=True)
    xt = torch.tensor(xn, requires_grad=True)
    c = flow.compile(m)
    (c(x) ** 2).sum().backward()
    (ref(xt) ** 2).sum().backward()
    np.testing.assert_allclose(
        x.grad.detach().numpy(), xt.grad.detach().numpy(), rtol=1e-12, atol=1e-12
    )
    for p, q in zip(m.parameters(), ref.parameters()):
        np.testing.assert_allclose(
            p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=1e-12, atol=1e-12
        )
    assert c.explain()["compiled_backward_calls"] == 1


def test_batchnorm_cnn_train_mode_updates_running_stats_once():
    g = flow.Generator().manual_seed(4)
    x = flow.randn(6, 2, 8, 8, generator=g)
    y = flow.randint(0, 5, (6,), generator=g)
    m = _bn_cnn()
    c, losses = _train_twins(
        m, lambda ps: flow.optim.SGD(ps, lr=0.05, momentum=0.9), 6, x, y, F.cross_entropy
    )
    assert int(m[1].num_batches_tracked) == 6
    e = c.explain()
    assert e["compiled_backward_calls"] == 6 and e["eager_calls"] == 0, e
    c.eval()  # eval: running statistics, no update, a new compilation for the mode
    before = m[1].running_mean.clone()
    out = c(x)
    _close(out, copy.deepcopy(m)(x))
    _close(m[1].running_mean, before, 0)
    e = c.explain()
    assert e["train_compile_count"] == 2
    assert e["train_recompile_reasons"][-1].startswith("train/eval mode of a submodule changed")


class _Scaled(nn.Module):
    def __init__(self, n, p):
        super().__init__()
        self.w = nn.Parameter(flow.linspace(0.5, 2.0, n))
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(x * self.w)


def test_dropout_forward_and_backward_share_the_mask():
    p = 0.4
    m = _Scaled(2000, p)
    c = flow.compile(m)
    x = flow.randn(4, 2000, requires_grad=True)
    outs = []
    for _ in range(3):
        x.grad = None
        m.w.grad = None
        out = c(x)
        out.sum().backward()
        kept = (out != 0).to(flow.float32)
        # d out / d x = w * mask / (1 - p): zero exactly where the forward dropped
        _close(x.grad, kept * m.w.detach() / (1 - p), 1e-6)
        _close(m.w.grad, (kept * x.detach()).sum(0) / (1 - p), 1e-4)
        frac = 1 - kept.mean().item()
        assert abs(frac - p) < 0.03, frac  # 8000 draws: 6 standard deviations
        outs.append(kept)
    assert (outs[0] != outs[1]).any()  # a fresh mask each call
    flow.manual_seed(7)
    a = c(x)
    flow.manual_seed(7)
    _close(c(x), a, 0)  # reproducible under manual_seed
    assert c.explain()["compiled_backward_calls"] == 3
    c.eval()
    _close(c(x), x * m.w, 1e-6)  # eval: no dropout


def test_parameters_updated_between_calls_are_read_live():
    g = flow.Generator().manual_seed(5)
    x, y = flow.randn(16, 6, generator=g), flow.randn(16, 3, generator=g)

    def nudge(model, twin):  # in-place updates outside any optimizer
        with flow.no_grad():
            for p, q in zip(model.parameters(), twin.parameters()):
                p.mul_(0.9)
                q.mul_(0.9)

    c, _ = _train_twins(
        _mlp(), lambda ps: flow.optim.SGD(ps, lr=0.05), 5, x, y, F.mse_loss, between=nudge
    )
    assert c.explain()["compiled_backward_calls"] == 5


def test_grad_scaler_clipping_and_hooks_see_the_gradients():
    g = flow.Generator().manual_seed(6)
    x, y = flow.randn(16, 6, generator=g), flow.randn(16, 3, generator=g)
    m = _mlp()
    twin = copy.deepcopy(m)
    c = flow.compile(m)
    seen = []
    m[0].weight.register_hook(lambda gr: seen.append(gr.abs().sum().item()))
    twin_seen = []
    twin[0].weight.register_hook(lambda gr: twin_seen.append(gr.abs().sum().item()))
    runs = []
    for model, fwd in ((m, c), (twin, twin)):
        opt = flow.optim.SGD(model.parameters(), lr=0.1)
        scaler = flow.amp.GradScaler("cpu", init_scale=1024.0)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = F.mse_loss(fwd(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
        runs.append(losses)
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5)
    np.testing.assert_allclose(seen, twin_seen, rtol=1e-4)
    for p, q in zip(m.parameters(), twin.parameters()):
        _close(p, q)
    assert c.explain()["compiled_backward_calls"] == 4, c.explain()


def test_function_inputs_that_require_grad_and_unused_outputs():
    def f(a, w):
        h = (a @ w).tanh()
        return h, h.sum(1)

    cf = flow.compile(f)
    a = flow.randn(5, 4, requires_grad=True)
    w = flow.randn(4, 3, requires_grad=True)
    h, s = cf(a, w)
    h.sum().backward()  # the second output gets no gradient: zeros
    ga, gw = a.grad.clone(), w.grad.clone()
    a.grad = w.grad = None
    h2, _ = f(a, w)
    h2.sum().backward()
    _close(ga, a.grad)
    _close(gw, w.grad)
    a.grad = w.grad = None
    _, s = cf(a, w.detach())  # a new requires-grad pattern compiles again
    s.sum().backward()
    assert w.grad is None and a.grad is not None
    e = cf.explain()
    assert e["train_compile_count"] == 2 and e["compiled_backward_calls"] == 2, e
    assert "inputs' requires_grad changed" in e["train_recompile_reasons"][-1]


def test_new_shape_recompiles_and_double_backward_is_refused():
    c = flow.compile(_mlp())
    c(flow.randn(4, 6)).sum().backward()
    c(flow.randn(7, 6)).sum().backward()
    e = c.explain()
    assert e["train_compile_count"] == 2 and e["compiled_backward_calls"] == 2
    assert "input signature changed" in e["train_recompile_reasons"][-1]
    x = flow.randn(4, 6, requires_grad=True)
    out = c(x).sum()
    with pytest.raises(RuntimeError, match="create_graph"):
        flow.autograd.grad(out, x, create_graph=True)


class _Counting(nn.Module):
    """Updates a buffer in place in forward (not a norm's running statistics)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("calls", flow.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return self.lin(x) * 2


def test_other_buffer_mutation_runs_eagerly_with_reason():
    m = _Counting()
    c = flow.compile(m)
    x = flow.randn(2, 3)
    for _ in range(3):
        c(x).sum().backward()
    assert m.calls.item() == 3  # once per call, as eager
    e = c.explain()
    assert e["eager_calls"] == 3 and e["compiled_backward_calls"] == 0, e
    (why,) = e["eager_reasons"]
    assert "updates 1 captured tensor(s) in place" in why


def test_transformer_encoder_layer_trains_compiled_like_eager():
    flow.manual_seed(2)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0)
    g = flow.Generator().manual_seed(8)
    x, y = flow.randn(5, 3, 16, generator=g), flow.randn(5, 3, 16, generator=g)
    c, losses = _train_twins(
        layer, lambda ps: flow.optim.SGD(ps, lr=0.05), 4, x, y, F.mse_loss, tol=1e-4
    )
    assert losses[-1] < losses[0]
    assert c.explain()["compiled_backward_calls"] == 4, c.explain()


def test_no_grad_calls_recompile_when_the_mode_changes():
    """A no-grad call in train mode traces dropout into its graph; after eval() the same
    signature must not reuse it."""
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    c = flow.compile(m)
    x = flow.randn(64, 4)
    with flow.no_grad():
        dropped = c(x)
        m.eval()
        _close(c(x), m(x), 1e-6)
        m.train()
        c(x)
    assert (dropped == 0).any()
    e = c.explain()
    assert e["compile_count"] == 2 and e["graph_calls"] == 3, e
    assert e["recompile_reasons"] == ["first call", "train/eval mode of a submodule changed"]
