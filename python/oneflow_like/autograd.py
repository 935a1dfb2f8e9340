"""flow.autograd: grad mode, backward/grad, and user-defined Functions."""
import contextlib
import functools

from . import _C


class set_grad_enabled:
    """Context manager / function that sets grad mode (thread-local)."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C.set_grad_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
        return False


class _GradModeContext(contextlib.ContextDecorator):
    mode = True

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(self.mode)
        return self

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
        return False


class no_grad(_GradModeContext):
    mode = False


class enable_grad(_GradModeContext):
    mode = True


def is_grad_enabled():
    return _C.is_grad_enabled()


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    retain = create_graph if retain_graph is None else retain_graph
    _C._autograd_backward(tensors, grads, bool(retain), bool(create_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    outputs = _as_list(outputs)
    inputs_l = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    retain = create_graph if retain_graph is None else retain_graph
    return tuple(_C._autograd_grad(outputs, inputs_l, grads, bool(retain), bool(create_graph), bool(allow_unused)))
