"""nn.Module completeness: forward pre/post hooks (kwargs, prepend, always_call, handles),
non-persistent buffers, named_modules, apply, load_state_dict's strict messages, the
strict=False report and assign=True, get_parameter/get_buffer."""
import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn as nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(flow.ones(3))
        self.register_buffer("count", flow.zeros(1))
        self.register_buffer("cache", flow.zeros(2), persistent=False)

    def forward(self, x, factor=1.0):
        return x * self.w * factor


def test_forward_hooks_order_kwargs_and_handles():
    m = Scale()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
    h2 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
    h3 = m.register_forward_pre_hook(
        lambda mod, args, kwargs: (args, dict(kwargs, factor=2.0)), with_kwargs=True
    )
    h4 = m.register_forward_hook(lambda mod, args, out: out + 1)
    h5 = m.register_forward_hook(
        lambda mod, args, kwargs, out: calls.append(("post", kwargs["factor"])), with_kwargs=True
    )
    out = m(flow.ones(3), factor=1.0)
    assert out.tolist() == [3.0, 3.0, 3.0]  # factor 2 from the kwargs pre-hook, + 1 from h4
    assert calls == ["pre0", "pre1", ("post", 2.0)]
    for h in (h1, h2, h3, h4, h5):
        h.remove()
    calls.clear()
    assert m(flow.ones(3)).tolist() == [1.0, 1.0, 1.0] and calls == []
    with m.register_forward_pre_hook(lambda mod, args: (args[0] * 10,)):
        assert m(flow.ones(3)).tolist() == [10.0, 10.0, 10.0]
    assert m(flow.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_always_call_hook_runs_when_forward_raises():
    m = Scale()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("plain"))
    with pytest.raises(ValueError, match="broadcast"):
        m(flow.ones(4))  # shape mismatch with w
    assert seen == [None]


def test_buffers_named_modules_apply():
    net = nn.Sequential(Scale(), nn.Sequential(Scale(), nn.ReLU()))
    assert list(net.state_dict()) == ["0.w", "0.count", "1.0.w", "1.0.count"]
    assert [n for n, _ in net.named_buffers()] == ["0.count", "0.cache", "1.0.count", "1.0.cache"]
    assert [n for n, _ in net.named_modules()] == ["", "0", "1", "1.0", "1.1"]
    assert [n for n, _ in net.named_modules(prefix="net")][:2] == ["net", "net.0"]
    visited = []
    net.apply(lambda m: visited.append(type(m).__name__))
    assert visited == ["Scale", "Scale", "ReLU", "Sequential", "Sequential"]
    assert net.get_parameter("1.0.w") is net[1][0].w
    assert net.get_buffer("0.cache") is net[0].cache
    with pytest.raises(AttributeError, match="no parameter `v`"):
        net.get_parameter("0.v")


def test_load_state_dict_strict_messages_and_report():
    m = Scale()
    sd = {"w": flow.full((3,), 2.0), "extra": flow.ones(1)}
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == (
        "Error(s) in loading state_dict for Scale:\n\t"
        'Missing key(s) in state_dict: "count".\n\t'
        'Unexpected key(s) in state_dict: "extra".'
    )
    report = m.load_state_dict(sd, strict=False)
    assert report.missing_keys == ["count"] and report.unexpected_keys == ["extra"]
    assert m.w.tolist() == [2.0, 2.0, 2.0]
    assert repr(m.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for w: copying a param with shape "
        r"\(2,\) from checkpoint, the shape in current model is \(3,\)",
    ):
        m.load_state_dict({"w": flow.ones(2)}, strict=False)


def test_load_state_dict_assign():
    m = Scale()
    new_w, new_count = flow.full((3,), 5.0), flow.full((1,), 7.0)
    m.load_state_dict({"w": new_w, "count": new_count}, assign=True)
    assert isinstance(m.w, nn.Parameter) and m.w.requires_grad and m.w.tolist() == [5.0] * 3
    assert m.count is new_count
    with flow.no_grad():
        new_w.add_(1.0)  # the parameter shares the assigned tensor's storage
    np.testing.assert_array_equal(m.w.detach().numpy(), [6.0, 6.0, 6.0])


def test_parameter_list_and_dict():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([flow.ones(2), nn.Parameter(flow.zeros(3))])
            self.named = nn.ParameterDict({"a": flow.ones(1)})
            self.named["b"] = nn.Parameter(flow.full((2,), 3.0))

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["ws.0", "ws.1", "named.a", "named.b"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    net.ws.append(flow.ones(4))
    assert len(net.ws) == 3 and net.ws[-1].shape == (4,) and "b" in net.named
    assert list(net.named.keys()) == ["a", "b"] and net.named.pop("a").shape == (1,)
    sd = net.state_dict()
    assert list(sd) == ["ws.0", "ws.1", "ws.2", "named.b"]


def test_parameters_to_vector_round_trip():
    from oneflow_like.nn.utils import parameters_to_vector, vector_to_parameters

    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = parameters_to_vector(net.parameters())
    assert vec.shape == (11,)
    np.testing.assert_array_equal(
        vec[:6].detach().numpy(), net[0].weight.detach().numpy().reshape(-1)
    )
    vector_to_parameters(flow.arange(11, dtype=flow.float32), net.parameters())
    assert net[1].bias.tolist() == [10.0] and net[0].weight[1].tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match=r"vec has 3 elements, the parameters 11"):
        vector_to_parameters(flow.ones(3), net.parameters())
