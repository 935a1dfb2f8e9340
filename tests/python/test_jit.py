"""flow.jit (trace/script/save/load/freeze/fork and the decorators) and flow.compile on nn.Graph:
compiled results equal eager (and a float64 PyTorch reference), the compiled path really ran
(compile and graph-call counters), artifacts load in a fresh process, errors name their cause."""
import copy
import io
import json
import os
import subprocess
import sys
import threading
import typing
import warnings

import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(
        np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy()), rtol=tol, atol=tol
    )


def _mlp():
    flow.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def _cnn():
    flow.manual_seed(1)
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 5),
    )


# ---- trace -------------------------------------------------------------------------------------
def test_trace_mlp_float64_matches_torch_and_runs_compiled_graph():
    m = _mlp().double()
    ref = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    ref = ref.double()
    with torch.no_grad():
        for (_, p), (_, q) in zip(m.named_parameters(), ref.named_parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((5, 6))
    traced = flow.jit.trace(m, flow.tensor(x))
    assert traced.explain()["compile_count"] == 1  # compiled at trace time
    with flow.no_grad():
        y = traced(flow.tensor(x))
    assert traced.explain()["graph_calls"] == 1 and traced.explain()["eager_calls"] == 0
    np.testing.assert_allclose(
        y.detach().numpy(), ref(torch.from_numpy(x)).detach().numpy(), rtol=1e-12
    )
    assert "HloModule Sequential" in traced.code and "HloModule" in str(traced.graph)
    assert list(traced.state_dict()) == list(m.state_dict())
    assert traced[0].weight is m[0].weight  # shares the module's parameters, as torch
    assert isinstance(traced, flow.jit.ScriptModule) and isinstance(traced, flow.jit.TracedModule)


def test_trace_cnn_eval_equals_eager_and_recompiles_per_shape():
    m = _cnn().eval()
    x = flow.randn(2, 2, 8, 8)
    traced = flow.jit.trace(m, x)
    with flow.no_grad():
        _close(traced(x), m(x))
        x3 = flow.randn(3, 2, 8, 8)
        _close(traced(x3), m(x3))
        traced(x3)
    e = traced.explain()
    assert e["compile_count"] == 2 and e["graph_calls"] == 3, e
    assert "argument 0 changed" in e["recompile_reasons"][-1]
    by_name = flow.jit.trace(m, example_kwarg_inputs={"input": x})
    with flow.no_grad():
        _close(by_name(x), m(x))


def test_traced_call_needing_grad_runs_eagerly_and_backpropagates():
    m = _mlp()
    twin = copy.deepcopy(m)
    x = flow.randn(4, 6)
    traced = flow.jit.trace(m, x)
    traced(x).pow(2).sum().backward()
    twin(x).pow(2).sum().backward()
    for p, q in zip(m.parameters(), twin.parameters()):
        _close(p.grad, q.grad)
    e = traced.explain()
    assert e["eager_calls"] == 1 and e["eager_reasons"] == {"a parameter requires grad": 1}


def test_trace_function_is_tracing_and_check_trace():
    seen = []

    def f(a, b):
        seen.append(flow.jit.is_tracing())
        return a * 2 + b.sin(), a - b

    x, y = flow.randn(3, 4), flow.randn(3, 4)
    tf = flow.jit.trace(f, (x, y))
    assert seen == [True, False]  # traced, then check_trace's eager run
    assert not flow.jit.is_tracing()
    out = tf(x, y)
    _close(out[0], x * 2 + y.sin())
    _close(out[1], x - y)
    assert tf.explain()["graph_calls"] == 1

    def noisy(a):
        return a + flow.rand(a.shape)

    with pytest.warns(flow.jit.TracerWarning, match="does not match"):
        flow.jit.trace(noisy, (x,))


def test_trace_errors():
    x = flow.randn(2, 6)

    class Bad(nn.Module):
        def forward(self, x):
            return x.shape[0]

    with pytest.raises(RuntimeError, match=r"only tensors.*output is a int"):
        flow.jit.trace(Bad(), x)

    class ListOut(nn.Module):
        def forward(self, x):
            return [x, x + 1]

    with pytest.raises(RuntimeError, match="strict=False"):
        flow.jit.trace(ListOut(), x)
    traced = flow.jit.trace(ListOut(), x, strict=False)
    with flow.no_grad():
        out = traced(x)
    assert isinstance(out, list) and len(out) == 2
    with pytest.raises(TypeError, match="example_inputs"):
        flow.jit.trace(_mlp(), "not a tensor")


# ---- save / load -------------------------------------------------------------------------------
_LOADER = """
import json, sys
import numpy as np
from oneflow_like import mock_torch
mock_torch.enable()
import torch
m = torch.jit.load(sys.argv[1])
x = torch.tensor(np.arange(2 * 2 * 8 * 8, dtype=np.float32).reshape(2, 2, 8, 8) / 100.0)
print(json.dumps({"out": m(x).detach().numpy().tolist(), "keys": list(m.state_dict())}))
"""


def test_save_load_round_trip_in_fresh_process(tmp_path):
    m = _cnn().eval()
    x = flow.tensor(np.arange(2 * 2 * 8 * 8, dtype=np.float32).reshape(2, 2, 8, 8) / 100.0)
    traced = flow.jit.trace(m, x)
    path = str(tmp_path / "m.pt")
    flow.jit.save(traced, path)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(
        [sys.executable, "-c", _LOADER, path], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    with flow.no_grad():
        np.testing.assert_allclose(
            np.array(got["out"]), m(x).detach().numpy(), rtol=1e-5, atol=1e-5
        )
    assert set(got["keys"]) >= {n for n, _ in m.named_parameters()}


def test_save_load_file_object_and_loaded_module():
    m = _mlp().eval()
    x = flow.randn(3, 6)
    buf = io.BytesIO()
    flow.jit.trace(m, x).save(buf)
    buf.seek(0)
    loaded = flow.jit.load(buf, map_location="cpu")
    with flow.no_grad():
        _close(loaded(x), m(x))
    assert dict(loaded.named_parameters()).keys() == dict(m.named_parameters()).keys()
    with pytest.raises(TypeError, match="positional tensors"):
        loaded(input=x)
    with pytest.raises(TypeError, match="ScriptModule"):
        flow.jit.save(m, io.BytesIO())
    again = io.BytesIO()
    flow.jit.save(loaded, again)  # a loaded module saves its artifact unchanged
    assert again.getvalue() == buf.getvalue()


def test_load_missing_or_corrupt_file_names_path(tmp_path):
    missing = str(tmp_path / "missing.pt")
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        flow.jit.load(missing)
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a model" * 20)
    with pytest.raises(ValueError, match="corrupt.pt"):
        flow.jit.load(str(bad))
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        flow.jit.load(str(tmp_path))


# ---- script ------------------------------------------------------------------------------------
def test_script_function_keeps_python_semantics_and_saves_once_shapes_known(tmp_path):
    @flow.jit.script
    def f(x: flow.Tensor, n: int) -> flow.Tensor:
        for _ in range(n):  # control flow on a Python value
            x = x * 2 if x.sum() > 0 else x - 1
        return x

    x = flow.randn(4)
    ref = x
    for _ in range(3):
        ref = ref * 2 if ref.sum() > 0 else ref - 1
    _close(f(x, 3), ref)
    assert isinstance(f, flow.jit.ScriptFunction) and "for _ in range(n)" in f.code

    @flow.jit.script
    def g(a, b):
        return a.matmul(b).relu()

    with pytest.raises(RuntimeError, match="input shapes of g are not known"):
        g.save(str(tmp_path / "g.pt"))
    a, b = flow.randn(2, 3), flow.randn(3, 4)
    g(a, b)
    g.save(str(tmp_path / "g.pt"))
    _close(flow.jit.load(str(tmp_path / "g.pt"))(a, b), a.matmul(b).relu())


class _Gated(nn.Module):
    scale: typing.Final[int] = 3

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    @flow.jit.ignore
    def debug(self, x):
        return float(x.abs().max())

    @flow.jit.unused
    def unused_path(self, x):
        return x * 0

    @flow.jit.export
    def double(self, x):
        return self.fc(x) * 2

    def forward(self, x):
        if not flow.jit.is_scripting():
            x = x + 1
        return self.fc(x) * self.scale


def test_script_module_is_scripting_ignore_final():
    m = _Gated()
    s = flow.jit.script(m)
    x = flow.randn(2, 4)
    _close(s(x), m.fc(x + 1) * 3)
    _close(s.double(x), m.fc(x) * 2)
    assert s.debug(x) == m.debug(x) and s.scale == 3
    assert list(s.state_dict()) == list(m.state_dict()) and s.fc.weight is m.fc.weight
    hooked = flow.jit.trace(_Gated().eval(), x)
    hooked.register_forward_hook(lambda mod, inp, out: out * 0)  # hooks on the traced module run
    with flow.no_grad():
        assert float(hooked(x).abs().sum()) == 0.0
    assert isinstance(s, flow.jit.ScriptModule) and isinstance(s, _Gated)
    assert flow.jit.script(s) is s
    traced = flow.jit.trace(_Gated().eval(), x)
    with flow.no_grad():
        _close(traced(x), traced.fc(x + 1) * 3)


def test_script_module_save_needs_shapes_then_exports(tmp_path):
    s = flow.jit.script(_mlp().eval())
    with pytest.raises(RuntimeError, match="input shapes of Sequential are not known"):
        s.save(str(tmp_path / "s.pt"))
    x = flow.randn(3, 6)
    s2 = flow.jit.script(_mlp().eval(), example_inputs=[(x,)])
    s2.save(str(tmp_path / "s.pt"))
    with flow.no_grad():
        _close(flow.jit.load(str(tmp_path / "s.pt"))(x), s2(x))


def test_freeze_and_optimize_for_inference():
    m = _mlp()
    x = flow.randn(2, 6)
    traced = flow.jit.trace(m, x)
    with pytest.raises(RuntimeError, match="eval mode"):
        flow.jit.freeze(traced)
    with pytest.raises(RuntimeError, match="ScriptModule"):
        flow.jit.freeze(m.eval())
    frozen = flow.jit.freeze(traced.eval())
    y = frozen(x)  # grad mode on, but frozen parameters need no grad: the graph runs
    assert frozen.explain()["graph_calls"] == 1 and not y.requires_grad
    with flow.no_grad():
        _close(y, m(x))
        m[0].weight.mul_(2)  # the frozen copy keeps the old values
    assert not np.allclose(frozen(x).detach().numpy(), m(x).detach().numpy())
    opt = flow.jit.optimize_for_inference(flow.jit.script(_mlp()))
    assert not opt.training and all(not p.requires_grad for p in opt.parameters())


# ---- the small names ---------------------------------------------------------------------------
def test_fork_wait_runs_on_a_thread():
    main = threading.get_ident()

    def work(a, k=1):
        return a * k, threading.get_ident()

    x = flow.randn(3)
    futs = [flow.jit.fork(work, x, k=i) for i in range(3)]
    for i, fut in enumerate(futs):
        out, tid = flow.jit.wait(fut)
        _close(out, x * i)
        assert tid != main
    chained = futs[0].then(lambda f: f.wait()[0] + 1)
    _close(chained.wait(), x * 0 + 1)

    def boom():
        raise ValueError("inside fork")

    with pytest.raises(ValueError, match="inside fork"):
        flow.jit.wait(flow.jit.fork(boom))
    with flow.no_grad():
        assert flow.jit.wait(flow.jit.fork(flow.is_grad_enabled)) is False


def test_isinstance_annotate_attribute_compilation_unit():
    List, Dict, Optional, Tuple = typing.List, typing.Dict, typing.Optional, typing.Tuple
    cases = [
        ([1, 2], List[int]),
        ([1, "a"], List[int]),
        ({"a": torch.zeros(1)}, Dict[str, torch.Tensor]),
        (None, Optional[int]),
        ((1, 2.0), Tuple[int, float]),
        ((1,), Tuple[int, float]),
    ]
    for obj, tp in cases:  # same answers as torch.jit.isinstance
        ours = obj
        if isinstance(obj, dict):
            ours, tp_ours = {"a": flow.zeros(1)}, Dict[str, flow.Tensor]
        else:
            tp_ours = tp
        assert flow.jit.isinstance(ours, tp_ours) == torch.jit.isinstance(obj, tp), (obj, tp)
    assert flow.jit.annotate(List[int], []) == [] and flow.jit.Attribute(3, int) == 3
    cu = flow.jit.CompilationUnit("def twice(x: Tensor) -> Tensor:\n    return torch.relu(x) * 2\n")
    x = flow.randn(5)
    _close(cu.twice(x), x.relu() * 2)
    assert issubclass(flow.jit.Error, RuntimeError)


def test_mock_torch_resolves_jit_and_compile():
    code = (
        "from oneflow_like import mock_torch\n"
        "mock_torch.enable()\n"
        "import torch, torch.jit\n"
        "from torch.jit import trace, Final\n"
        "import oneflow_like\n"
        "assert torch.jit.trace is oneflow_like.jit.trace and torch.compile is oneflow_like.compile\n"
        "assert torch.compiler.is_compiling() is False and not torch.jit.is_scripting()\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ---- compile -----------------------------------------------------------------------------------
def test_compile_inference_equals_eager_and_compiles_once_per_signature():
    m = _cnn().eval()
    c = flow.compile(m)
    assert isinstance(c, nn.Module) and c._orig_mod is m
    assert list(c.state_dict()) == ["_orig_mod." + k for k in m.state_dict()]
    x = flow.randn(2, 2, 8, 8)
    with flow.no_grad():
        for _ in range(3):
            _close(c(x), m(x))
    with flow.inference_mode():
        x5 = flow.randn(5, 2, 8, 8)
        _close(c(x5), m(x5))
    e = c.explain()
    assert e["compile_count"] == 2 and e["graph_calls"] == 4 and e["eager_calls"] == 0, e
    c.train()  # BatchNorm in training mode updates its running statistics: eager
    with flow.no_grad():
        c(x)
    assert c.explain()["eager_reasons"] == {"BatchNorm2d '1' is in training mode": 1}
    m.note = 5
    assert c.note == 5  # attributes reach the original module, as torch's


def test_compile_training_loop_trains_and_equals_eager():
    m = _mlp()
    twin = copy.deepcopy(m)
    c = flow.compile(m)
    opt = flow.optim.SGD(c.parameters(), lr=0.1)
    opt2 = flow.optim.SGD(twin.parameters(), lr=0.1)
    g = flow.Generator().manual_seed(3)
    x = flow.randn(32, 6, generator=g)
    y = flow.randn(32, 3, generator=g)
    losses = []
    for _ in range(20):
        loss = flow.nn.functional.mse_loss(c(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss2 = flow.nn.functional.mse_loss(twin(x), y)
        opt2.zero_grad()
        loss2.backward()
        opt2.step()
        _close(loss, loss2)
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
    e = c.explain()
    assert e["eager_calls"] == 0 and e["train_graph_calls"] == 20, e  # compiled training path
    assert e["compiled_backward_calls"] == 20
    with flow.no_grad():
        _close(c(x), twin(x))
    assert c.explain()["graph_calls"] == 1


def test_compile_function_graph_breaks_and_fullgraph():
    def f(x):
        if x.sum() > 0:  # data-dependent Python control flow: cannot be traced
            return x * 2
        return x - 1

    cf = flow.compile(f)
    x = flow.ones(3)
    _close(cf(x), x * 2)
    _close(cf(-x), -x - 1)
    e = cf.explain()
    assert e["graph_calls"] == 0 and e["eager_calls"] == 2
    assert all(r.startswith("graph break") for r in e["eager_reasons"])
    with pytest.raises(Exception):
        flow.compile(f, fullgraph=True)(x)

    @flow.compile
    def h(a, b):
        return (a * b).sum(1)

    a, b = flow.randn(2, 3), flow.randn(2, 3)
    _close(h(a, b), (a * b).sum(1))
    assert h.explain()["graph_calls"] == 1

    @flow.compiler.disable
    def python_only(x):
        return x + 1

    def uses(x):
        return python_only(x) * 3

    cu = flow.compile(uses)
    _close(cu(a), (a + 1) * 3)
    assert cu.explain()["eager_calls"] == 1 and not python_only(a).requires_grad


def test_compile_arguments():
    m = _mlp()
    assert flow.compile(m, disable=True) is m
    with pytest.raises(RuntimeError, match="mode or options"):
        flow.compile(m, mode="max-autotune", options={"a": 1})
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        flow.compile(m, mode="fastest")
    with pytest.raises(ValueError, match="invalid backend"):
        flow.compile(m, backend="nope")
    with pytest.raises(NotImplementedError, match="custom backends"):
        flow.compile(m, backend=lambda gm, inputs: gm)
    eager = flow.compile(m.eval(), backend="eager")
    with flow.no_grad():
        eager(flow.randn(2, 6))
    assert eager.explain()["compile_count"] == 0
    dec = flow.compile(mode="reduce-overhead")(lambda x: x * 3)
    _close(dec(flow.ones(2)), flow.ones(2) * 3)
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(flow.compiler.is_compiling())
            return x + 1

    probe = flow.compile(Probe())
    with flow.no_grad():
        probe(flow.ones(2))  # traced (compiling), then the graph runs without Python
        probe(flow.ones(2))  # the graph again
    probe(flow.ones(2, requires_grad=True))  # training: forward and backward graphs traced
    probe(flow.ones(2, requires_grad=True))  # both graphs run without Python
    flow.jit.trace(Probe(), flow.ones(2), check_trace=False)
    assert seen == [True, True, True, False] and not flow.compiler.is_compiling()
