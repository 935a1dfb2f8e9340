"""The compiled path shared by jit.trace and flow.compile: an nn.Graph over a module or function,
compiled once per input signature, and the rule deciding when a call runs it or runs eagerly.

A call runs the compiled graph when it needs no gradient: grad mode is off (no_grad,
inference_mode) or no tensor argument, parameter or other tensor the graph captured requires
grad. It runs eagerly (the original Python, counted in `eager_calls` with the reason in
`eager_reasons`) when a gradient is needed (the graph's outputs carry no autograd history), when
keyword arguments or arguments other than tensors and plain constants are passed (the graph takes
positional tensors; constants are part of the signature), when a BatchNorm/InstanceNorm is in
training mode (running statistics are updated eagerly), and, where graph breaks are allowed, when
tracing the signature failed (data-dependent control flow, .item(), ...).
"""
import collections
import threading

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like.nn.graph import Graph, _signature, _autocast_key

_state = threading.local()
_CONSTS = (type(None), bool, int, float, complex, str, flow.dtype, flow.device)


def is_tracing():
    """True while jit.trace (or flow.compile) traces Python code into a graph."""
    return getattr(_state, "tracing", 0) > 0


class _Tracing:
    def __enter__(self):
        _state.tracing = getattr(_state, "tracing", 0) + 1

    def __exit__(self, *exc):
        _state.tracing -= 1
        return False


def _check_traced_output(out, strict, who, where="output"):
    """torch.jit.trace's rule: tensors, and tuples (lists and dicts too when strict=False)."""
    if isinstance(out, _C.Tensor):
        return
    if isinstance(out, tuple):
        for i, o in enumerate(out):
            _check_traced_output(o, strict, who, f"{where}[{i}]")
        return
    if isinstance(out, (list, dict)):
        if strict:
            raise RuntimeError(
                f"[{who}] the traced {where} is a {type(out).__name__}, which can change after "
                "tracing; return a tuple, or pass strict=False to trace it anyway"
            )
        items = out.items() if isinstance(out, dict) else enumerate(out)
        for k, o in items:
            _check_traced_output(o, strict, who, f"{where}[{k!r}]")
        return
    raise RuntimeError(
        f"[{who}] only tensors, or tuples, lists and dicts of tensors, can be output from traced "
        f"functions; {where} is a {type(out).__name__} ({out!r:.80})"
    )


class _FnGraph(Graph):
    """An inference nn.Graph whose build() calls `fn` (an nn.Module, kept as `model` so artifact
    exports name its tensors, or a function) under no_grad with is_tracing() true."""

    def __init__(self, fn, check_output=None):
        super().__init__()
        if isinstance(fn, flow.nn.Module):
            self.model = fn
        # in a tuple: export names captured tensors after the graph's module attributes only
        object.__setattr__(self, "_fn", (fn,))
        object.__setattr__(self, "_check_output", check_output)

    def build(self, *args):
        with flow.no_grad(), _Tracing():
            out = self._fn[0](*args)
        if self._check_output is not None:
            self._check_output(out)
        return out


def _norm_training(module):
    from oneflow_like.nn.modules.misc import _InstanceNorm
    from oneflow_like.nn.modules.normalization import _BatchNorm

    for name, m in module.named_modules():
        if m.training and isinstance(m, (_BatchNorm, _InstanceNorm)):
            if getattr(m, "track_running_stats", True):
                return f"{type(m).__name__} '{name}' is in training mode"
    return None


def _requires_grad(t):
    return t is not None and t.requires_grad


class Runner:
    """Runs `fn` through a per-signature compiled nn.Graph when the call needs no gradient,
    eagerly otherwise (see the module docstring). `graph_breaks=False` raises instead of falling
    back when a signature cannot be traced."""

    def __init__(self, fn, name, graph_breaks=True, check_output=None):
        self.fn = fn
        self.name = name
        # the graph class is named after `fn`: the HLO module and artifact carry the name
        graph_cls = type(name if name.isidentifier() else "traced", (_FnGraph,), {})
        self.graph = graph_cls(fn, check_output)
        self.graph_breaks = graph_breaks
        self.graph_calls = 0
        self.eager_calls = 0
        self.eager_reasons = collections.Counter()
        self._broken = {}  # signature -> why tracing failed
        self._captured = {}  # id(entry) -> captured tensors

    @property
    def compile_count(self):
        """How many input signatures were traced and compiled."""
        return len(self.graph._cache)

    def _key(self, args):
        return (_signature(args), _autocast_key())

    def compile(self, args):
        """Traces and compiles `args`' signature now (raises what tracing raises)."""
        return self.graph._entry(tuple(args))

    def _why_eager(self, args, kwargs):
        if kwargs:
            return "keyword arguments"
        for i, a in enumerate(args):
            if not isinstance(a, (_C.Tensor,) + _CONSTS):
                return (
                    f"argument {i} is a {type(a).__name__} (the graph takes tensors and constants)"
                )
        grad = flow.is_grad_enabled()
        if grad and any(isinstance(a, _C.Tensor) and a.requires_grad for a in args):
            return "an input requires grad"
        if isinstance(self.fn, flow.nn.Module):
            if grad and any(p.requires_grad for p in self.fn.parameters()):
                return "a parameter requires grad"
            why = _norm_training(self.fn)
            if why:
                return why
        why = self._broken.get(self._key(args))
        if why:
            return why
        return None

    def _entry_or_break(self, args):
        try:
            return self.graph._entry(args), None
        except Exception as e:
            if not self.graph_breaks:
                raise
            why = f"graph break: {type(e).__name__}: {str(e)[:200]}"
            self._broken[self._key(args)] = why
            return None, why

    def __call__(self, *args, **kwargs):
        why = self._why_eager(args, kwargs)
        if why is None:
            entry, why = self._entry_or_break(args)
            if entry is not None and flow.is_grad_enabled():
                captured = self._captured.get(id(entry))
                if captured is None:
                    captured = self._captured[id(entry)] = _C._graph_captured(entry.compiled)
                if any(_requires_grad(t) for t in captured):
                    why = "a captured tensor requires grad"
        if why is not None:
            self.eager_calls += 1
            self.eager_reasons[why] += 1
            return self.fn(*args, **kwargs)
        self.graph_calls += 1
        return self.graph(*args)

    def explain(self):
        """{compile_count, graph_calls, eager_calls, eager_reasons, recompile_reasons}."""
        return {
            "compile_count": self.compile_count,
            "graph_calls": self.graph_calls,
            "eager_calls": self.eager_calls,
            "eager_reasons": dict(self.eager_reasons),
            "recompile_reasons": list(self.graph.recompile_reasons),
        }
