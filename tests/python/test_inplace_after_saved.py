"""An op saves for backward only what its gradient formula reads, as PyTorch does: changing the
other results in place before backward is no error (relu_(batch_norm(x)), out += identity after
a BatchNorm, the ResNet pattern). Each case: y = f(x); y.add_(c) in place; the gradient of
sum(y * w) equals the out-of-place (f(x) + c) * w's, in float64. Outputs a formula does read
still raise."""
import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F

rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 4, 6, 6))
V = rng.standard_normal((3, 8))
CASES = {
    "batch_norm_train": (X4, lambda x: F.batch_norm(x, None, None, None, None, True)),
    "batch_norm_stats": (
        X4,
        lambda x: F.batch_norm(
            x,
            flow.zeros(4, dtype=x.dtype),
            flow.ones(4, dtype=x.dtype),
            flow.ones(4, dtype=x.dtype),
            flow.zeros(4, dtype=x.dtype),
            True,
        ),
    ),
    "batch_norm_eval": (
        X4,
        lambda x: F.batch_norm(
            x,
            flow.full((4,), 0.1, dtype=x.dtype),
            flow.full((4,), 2.0, dtype=x.dtype),
            None,
            None,
            False,
        ),
    ),
    "layer_norm": (V, lambda x: F.layer_norm(x, (8,), flow.ones(8, dtype=x.dtype) * 1.5)),
    "group_norm": (X4, lambda x: F.group_norm(x, 2)),
    "rms_norm": (V, lambda x: F.rms_norm(x, (8,))),
    "max_pool2d": (X4, lambda x: F.max_pool2d(x, 2)),
    "max_pool3d": (X4, lambda x: F.max_pool3d(x.unsqueeze(0), 2)),
    "index_select": (X4, lambda x: x.index_select(1, flow.tensor([0, 2, 2]))),
    "gather": (V, lambda x: x.gather(1, flow.tensor([[0, 5], [1, 1], [7, 2]]))),
    "masked_fill": (X4, lambda x: x.masked_fill(flow.tensor(X4 > 0), 0.5)),
    "advanced_index": (V, lambda x: x[flow.tensor([2, 0, 2])]),
    "upsample_nearest": (X4, lambda x: F.interpolate(x, scale_factor=2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_change_of_an_unread_output_keeps_the_gradient(name):
    data, f = CASES[name]
    x = flow.tensor(data, dtype=flow.float64, requires_grad=True)
    y = f(x)
    c = flow.tensor(rng.standard_normal(tuple(y.shape)), dtype=flow.float64)
    w = flow.tensor(rng.standard_normal(tuple(y.shape)), dtype=flow.float64)
    y.add_(c)  # in place on the op's output
    (y * w).sum().backward()
    x_ref = flow.tensor(data, dtype=flow.float64, requires_grad=True)
    ((f(x_ref) + c) * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_ref.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_resnet_block_pattern_trains_through_relu_inplace_and_residual_add():
    flow.manual_seed(0)
    conv = flow.nn.Conv2d(3, 3, 3, padding=1).double()
    bn1, bn2 = flow.nn.BatchNorm2d(3).double(), flow.nn.BatchNorm2d(3).double()
    relu = flow.nn.ReLU(inplace=True)
    x = flow.tensor(rng.standard_normal((2, 3, 5, 5)), requires_grad=True)

    def block(inp, inplace):
        out = bn1(conv(inp))
        out = relu(out) if inplace else flow.relu(out)
        out = bn2(conv(out))
        if inplace:
            out += inp
        else:
            out = out + inp
        return relu(out) if inplace else flow.relu(out)

    block(x, True).pow(2).sum().backward()
    g_inplace = [x.grad.clone()] + [p.grad.clone() for p in conv.parameters()]
    x.grad = None
    conv.zero_grad()
    block(x, False).pow(2).sum().backward()
    g_ref = [x.grad] + [p.grad for p in conv.parameters()]
    for a, b in zip(g_inplace, g_ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_unread_outputs_under_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x = flow.tensor(X4, requires_grad=True)
    with flow.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = F.batch_norm(x, None, None, None, None, True)
    # x is saved; the batch statistics (mean, invstd, var: [4] each) are; y [2, 4, 6, 6] is not.
    assert (2, 4, 6, 6) in packed and packed.count((2, 4, 6, 6)) == 1
    y.add_(1.0)
    y.sum().backward()
    assert x.grad is not None


def test_outputs_a_formula_reads_still_raise():
    # log_softmax's gradient reads its output (torch raises here too).
    x = flow.tensor(V, requires_grad=True)
    y = F.log_softmax(x, dim=-1)
    y.add_(1.0)
    with pytest.raises(ValueError, match=r"LogSoftmaxBackward0.*modified by an in-place operation"):
        y.sum().backward()
    # batch_norm still reads its saved input.
    x = flow.tensor(X4, requires_grad=True)
    h = x * 1.0
    y = F.batch_norm(h, None, None, None, None, True)
    h.add_(1.0)
    with pytest.raises(
        ValueError, match=r"NativeBatchNormBackward0.*modified by an in-place operation"
    ):
        y.sum().backward()
