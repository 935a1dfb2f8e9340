"""torch.utils.checkpoint.checkpoint: runs `function` without keeping its intermediate
activations and runs it again in the backward pass to compute its gradients, with the RNG
state it started from (so dropout draws the same mask twice), then backpropagates through the
recomputed graph (the parameters it uses receive their gradients there).

use_reentrant=False (PyTorch's recommended mode): keyword arguments pass through, and gradients
reach the parameters `function` uses even when no input requires grad. use_reentrant=True keeps
the old rules: positional arguments only, and no gradients at all unless an input requires grad
(with PyTorch's warning). Leaving use_reentrant out takes True with PyTorch 2.x's warning."""
import warnings

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like.autograd import Function

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
]


def detach_variable(inputs):
    """torch's helper: a tuple of the inputs detached from their history, each tensor keeping
    its requires_grad (non-tensors pass through)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}"
        )
    return tuple(
        a.detach().requires_grad_(a.requires_grad) if isinstance(a, _C.Tensor) else a
        for a in inputs
    )


def check_backward_validity(inputs):
    """Warns, as torch, when no tensor input requires grad (the checkpointed gradients would
    all be None)."""
    if not any(isinstance(a, _C.Tensor) and a.requires_grad for a in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


def get_device_states(*args):
    """(the CUDA device indices the tensor arguments are on, their RNG states)."""
    devices = sorted(
        {a.device.index for a in args if isinstance(a, _C.Tensor) and a.device.type == "cuda"}
    )
    return devices, [flow.cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states):
    """Restores the RNG states get_device_states returned."""
    for d, state in zip(devices, states):
        flow.cuda.set_rng_state(state, d)


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, _dummy, *args):
        ctx.run_function, ctx.kwargs, ctx.preserve = run_function, kwargs, preserve_rng_state
        if preserve_rng_state:
            ctx.cpu_state = flow.get_rng_state()
            ctx.devices, ctx.cuda_states = get_device_states(*args)
        ctx.inputs = args
        return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        inputs = detach_variable(tuple(ctx.inputs))
        with flow.random.fork_rng(
            devices=ctx.devices if ctx.preserve else [], enabled=ctx.preserve
        ):
            if ctx.preserve:
                flow.set_rng_state(ctx.cpu_state)
                set_device_states(ctx.devices, ctx.cuda_states)
            with flow.enable_grad():
                outputs = ctx.run_function(*inputs, **ctx.kwargs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        outs, out_grads = [], []
        for o, g in zip([o for o in outputs if isinstance(o, _C.Tensor)], grads):
            if o.requires_grad and g is not None:
                outs.append(o)
                out_grads.append(g)
        if not outs:
            raise RuntimeError(
                "[checkpoint] none of the outputs of the checkpointed function requires grad"
            )
        flow.autograd.backward(outs, out_grads)
        return (None, None, None, None) + tuple(
            a.grad if isinstance(a, _C.Tensor) and a.requires_grad else None for a in inputs
        )


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=None,
    determinism_check="default",
    debug=False,
    preserve_rng_state=True,
    **kwargs,
):
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "use_reentrant=False is recommended; this call uses use_reentrant=True.",
            UserWarning,
            stacklevel=2,
        )
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(
            f"determinism_check should be one of ['default', 'none'], but got {determinism_check}"
        )
    if context_fn is not None:
        raise ValueError("[checkpoint] context_fn is not supported")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if flow.is_grad_enabled():
            check_backward_validity(args)
        dummy = None
    else:
        # An input that requires grad, so that the parameters inside `function` get gradients
        # even when none of `args` does.
        dummy = flow.empty(0, requires_grad=True) if flow.is_grad_enabled() else None
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, dummy, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a Sequential (or list of modules) in `segments` checkpointed chunks; the last chunk
    runs normally, as in PyTorch."""
    if isinstance(functions, flow.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)
    size = max(len(functions) // segments, 1)

    def run(start, end):
        def forward(x):
            for f in functions[start : end + 1]:
                x = f(x)
            return x

        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
