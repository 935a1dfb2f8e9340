"""Normalizations with a bfloat16/float16 input and float32 parameters (what a model under
torch.autocast(device_type="cpu") feeds its LayerNorm/BatchNorm/GroupNorm/RMSNorm): computed in
float32, returned in the input's dtype, gradients in each tensor's own dtype; values against a
float64 reference. Other dtype mismatches stay errors naming the op."""
import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F

rng = np.random.default_rng(0)


def _run(fn, x_np, params_np, low):
    x = flow.tensor(x_np, dtype=flow.float32).to(low).requires_grad_()
    ps = [flow.tensor(p, dtype=flow.float32, requires_grad=True) for p in params_np]
    y = fn(x, *ps)
    assert y.dtype == low
    g = rng.standard_normal(tuple(y.shape))
    (y.float() * flow.tensor(g, dtype=flow.float32)).sum().backward()
    assert x.grad.dtype == low and all(p.grad.dtype == flow.float32 for p in ps)
    # the float64 reference, from the same (rounded) input
    xr = flow.tensor(x.detach().float().detach().numpy(), dtype=flow.float64, requires_grad=True)
    pr = [flow.tensor(p, dtype=flow.float64, requires_grad=True) for p in params_np]
    yr = fn(xr, *pr)
    (yr * flow.tensor(g)).sum().backward()
    tol = 2e-2 if low == flow.bfloat16 else 3e-3
    np.testing.assert_allclose(y.float().detach().numpy(), yr.detach().numpy(), rtol=tol, atol=tol)
    for p, q in zip(ps, pr):
        np.testing.assert_allclose(
            p.grad.detach().numpy(), q.grad.detach().numpy(), rtol=tol, atol=tol * 10
        )
    np.testing.assert_allclose(
        x.grad.float().detach().numpy(), xr.grad.detach().numpy(), rtol=5 * tol, atol=5 * tol
    )


@pytest.mark.parametrize("low", [flow.bfloat16, flow.float16])
def test_layer_group_rms_norm_float_params(low):
    x = rng.standard_normal((4, 6, 8))
    w, b = rng.standard_normal(8) + 1, rng.standard_normal(8)
    _run(lambda x, w, b: F.layer_norm(x, (8,), w, b), x, [w, b], low)
    _run(lambda x, w: F.rms_norm(x, (8,), w), x, [w], low)
    wg, bg = rng.standard_normal(6) + 1, rng.standard_normal(6)
    _run(lambda x, w, b: F.group_norm(x, 3, w, b), x, [wg, bg], low)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_float_params_and_running_stats(training):
    x = rng.standard_normal((5, 3, 4, 4))
    w, b = rng.standard_normal(3) + 1, rng.standard_normal(3)
    rm = flow.zeros(3)
    rv = flow.ones(3)
    _run(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), x, [w, b], flow.bfloat16)
    xb = flow.tensor(x, dtype=flow.float32).to(flow.bfloat16)
    y = F.batch_norm(xb, rm, rv, None, None, training, 0.5)
    assert y.dtype == flow.bfloat16 and rm.dtype == flow.float32
    if training:  # the running statistics were updated in float32
        mean = xb.float().detach().numpy().mean(axis=(0, 2, 3))
        np.testing.assert_allclose(rm.detach().numpy(), 0.5 * mean, rtol=1e-5, atol=1e-6)


def test_nn_layernorm_under_cpu_autocast():
    flow.manual_seed(0)
    model = flow.nn.Sequential(flow.nn.Linear(8, 16), flow.nn.LayerNorm(16), flow.nn.Linear(16, 2))
    with flow.autocast(device_type="cpu", dtype=flow.bfloat16):
        out = model(flow.randn(4, 8))
    assert out.dtype == flow.bfloat16
    out.float().sum().backward()
    assert model[1].weight.grad.dtype == flow.float32


def test_other_mismatches_still_raise():
    x = flow.randn(2, 8)
    with pytest.raises(ValueError, match=r"\[layer_norm\].*dtype"):
        F.layer_norm(x, (8,), flow.ones(8, dtype=flow.float64))
    with pytest.raises(ValueError, match=r"\[layer_norm\].*dtype"):
        F.layer_norm(x.to(flow.bfloat16), (8,), flow.ones(8, dtype=flow.float64))
