"""torch.fx on our modules (oneflow_like/fx): symbolic_trace records a Graph whose generated code
(GraphModule) computes what the module computes; graphs can be edited and recompiled; the
Interpreter and Transformer walk them; tracing stops at data-dependent control flow."""
import copy
import operator

import numpy as np
import pytest

import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like import fx, nn

try:
    import torch
    import torch.fx  # noqa: F401
except ImportError:
    torch = None


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.layers = nn.Sequential(nn.ReLU(), nn.Conv2d(4, 4, 1))
        self.scale = nn.Parameter(flow.full((1,), 1.5))
        self.register_buffer("offset", flow.full((1,), 0.25))

    def forward(self, x, y=None):
        h = F.relu(self.bn(self.conv(x)))
        h = self.layers(h) * self.scale + self.offset
        h = flow.cat([h, x.mean(1, keepdim=True)], dim=1)
        z = h.view(h.size(0), -1)
        return 2.0 * z[:, :10] + 1, z.shape


def test_trace_records_the_forward_and_runs_it():
    m = Block().eval()
    gm = fx.symbolic_trace(m)
    ops = [
        (n.op, n.target if n.op != "call_function" else n.target.__name__) for n in gm.graph.nodes
    ]
    assert ops[:3] == [("placeholder", "x"), ("placeholder", "y"), ("call_module", "conv")]
    assert ("call_module", "layers.1") in ops and ("get_attr", "scale") in ops
    assert ("call_method", "view") in ops and ("call_function", "cat") in ops
    assert "relu = oneflow_like.nn.functional.relu(bn)" in gm.code
    assert "getitem = view[slice(None, None, None), slice(None, 10, None)]" in gm.code
    x = flow.randn(2, 3, 5, 5)
    (a, sa), (b, sb) = m(x), gm(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert sa == sb and isinstance(gm, nn.Module) and type(gm).__name__ == "Block"
    assert gm.scale is m.scale and gm.conv is m.conv  # shared, as torch's GraphModule
    out, _ = fx.Interpreter(gm).run(x)
    np.testing.assert_array_equal(out.detach().numpy(), a.detach().numpy())
    assert [n.name for n in gm.graph.find_nodes(op="get_attr")] == ["scale", "offset"]
    gm.graph.lint()
    assert "%relu : [num_users=1] = call_function" in str(gm.graph)


def test_graph_edits_and_recompile():
    gm = fx.symbolic_trace(Block().eval())
    x = flow.randn(2, 3, 5, 5)
    (relu,) = [n for n in gm.graph.nodes if n.op == "call_function" and n.target is F.relu]
    relu.target = flow.sigmoid
    gm.recompile()
    ref = Block().eval()
    ref.load_state_dict(gm.state_dict())
    h = flow.sigmoid(ref.bn(ref.conv(x)))
    h = ref.layers(h) * ref.scale + ref.offset
    h = flow.cat([h, x.mean(1, keepdim=True)], 1).view(2, -1)
    np.testing.assert_allclose(
        gm(x)[0].detach().numpy(), (2.0 * h[:, :10] + 1).detach().numpy(), rtol=1e-6
    )
    # insert a node after `add`, route its users through it, drop dead code
    (add,) = [n for n in gm.graph.nodes if n.name == "add"]
    with gm.graph.inserting_after(add):
        neg = gm.graph.call_function(operator.neg, (add,))
    add.replace_all_uses_with(neg)
    neg.args = (add,)
    dead = gm.graph.call_method("abs", (add,))
    assert gm.graph.eliminate_dead_code() and dead not in gm.graph.nodes
    gm.recompile()
    assert "neg = -add" in gm.code
    with pytest.raises(RuntimeError, match="still has 1 user"):
        gm.graph.erase_node(add)


def test_transformer_rewrites_and_copies():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return flow.relu(self.fc(x)) + flow.relu(x)

    class ReluToGelu(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is flow.relu:
                target = F.gelu
            return super().call_function(target, args, kwargs)

    m = Net()
    gm = ReluToGelu(fx.symbolic_trace(m)).transform()
    x = flow.randn(3, 4)
    np.testing.assert_allclose(
        gm(x).detach().numpy(), (F.gelu(m.fc(x)) + F.gelu(x)).detach().numpy(), rtol=1e-6
    )
    gm2 = copy.deepcopy(gm)
    assert gm2.fc is not gm.fc
    np.testing.assert_allclose(gm2(x).detach().numpy(), gm(x).detach().numpy())


def test_control_flow_errors_and_concrete_args():
    class Branchy(nn.Module):
        def forward(self, x, flip=False):
            if flip:
                return -x
            return x * 2

    class Data(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(fx.TraceError, match="cannot be used as inputs to control flow"):
        fx.symbolic_trace(Data())
    gm = fx.symbolic_trace(Branchy(), concrete_args={"flip": True})
    assert gm(flow.ones(2)).tolist() == [-1.0, -1.0]
    with pytest.raises(fx.TraceError, match="cannot be iterated"):
        fx.symbolic_trace(lambda x: [t for t in x])


def test_custom_leaf_modules_functions_and_wrap():
    class Inner(nn.Module):
        def forward(self, x):
            return x + 1

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) * 3

    default = fx.symbolic_trace(Outer())
    assert [n.op for n in default.graph.nodes].count("call_module") == 0  # traced through

    class KeepInner(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return isinstance(m, Inner) or super().is_leaf_module(m, qualname)

    root = Outer()
    g = KeepInner().trace(root)
    gm = fx.GraphModule(root, g)
    assert [n.target for n in g.nodes if n.op == "call_module"] == ["inner"]
    assert gm(flow.ones(2)).tolist() == [6.0, 6.0]

    def f(a, b):
        return flow.relu(a) + b * 2

    fg = fx.symbolic_trace(f)
    assert fg(flow.tensor([-1.0, 1.0]), flow.ones(2)).tolist() == [2.0, 3.0]
    t = fx.Tracer(autowrap_functions=(_clamp_len,))
    g2 = t.trace(lambda x: _clamp_len(x) + x)
    assert [n.target for n in g2.nodes if n.op == "call_function"][0] is _clamp_len


def _clamp_len(x):
    return x.clamp(0, len(x))


# ---- subgraph_rewriter.replace_pattern -------------------------------------------------------


def _rewrite_case(lib):
    fx = lib.fx

    class M(lib.nn.Module):
        def forward(self, x, w1, w2):
            m1 = lib.cat([w1, w2]).sum()
            m2 = lib.cat([w1, w2]).sum()
            return x + lib.max(m1) + lib.max(m2)

    class N(lib.nn.Module):
        def forward(self, x):
            y = lib.relu(x) * 2
            z = lib.relu(y) * 2  # a match whose input is the previous match's output
            return z + y

    gm = fx.symbolic_trace(M())
    n1 = len(
        fx.replace_pattern(gm, lambda a, b: lib.cat([a, b]).sum(), lambda a, b: lib.stack([a, b]))
    )
    gm2 = fx.symbolic_trace(N())
    n2 = len(fx.replace_pattern(gm2, lambda a: lib.relu(a) * 2, lambda a: lib.sigmoid(a) + 1))
    x = lib.tensor([-1.0, 0.5, 2.0])
    w = lib.tensor([[1.0, 2.0], [3.0, -4.0]])
    return n1, n2, gm(x[:1], w, w).tolist(), gm2(x).tolist()


def test_replace_pattern_matches_torch():
    n1, n2, y1, y2 = _rewrite_case(flow)
    assert (n1, n2) == (2, 2)
    if torch is not None:
        t1, t2, r1, r2 = _rewrite_case(torch)
        assert (t1, t2) == (n1, n2)
        np.testing.assert_allclose(y1, r1, rtol=1e-6)
        np.testing.assert_allclose(y2, r2, rtol=1e-6)


def test_replace_pattern_multi_output_and_escaping_intermediates():
    class M(flow.nn.Module):
        def forward(self, x):
            a = flow.sin(x)
            b = flow.cos(x)
            return a * b, flow.exp(a)

    def pattern(x):
        return flow.sin(x), flow.cos(x)

    def replacement(x):
        return flow.cos(x), flow.sin(x)

    gm = flow.fx.symbolic_trace(M())
    x = flow.tensor([0.3, 1.2])
    assert len(flow.fx.replace_pattern(gm, pattern, replacement)) == 1
    out, e = gm(x)
    assert flow.allclose(out, flow.cos(x) * flow.sin(x)) and flow.allclose(e, flow.exp(flow.cos(x)))

    class K(flow.nn.Module):
        def forward(self, x):
            r = flow.relu(x)
            return r * 2, r  # relu's result escapes the pattern relu(x) * 2: no replacement

    gk = flow.fx.symbolic_trace(K())
    assert flow.fx.replace_pattern(gk, lambda a: flow.relu(a) * 2, lambda a: a) == []
    with pytest.raises(ValueError, match="takes 1 inputs but the replacement takes 2"):
        flow.fx.replace_pattern(gk, lambda a: flow.relu(a), lambda a, b: a + b)
