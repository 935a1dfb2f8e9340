"""torch.optim.Adafactor (PyTorch 2.5) against a float64 NumPy transcription of its documented
update: factored second moments for tensors of 2+ dims, a full one for vectors, relative step
sizes, update clipping by d, decoupled weight decay, maximize; state_dict round trip; torch's
argument errors."""
import math

import numpy as np
import pytest

import oneflow_like as flow

rng = np.random.default_rng(0)


def ref_adafactor(
    p, grads, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, wd=0.0, maximize=False
):
    p = p.copy()
    eps1 = np.finfo(np.float64).eps if eps[0] is None else eps[0]
    row = col = var = None
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        b = t**beta2_decay  # 1 - beta2_t
        rho = min(lr, 1 / math.sqrt(t))
        alpha = max(eps[1], np.sqrt(np.mean(p * p))) * rho
        p = p * (1 - lr * wd)
        if g.ndim > 1:
            rmean = np.mean(g * g, axis=-1, keepdims=True)
            cmean = np.mean(g * g, axis=-2, keepdims=True)
            row = rmean * b if row is None else row + b * (rmean - row)
            col = cmean * b if col is None else col + b * (cmean - col)
            v = row * col / np.maximum(np.mean(row, axis=-2, keepdims=True), eps1)
        else:
            var = g * g * b if var is None else var + b * (g * g - var)
            v = var
        u = g / np.sqrt(np.maximum(v, eps1 * eps1))
        p = p - alpha / max(1.0, np.sqrt(np.mean(u * u)) / d) * u
    return p


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((4, 3), {}),
        ((5,), {}),
        ((2, 3, 4), {"weight_decay": 0.1, "lr": 0.05}),
        ((3, 6), {"d": 2.0, "beta2_decay": -0.5, "eps": (1e-20, 1e-2)}),
        ((6,), {"maximize": True, "lr": 0.5}),
    ],
)
def test_adafactor_matches_the_documented_update(shape, kw):
    p0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(5)]
    p = flow.nn.Parameter(flow.tensor(p0))
    opt = flow.optim.Adafactor([p], **kw)
    for g in grads:
        p.grad = flow.tensor(g)
        opt.step()
    rkw = {("wd" if k == "weight_decay" else k): v for k, v in kw.items()}
    np.testing.assert_allclose(
        p.detach().numpy(), ref_adafactor(p0, grads, **rkw), rtol=1e-10, atol=1e-12
    )
    state = opt.state[p]
    assert state["step"] == 5
    if len(shape) > 1:
        assert tuple(state["row_var"].shape) == shape[:-1] + (1,)
        assert tuple(state["col_var"].shape) == shape[:-2] + (1, shape[-1])
        assert "variance" not in state
    else:
        assert tuple(state["variance"].shape) == shape


def test_adafactor_trains_and_state_dict_round_trips():
    flow.manual_seed(0)
    x = flow.randn(64, 8)
    y = x @ flow.randn(8, 1)
    model = flow.nn.Sequential(flow.nn.Linear(8, 16), flow.nn.Tanh(), flow.nn.Linear(16, 1))
    opt = flow.optim.Adafactor(model.parameters(), lr=0.05)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = flow.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
    opt2 = flow.optim.Adafactor(model.parameters(), lr=0.05)
    opt2.load_state_dict(opt.state_dict())
    for p in model.parameters():
        for k, v in opt.state[p].items():
            w = opt2.state[p][k]
            assert (
                (v == w) if not isinstance(v, flow.Tensor) else np.array_equal(v.numpy(), w.numpy())
            )
    assert opt2.param_groups[0]["beta2_decay"] == -0.8 and opt2.param_groups[0]["eps"] == (
        None,
        1e-3,
    )


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"lr": -1.0}, "Learning rate should be >= 0 but is: -1.0"),
        ({"beta2_decay": 0.5}, "beta2_decay should be <= 0 but is: 0.5"),
        ({"eps": (-1.0, 1e-3)}, "epsilon1 should be >= 0 but is: -1.0"),
        ({"eps": (None, -1.0)}, "epsilon2 should be >= 0 but is: -1.0"),
        ({"d": 0.5}, "Clipping threshold d should be >= 1 but is: 0.5"),
        ({"weight_decay": -0.1}, "weight_decay should be >= 0 but is: -0.1"),
    ],
)
def test_adafactor_argument_errors(kw, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        flow.optim.Adafactor([flow.nn.Parameter(flow.zeros(2))], **kw)
