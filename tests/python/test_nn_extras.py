"""Small PyTorch 2.x names custom layers and scripts import: nn.Buffer, Module.set_submodule,
nn.modules.utils (_pair, ...), nn.common_types, utils.hooks.RemovableHandle,
utils.data.StackDataset (against torch 1.13 where it has them)."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like import nn


def test_buffer_assignment_registers_a_buffer():
    m = nn.Module()
    m.a = nn.Buffer(flow.ones(2))
    m.b = nn.Buffer(flow.zeros(3), persistent=False)
    assert sorted(dict(m.named_buffers())) == ["a", "b"]
    assert list(m.state_dict()) == ["a"]
    assert isinstance(m.a, flow.Tensor) and not m.a.requires_grad
    np.testing.assert_array_equal(m.a.numpy(), np.ones(2, np.float32))
    m.a = flow.full((2,), 5.0)  # plain tensors keep replacing the buffer, as before
    assert float(m.state_dict()["a"][0]) == 5.0


def test_set_submodule():
    net = nn.Sequential(
        OrderedDict(body=nn.Sequential(nn.Linear(2, 3), nn.ReLU()), head=nn.Linear(3, 1))
    )
    net.set_submodule("body.1", nn.Tanh())
    assert isinstance(net.body[1], nn.Tanh)
    net.set_submodule("body.extra", nn.Identity())
    assert isinstance(net.get_submodule("body.extra"), nn.Identity)
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.set_submodule("body.nope", nn.Identity(), strict=True)
    with pytest.raises(AttributeError):
        net.set_submodule("missing.x", nn.Identity())
    with pytest.raises(ValueError, match="not an nn.Module"):
        net.set_submodule("head", 3)


def test_modules_utils_and_common_types_match_torch():
    from torch.nn.modules import utils as tu

    from oneflow_like.nn.modules import utils as fu

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4, 5, 6]):
            assert getattr(fu, name)(v) == getattr(tu, name)(v)
    assert fu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert fu._list_with_default([None, 4], (1, 2, 5, 6)) == tu._list_with_default(
        [None, 4], (1, 2, 5, 6)
    )
    from oneflow_like.nn import common_types as fc
    from torch.nn import common_types as tc

    for name in (
        "_size_1_t",
        "_size_2_t",
        "_size_3_t",
        "_size_any_t",
        "_ratio_2_t",
        "_size_2_opt_t",
    ):
        assert hasattr(fc, name) and hasattr(tc, name)


def test_removable_handle():
    from oneflow_like.utils.hooks import RemovableHandle

    hooks, extra = OrderedDict(), OrderedDict()
    h = RemovableHandle(hooks, extra_dict=extra)
    hooks[h.id] = "hook"
    extra[h.id] = True
    h2 = RemovableHandle(hooks)
    assert h2.id != h.id
    h.remove()
    assert h.id not in hooks and h.id not in extra
    hooks[h2.id] = "hook2"
    with h2:
        pass
    assert not hooks


def test_stack_dataset_tuple_and_dict():
    from oneflow_like.utils.data import DataLoader, StackDataset, TensorDataset

    a = TensorDataset(flow.arange(6.0))
    b = list(range(10, 16))
    s = StackDataset(a, b)
    assert len(s) == 6 and s[2][1] == 12 and float(s[2][0][0]) == 2.0
    d = StackDataset(x=a, y=b)
    assert set(d[1]) == {"x", "y"} and d[1]["y"] == 11
    batch = next(iter(DataLoader(d, batch_size=3)))
    assert batch["y"].tolist() == [10, 11, 12]
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(a, [1, 2])
    with pytest.raises(ValueError, match="both types are given"):
        StackDataset(a, y=b)
