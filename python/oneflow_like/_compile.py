"""flow.compile (torch.compile) and flow.compiler (torch.compiler's disable / is_compiling).

compile(model) returns an OptimizedModule (an nn.Module holding the model as `_orig_mod`, so its
state_dict keys are prefixed "_orig_mod." as in PyTorch) or a wrapped function. Which path runs:
  - a call that needs no gradient (under no_grad/inference_mode, or no tensor argument,
    parameter or captured tensor requires grad) runs an nn.Graph traced and compiled through our
    HLO compiler for that input signature (shapes, dtypes, devices, constant arguments, autocast
    state), cached: a new signature compiles again (`explain()["compile_count"]`);
  - a call that needs a gradient (training), or has keyword or non-tensor/non-constant arguments,
    or runs a BatchNorm/InstanceNorm in training mode, runs the original module eagerly, so
    backward works exactly as without compile; `explain()` counts these with the reason;
  - a signature whose tracing fails (data-dependent Python control flow, .item(), ...) is a graph
    break: it runs eagerly from then on, or raises with fullgraph=True.
backend="eager" (or disable=True) never compiles. Calls inside a compiled call are not nested.
"""
import functools

import oneflow_like as flow
from oneflow_like import nn

from .jit._runner import Runner, _state

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "tvm", "openxla")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _check_args(backend, mode, options, dynamic):
    if mode is not None and options is not None:
        raise RuntimeError(
            "[compile] Either mode or options can be specified, but both can't be specified at "
            "the same time."
        )
    if mode not in _MODES:
        raise RuntimeError(f"[compile] Unrecognized mode={mode!r}, should be one of {_MODES[1:]}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"[compile] options must be a dict, got {type(options).__name__}")
    if dynamic not in (None, True, False):
        raise TypeError(f"[compile] dynamic must be None, True or False, got {dynamic!r}")
    if not isinstance(backend, str):
        raise NotImplementedError(
            f"[compile] custom backends ({type(backend).__name__}) are not supported: they take "
            f"a torch.fx graph, which oneflow_like does not produce; use one of {_BACKENDS}"
        )
    if backend not in _BACKENDS:
        raise ValueError(f"[compile] invalid backend {backend!r}, expected one of {_BACKENDS}")


class _Compiled:
    """Routes calls to the Runner (compiling) or to the function (eager backend, nested calls)."""

    def __init__(self, fn, name, fullgraph, backend):
        self.runner = Runner(fn, name, graph_breaks=not fullgraph)
        self.fn = fn
        self.eager_backend = backend == "eager"

    def __call__(self, *args, **kwargs):
        if self.eager_backend or getattr(_state, "compiling", 0):
            return self.fn(*args, **kwargs)
        _state.compiling = getattr(_state, "compiling", 0) + 1
        try:
            return self.runner(*args, **kwargs)
        finally:
            _state.compiling -= 1


class OptimizedModule(nn.Module):
    """torch.compile's result for a module: calls run the compiled graph or the module eagerly as
    oneflow_like._compile's docstring says; `explain()` reports which ran and how often."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def explain(self):
        """{compile_count, graph_calls, eager_calls, eager_reasons, recompile_reasons}."""
        return self.__dict__["_compiled"].runner.explain()

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    disable=False,
):
    """torch.compile on nn.Graph: see this module's docstring for which path runs when.
    Without `model`, a decorator. `dynamic` is accepted; every distinct signature compiles."""
    _check_args(backend, mode, options, dynamic)
    if model is None:
        return lambda m: compile(
            m,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if disable:
        return model
    if isinstance(model, nn.Module):
        return OptimizedModule(model, _Compiled(model, type(model).__name__, fullgraph, backend))
    if not callable(model):
        raise RuntimeError(f"[compile] model must be an nn.Module or a callable, got {model!r}")
    compiled = _Compiled(model, getattr(model, "__name__", "compiled"), fullgraph, backend)

    @functools.wraps(model)
    def wrapper(*args, **kwargs):
        return compiled(*args, **kwargs)

    wrapper._torchdynamo_orig_callable = model
    wrapper.explain = compiled.runner.explain
    return wrapper
