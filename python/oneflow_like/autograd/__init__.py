"""flow.autograd: grad mode, backward/grad, and user-defined Functions."""
import contextlib
import functools

from .. import _C


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

    def __new__(cls, *args):
        if args and callable(args[0]):  # used bare as a decorator: @flow.no_grad
            return cls()(args[0])
        return super().__new__(cls)

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


class inference_mode(_GradModeContext):
    """torch.inference_mode(mode=True): a context manager / decorator that, like no_grad,
    records no autograd graph inside (mode=False: leaves grad mode as it is). Tensors made
    inside are ordinary tensors (no separate "inference tensor" kind)."""

    def __init__(self, mode=True):
        self._enabled = bool(mode)

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        if self._enabled:
            _C.set_grad_enabled(False)
        _inference_depth.append(self._enabled)
        return self

    def __exit__(self, *exc):
        _inference_depth.pop()
        _C.set_grad_enabled(self.prev)
        return False


_inference_depth = []


def is_inference_mode_enabled():
    return bool(_inference_depth) and _inference_depth[-1]


def is_grad_enabled():
    return _C.is_grad_enabled()


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


# Callbacks queued during a backward pass (from tensor hooks), run once it returns: how
# DistributedDataParallel finishes its gradient reduction (torch's engine.queue_callback).
_post_backward_callbacks = []


def _queue_callback(fn):
    """Runs `fn()` when the backward pass now running has finished, on the same thread."""
    _post_backward_callbacks.append(fn)


def _run_backward(fn, *args):
    try:
        fn(*args)
    except BaseException:
        _post_backward_callbacks.clear()
        raise
    while _post_backward_callbacks:
        _post_backward_callbacks.pop(0)()


def _backward_inputs(inputs):
    """backward()'s `inputs`: None (every leaf) or a non-empty tensor / sequence of tensors."""
    if inputs is None:
        return []
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("[backward] 'inputs' argument to backward() cannot be empty.")
    return inputs


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph=False,
    grad_variables=None,
    inputs=None,
):
    """torch.autograd.backward: accumulates the gradients of `tensors` into the leaves' .grad;
    with `inputs`, into those tensors' .grad only (leaf or not), running only the part of the
    graph that reaches them (the rest keeps its saved tensors)."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError(
                "[backward] 'grad_tensors' and 'grad_variables' (deprecated) arguments both "
                "passed to backward(). Please only use 'grad_tensors'."
            )
        grad_tensors = grad_variables
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    retain = create_graph if retain_graph is None else retain_graph
    _run_backward(
        _C._autograd_backward,
        tensors,
        grads,
        bool(retain),
        bool(create_graph),
        _backward_inputs(inputs),
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """torch.autograd.grad: the gradients of `outputs` with respect to `inputs`, without touching
    any .grad. Only the nodes on a path from `outputs` to `inputs` run (and, without
    retain_graph, free their saved tensors), so the graph below a non-leaf input stays usable.
    allow_unused (default: materialize_grads) returns None for an input the outputs do not
    depend on, materialize_grads zeros; is_grads_batched takes each grad_output with a leading
    batch dimension and returns the gradients stacked along it."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "[grad] Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_list(outputs)
    inputs_l = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    retain = create_graph if retain_graph is None else retain_graph
    if is_grads_batched:
        result = _batched_grad(outputs, inputs_l, grads, retain, create_graph, allow_unused)
    else:
        result = _C._autograd_grad(
            outputs, inputs_l, grads, bool(retain), bool(create_graph), bool(allow_unused)
        )
    if materialize_grads:
        from .. import zeros_like

        result = [
            zeros_like(x, requires_grad=bool(create_graph)) if g is None else g
            for g, x in zip(result, inputs_l)
        ]
    return tuple(result)


def _batched_grad(outputs, inputs, grads, retain, create_graph, allow_unused):
    """grad(is_grads_batched=True): one vector-Jacobian product per entry of the grad_outputs'
    leading dimension (torch vmaps them; the results are the same), stacked along it."""
    from .. import stack

    if any(g is None for g in grads):
        raise RuntimeError(
            "[grad] is_grads_batched=True needs a grad_output for every output (got None)"
        )
    n = grads[0].shape[0] if grads and grads[0].ndim else 0
    for g in grads:
        if g.ndim == 0 or g.shape[0] != n:
            raise RuntimeError(
                "[grad] is_grads_batched=True: every grad_output needs the same leading batch "
                f"dimension, got shapes {[tuple(x.shape) for x in grads]}"
            )
    per_input = [[] for _ in inputs]
    for b in range(n):
        r = _C._autograd_grad(
            outputs,
            inputs,
            [g[b] for g in grads],
            bool(retain) or b + 1 < n,
            bool(create_graph),
            bool(allow_unused),
        )
        for i, g in enumerate(r):
            per_input[i].append(g)
    return [None if any(g is None for g in gs) else stack(gs) for gs in per_input]


class FunctionCtx:
    """The `ctx` of a user-defined Function: saves tensors and flags between forward and backward."""

    def __init__(self):
        self._to_save = ()
        self._packed = None  # under saved_tensors_hooks: (meta, packed) per saved tensor
        self._fn_name = "Function"
        self.needs_input_grad = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def _pack_saved(self, hooks):
        """Puts the saved tensors through saved_tensors_hooks' pack_hook (when the Function is
        recorded, as torch), keeping their metas to check what unpack_hook returns."""
        pack = hooks[0]
        with no_grad():
            self._packed = [
                (t.shape, t.dtype, pack(t)) if isinstance(t, _C.Tensor) else (None, None, t)
                for t in self._to_save
            ]
        self._unpack = hooks[1]
        self._to_save = ()

    @property
    def saved_tensors(self):
        if self._packed is None:
            return tuple(self._to_save)
        out = []
        with no_grad():
            for i, (shape, dtype, obj) in enumerate(self._packed):
                if shape is None:
                    out.append(obj)
                    continue
                t = self._unpack(obj)
                if not isinstance(t, _C.Tensor):
                    raise TypeError(
                        f"[{self._fn_name}Backward] the unpack_hook of saved_tensors_hooks "
                        f"returned {type(t).__name__} for saved tensor {i}, expected a Tensor"
                    )
                if tuple(t.shape) != tuple(shape) or t.dtype != dtype:
                    raise ValueError(
                        f"[{self._fn_name}Backward] the unpack_hook of saved_tensors_hooks "
                        f"returned {tuple(t.shape)} {t.dtype} for saved tensor {i}, which was "
                        f"{tuple(shape)} {dtype} when it was saved: an unpacked tensor must "
                        "have the saved one's shape and dtype"
                    )
                out.append(t)
        return tuple(out)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors


class Function:
    """User-defined differentiable op, PyTorch style:

    class Square(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x): ctx.save_for_backward(x); return x * x
        @staticmethod
        def backward(ctx, g): (x,) = ctx.saved_tensors; return 2 * x * g
    y = Square.apply(x)
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses must implement forward")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("Function subclasses must implement backward")

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = _C.Tensor
        ctx = FunctionCtx()
        ctx._fn_name = cls.__name__
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensor_inputs = [args[i] for i in positions]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensor_inputs)):
            return out
        # An output that is an input must become a new tensor, or recording would rewrite the input.
        outs = tuple(
            o.detach() if isinstance(o, Tensor) and any(o._same(i) for i in tensor_inputs) else o
            for o in outs
        )
        tensor_outs = [o for o in outs if isinstance(o, Tensor)]
        if ctx._to_save:
            hooks = _C._current_saved_tensors_hooks()
            if hooks is not None:
                ctx._pack_saved(hooks)

        def run_backward(*grads):
            if ctx.materialize_grads:
                grads = tuple(
                    g if g is not None else _C.zeros_like(o) for g, o in zip(grads, tensor_outs)
                )
            res = cls.backward(ctx, *grads)
            res = res if isinstance(res, tuple) else (res,)
            if len(res) < len(args):
                res = res + (None,) * (len(args) - len(res))
            # None: no gradient for that input (the engine passes nothing on along its edge).
            return [res[i] for i in positions]

        _C._record_function(cls.__name__, run_backward, tensor_inputs, tensor_outs)
        return outs[0] if single else outs


from . import functional  # noqa: E402,F401  (flow.autograd.functional)
from .anomaly_mode import (  # noqa: E402,F401  (issue 19)
    Variable,
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
    set_detect_anomaly,
)
from . import graph  # noqa: E402,F401  (torch.autograd.graph)
from . import forward_ad  # noqa: E402,F401  (torch.autograd.forward_ad)
from . import profiler  # noqa: E402,F401  (torch.autograd.profiler, the legacy API)
from . import gradcheck as _gradcheck_module  # noqa: E402
from .gradcheck import GradcheckError, gradgradcheck  # noqa: E402,F401

gradcheck = _gradcheck_module.gradcheck  # the function, as torch.autograd.gradcheck
from . import function, grad_mode, variable  # noqa: E402,F401  (torch's module paths)
