"""torch.autograd.function: Function and its context at torch's module path, plus
once_differentiable (a backward that cannot itself be differentiated) and InplaceFunction."""
import functools

import oneflow_like as flow
from oneflow_like.autograd import Function, FunctionCtx

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "once_differentiable"]

_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """Passes its tensors through; differentiating them raises (the double-backward of a
    once_differentiable backward)."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors[0] if len(tensors) == 1 else tensors

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_TWICE)


def once_differentiable(fn):
    """Decorates a Function's backward: it runs without recording (no graph of the gradient),
    and when the gradient is asked to be differentiable (create_graph=True) its results raise
    if differentiated, as torch's."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with flow.no_grad():
            outputs = fn(ctx, *args)
        if not flow.is_grad_enabled():
            return outputs
        needs = any(isinstance(a, flow.Tensor) and a.requires_grad for a in args)
        if not needs:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        pos = [i for i, o in enumerate(outs) if isinstance(o, flow.Tensor)]
        if not pos:
            return outputs
        marked = _DelayedError.apply(*[outs[i].detach().requires_grad_() for i in pos])
        marked = marked if isinstance(marked, tuple) else (marked,)
        outs = list(outs)
        for i, m in zip(pos, marked):
            outs[i] = m
        return outs[0] if single else tuple(outs)

    return wrapper


class InplaceFunction(Function):
    """torch's base of Functions that may work in place: `inplace` says whether to."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
