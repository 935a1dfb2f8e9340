"""oneflow_like.jit: torch.jit's names on our compiler.

    traced = flow.jit.trace(model, x)     # compiles model's forward through nn.Graph (HLO) now
    with flow.no_grad(): y = traced(x)     # runs the compiled graph (traced.explain() counts)
    traced.save("m.oflx"); m = flow.jit.load("m.oflx")   # an .oflx artifact (flow.export)
    scripted = flow.jit.script(model)      # runs as Python: exactly Python's results

trace runs the compiled graph for calls that need no gradient and the module eagerly for those
that do (jit/_runner.py says exactly when). script keeps Python semantics (we do not compile
arbitrary control flow), so is_scripting() is False: code guarded by it takes its Python branch.
"""
import builtins as _builtins
import concurrent.futures as _futures
import typing as _typing

import oneflow_like as _flow

from ._modules import (  # noqa: F401
    LoadedScriptModule,
    RecursiveScriptModule,
    ScriptFunction,
    ScriptModule,
    TopLevelTracedModule,
    TracedFunction,
    TracedModule,
    TracerWarning,
    TracingCheckError,
    freeze,
    load,
    optimize_for_inference,
    save,
    script,
    trace,
    trace_module,
)
from ._runner import is_tracing  # noqa: F401

Final = _typing.Final


class Error(RuntimeError):
    """torch.jit.Error (raised by scripted code's `raise`; a RuntimeError)."""


def is_scripting():
    """False: scripted code runs as Python here (see the module docstring)."""
    return False


def _modifier(fn, kind):
    fn._torchscript_modifier = kind
    return fn


def ignore(drop=False, **kwargs):
    """@jit.ignore / @jit.ignore(drop=True): leave a function to Python (it always is here)."""
    if callable(drop):
        return _modifier(drop, "ignore")
    if not _builtins.isinstance(drop, bool):
        raise RuntimeError(
            f"[jit.ignore] argument must be a bool or a function, got {type(drop).__name__}"
        )
    return lambda fn: _modifier(fn, "unused" if drop else "ignore")


def unused(fn):
    """@jit.unused: a method TorchScript would replace by a raise; Python still runs it."""
    if _builtins.isinstance(fn, property):
        _modifier(fn.fget, "unused")
        return fn
    return _modifier(fn, "unused")


def export(fn):
    """@jit.export: marks a method to compile besides forward (all methods stay callable)."""
    return _modifier(fn, "export")


def script_method(fn):
    return fn


def interface(obj):
    """@jit.interface: a class describing methods (kept as the class)."""
    if not _builtins.isinstance(obj, type):
        raise RuntimeError("[jit.interface] expects a class")
    obj.__torch_script_interface__ = True
    return obj


def _overload(func):
    """@jit._overload: a typed declaration of `func`; the undecorated definition implements it."""
    _overloads.setdefault(f"{func.__module__}.{func.__qualname__}", []).append(func)
    return func


_overload_method = _overload
_overloads = {}


def annotate(the_type, the_value):
    """torch.jit.annotate: returns the_value (the type is for the TorchScript compiler)."""
    return the_value


def Attribute(value, type):  # noqa: A002  (torch's spelling)
    """torch.jit.Attribute outside TorchScript: the value itself."""
    return value


def _is_instance(obj, target):
    origin = _typing.get_origin(target)
    args = _typing.get_args(target)
    if target is _typing.Any:
        return True
    if origin is None:
        if target is None or target is type(None):
            return obj is None
        return _builtins.isinstance(obj, target)
    if origin is _typing.Union:
        return any(_is_instance(obj, a) for a in args)
    if origin is list:
        if not _builtins.isinstance(obj, list):
            return False
        return not args or all(_is_instance(o, args[0]) for o in obj)
    if origin is tuple:
        if not _builtins.isinstance(obj, tuple):
            return False
        if not args:
            return True
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_is_instance(o, args[0]) for o in obj)
        return len(obj) == len(args) and all(_is_instance(o, a) for o, a in zip(obj, args))
    if origin is dict:
        if not _builtins.isinstance(obj, dict):
            return False
        return not args or all(
            _is_instance(k, args[0]) and _is_instance(v, args[1]) for k, v in obj.items()
        )
    return _builtins.isinstance(obj, origin)


def isinstance(obj, target_type):  # noqa: A001  (torch.jit.isinstance)
    """torch.jit.isinstance: isinstance that understands List[int], Dict[str, Tensor],
    Tuple[...], Optional[...] and Union[...], checking the contents."""
    return _is_instance(obj, target_type)


# torch.jit.Future is torch.futures.Future.
from oneflow_like.futures import Future  # noqa: E402


_pool = None


def fork(func, *args, **kwargs):
    """torch.jit.fork: runs func(*args, **kwargs) on a worker thread of the inter-op pool (with the
    caller's grad mode) and returns a Future; wait(fut) returns its result or raises its
    exception. The pool has torch.get_num_interop_threads() threads (torch.set_num_interop_threads
    sets that before the first fork, as in PyTorch)."""
    global _pool
    if _pool is None:  # the inter-op pool: torch.set_num_interop_threads sizes it, once
        _pool = _futures.ThreadPoolExecutor(
            max_workers=_flow.get_num_interop_threads(), thread_name_prefix="oneflow_like.jit.fork"
        )
    grad = _flow.is_grad_enabled()

    def run():
        with _flow.set_grad_enabled(grad):
            return func(*args, **kwargs)

    return Future._wrap(_pool.submit(run))


def wait(future):
    """torch.jit.wait: the result of a Future from fork()."""
    if not _builtins.isinstance(future, Future):
        raise TypeError(f"[jit.wait] expected a Future from jit.fork, got {type(future).__name__}")
    return future.wait()


class CompilationUnit:
    """torch.jit.CompilationUnit(src): defines the functions in `src` (TorchScript is Python
    syntax; `torch` names oneflow_like) as ScriptFunctions, reachable as attributes."""

    def __init__(self, lang=None, _frames_up=0):
        self._functions = {}
        if lang is not None:
            self.define(lang)

    def define(self, src, rcb=None, _frames_up=0):
        ns = {
            "torch": _flow,
            "Tensor": _flow.Tensor,
            "List": _typing.List,
            "Dict": _typing.Dict,
            "Tuple": _typing.Tuple,
            "Optional": _typing.Optional,
        }
        exec(compile(src, "<jit.CompilationUnit>", "exec"), ns)  # noqa: S102
        for name, v in ns.items():
            if callable(v) and getattr(v, "__code__", None) is not None:
                if v.__code__.co_filename == "<jit.CompilationUnit>":
                    self._functions[name] = script(v)

    def find_function(self, name):
        return self._functions.get(name)

    def get_functions(self):
        return list(self._functions.values())

    def __getattr__(self, name):
        fns = self.__dict__.get("_functions", {})
        if name in fns:
            return fns[name]
        raise AttributeError(f"[jit.CompilationUnit] no function '{name}'")


def script_if_tracing(fn):
    """torch.jit.script_if_tracing: fn itself (scripted code runs as Python here)."""
    return fn


_script_if_tracing = script_if_tracing
