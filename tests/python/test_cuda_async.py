"""Device-side errors on CUDA are raised at the next sync point, as in PyTorch: an op that checks
its inputs on the device (nll_loss's targets, integer division by zero) returns without waiting
for the GPU, and the error, naming the op, is raised by the next host read of a tensor (or
flow.cuda.synchronize()). The runtime stays usable after it. Eagerly and inside nn.Graph. Skips
without a CUDA device; the GPU proof (tools/gpu/run.sh) runs this file."""

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like import nn

pytestmark = pytest.mark.skipif(
    not flow.cuda.is_available(), reason="no CUDA device (the GPU proof, tools/gpu/run.sh, runs it)"
)


def _still_usable():
    assert flow.ones(4, device="cuda").sum().item() == 4.0


def test_bad_target_is_raised_at_the_next_host_read():
    logits = flow.randn(6, 10).to("cuda")
    target = flow.tensor([1, 2, 12, 3, 4, 5]).to("cuda")
    loss = F.cross_entropy(logits, target)  # no wait for the device here
    with pytest.raises(Exception, match=r"\[nll_loss\] target 12 out of range for 10 classes"):
        loss.item()
    flow.cuda.synchronize()  # reported once
    _still_usable()
    good = F.cross_entropy(logits, flow.tensor([1, 2, 9, 3, 4, 5]).to("cuda"))
    ref = F.cross_entropy(logits.cpu(), flow.tensor([1, 2, 9, 3, 4, 5]))
    np.testing.assert_allclose(good.item(), ref.item(), rtol=1e-5)


def test_bad_target_is_raised_by_synchronize():
    logits = flow.randn(3, 4).to("cuda")
    F.nll_loss(F.log_softmax(logits, dim=1), flow.tensor([0, -3, 1]).to("cuda"))
    with pytest.raises(Exception, match=r"\[nll_loss\] target -3 out of range for 4 classes"):
        flow.cuda.synchronize()
    _still_usable()


def test_integer_division_by_zero_on_cuda():
    x = flow.tensor([1, 2, 3]).to("cuda")
    q = x // flow.tensor([1, 0, 1]).to("cuda")
    with pytest.raises(Exception, match=r"floor_divide.*division by zero"):
        q.numpy()
    flow.cuda.synchronize()
    np.testing.assert_array_equal((x // 2).cpu().numpy(), [0, 1, 1])


def test_bad_target_inside_a_cuda_graph():
    flow.manual_seed(0)
    model = nn.Linear(8, 5).to("cuda")
    opt = flow.optim.SGD(model.parameters(), lr=0.1)

    class Step(nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            return loss

    g = Step()
    x = flow.randn(4, 8).to("cuda")
    ok = g(x, flow.tensor([0, 1, 2, 3]).to("cuda")).item()
    assert np.isfinite(ok)
    bad = g(x, flow.tensor([0, 1, 7, 3]).to("cuda"))
    with pytest.raises(Exception, match=r"\[nll_loss\] target 7 out of range for 5 classes"):
        bad.item()
    flow.cuda.synchronize()
    _still_usable()  # (the failed step's update used the skipped terms: its results are undefined)
