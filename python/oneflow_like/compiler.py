"""torch.compiler names: compile, disable, is_compiling."""
import functools

from ._compile import compile  # noqa: F401
from .jit._runner import _state


def is_compiling():
    """True while flow.compile traces a call into a graph (as torch.compiler.is_compiling while
    dynamo traces); False in eager runs, compiled-graph runs and jit.trace."""
    return getattr(_state, "compiling", 0) > 0 and getattr(_state, "tracing", 0) > 0


def is_dynamo_compiling():
    return is_compiling()


def disable(fn=None, recursive=True):
    """torch.compiler.disable: `fn` is never compiled. Called while flow.compile traces a
    caller, it is a graph break: that input signature of the caller runs eagerly (or raises with
    fullgraph=True). Usable as a decorator."""
    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if getattr(_state, "compiling", 0) and getattr(_state, "tracing", 0):
            raise RuntimeError(
                f"[compiler.disable] {getattr(fn, '__qualname__', fn)!s} is excluded from "
                "compilation (graph break)"
            )
        return fn(*args, **kwargs)

    wrapper._torchdynamo_disable = True
    return wrapper
