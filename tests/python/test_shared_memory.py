"""Tensor.share_memory_ / Module.share_memory (oneflow_like.multiprocessing): the storage moves
into shared memory, and processes it is sent to write the same memory (Hogwild training), as
with torch.multiprocessing; tensors that were not shared still travel as copies."""
import os
import sys

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.multiprocessing as mp
from oneflow_like import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _train(model, steps):
    opt = flow.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        model(flow.ones(1, 4)).sum().backward()
        opt.step()


def _add_one(t, q):
    t.add_(1)
    q.put(t.is_shared())


def test_share_memory_keeps_values_views_and_autograd():
    x = flow.arange(12.0).reshape(3, 4)[:, 1:]  # a view: offset 1, strides (4, 1)
    before = x.detach().numpy().copy()
    assert not x.is_shared()
    assert x.share_memory_() is x and x.is_shared()
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.stride() == (4, 1) and x.storage_offset() == 1
    w = nn.Parameter(flow.randn(3, 2))
    w.share_memory_()
    assert isinstance(w, nn.Parameter) and w.is_leaf and w.requires_grad and w.is_shared()
    (w * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.detach().numpy(), np.full((3, 2), 2.0, np.float32))
    assert flow.zeros(0).share_memory_().numel() == 0


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild_processes_update_one_model(method):
    model = nn.Linear(4, 1)
    with flow.no_grad():
        model.weight.fill_(0.0), model.bias.fill_(0.0)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    ctx = mp.get_context(method)
    procs = [ctx.Process(target=_train, args=(model, 5)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    # 10 SGD steps with gradient 1 and lr 0.1, run in the children, seen by the parent.
    np.testing.assert_allclose(model.bias.detach().numpy(), [-1.0], rtol=1e-5)
    np.testing.assert_allclose(model.weight.detach().numpy(), np.full((1, 4), -1.0), rtol=1e-5)


def test_unshared_tensors_travel_as_copies():
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    plain, shared = flow.zeros(3), flow.zeros(3).share_memory_()
    for t, expect in ((plain, 0.0), (shared, 1.0)):
        p = ctx.Process(target=_add_one, args=(t, q))
        p.start()
        assert q.get(timeout=120) is True  # the child's tensor is shared memory either way
        p.join(timeout=120)
        assert p.exitcode == 0
        assert t.tolist() == [expect] * 3
