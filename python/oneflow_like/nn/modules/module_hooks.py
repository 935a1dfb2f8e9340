"""Module backward hooks (register_full_backward_hook, register_full_backward_pre_hook and the
deprecated register_backward_hook), torch.nn.Module semantics.

When a module has such hooks, __call__ passes the tensor arguments through an identity autograd
Function before forward and the tensor outputs through another after it. The output identity's
backward sees grad_output (pre hooks may replace it); the input identity's backward sees
grad_input, calls the full hooks with (module, grad_input, grad_output) and passes on what they
return. Both tuples have one entry per positional argument / output, None for non-tensors; a tensor
argument that needs no gradient gets zeros, as in torch.
"""
from collections import OrderedDict

import oneflow_like as flow
from oneflow_like.autograd import Function


# The global backward hooks (torch.nn.modules.module.register_module_full_backward_hook and
# _pre_hook; module.py registers them): every module's call runs them before its own.
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


class _Identity(Function):
    """Returns its tensor arguments; backward runs `state.on_backward(grads)`."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        ctx.set_materialize_grads(False)
        return tensors[0] if len(tensors) == 1 else tuple(tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.state(ctx, grads))


def _pack(positions, values, n):
    out = [None] * n
    for i, v in zip(positions, values):
        out[i] = v
    return tuple(out)


class _BackwardHookCall:
    """The hooks of one module call: wraps inputs and outputs, remembers grad_output."""

    def __init__(self, module, full_hooks, pre_hooks):
        self.module, self.full_hooks, self.pre_hooks = module, full_hooks, pre_hooks
        self.grad_outputs = None
        self.in_positions = None

    def setup_inputs(self, args):
        pos = [i for i, a in enumerate(args) if isinstance(a, flow.Tensor)]
        self.n_inputs = len(args)
        if not (flow.is_grad_enabled() and any(args[i].requires_grad for i in pos)):
            return args
        self.in_positions, self.in_tensors = pos, [args[i] for i in pos]
        new = _Identity.apply(self._input_backward, *self.in_tensors)
        new = new if isinstance(new, tuple) else (new,)
        args = list(args)
        for i, t in zip(pos, new):
            args[i] = t
        return tuple(args)

    def setup_outputs(self, result):
        single = isinstance(result, flow.Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, tuple):
            return result
        pos = [i for i, o in enumerate(outs) if isinstance(o, flow.Tensor)]
        if not (flow.is_grad_enabled() and any(outs[i].requires_grad for i in pos)):
            return result
        self.out_positions, self.n_outputs = pos, len(outs)
        new = _Identity.apply(self._output_backward, *[outs[i] for i in pos])
        new = new if isinstance(new, tuple) else (new,)
        outs = list(outs)
        for i, t in zip(pos, new):
            outs[i] = t
        return outs[0] if single else tuple(outs)

    def _output_backward(self, ctx, grads):
        self.grad_outputs = _pack(self.out_positions, grads, self.n_outputs)
        for hook in self.pre_hooks:
            res = hook(self.module, self.grad_outputs)
            if res is None:
                continue
            res = res if isinstance(res, tuple) else (res,)
            if len(res) != len(self.grad_outputs):
                raise RuntimeError(
                    f"Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(res)}, but expected {len(self.grad_outputs)}"
                )
            self.grad_outputs = res
        local = self.grad_outputs
        if self.in_positions is None:  # no input needs a gradient: the hooks run now
            grad_inputs = (None,) * self.n_inputs
            for hook in self.full_hooks:
                res = hook(self.module, grad_inputs, local)
                if res is not None and not all(r is None for r in res):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return [local[i] for i in self.out_positions]

    def _input_backward(self, ctx, grads):
        # As torch: a tensor argument that needs no gradient gets zeros (it is an output of the
        # identity marked non-differentiable), an unused one that needs it gets None.
        needs = ctx.needs_input_grad[1:]
        grads = [
            g if need else flow.zeros_like(t) for g, need, t in zip(grads, needs, self.in_tensors)
        ]
        if self.grad_outputs is None:
            return grads
        res = _pack(self.in_positions, grads, self.n_inputs)
        for hook in self.full_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            out = out if isinstance(out, tuple) else (out,)
            if len(out) != len(res):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                    f"but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return [res[i] for i in self.in_positions]


class BackwardHooksMixin:
    """The register_*backward* methods of Module and the wrapping its __call__ does."""

    def _backward_tables(self):
        d = self.__dict__
        if "_backward_hooks" not in d:
            d["_backward_hooks"] = OrderedDict()
            d["_backward_pre_hooks"] = OrderedDict()
            d["_is_full_backward_hook"] = None
        return d["_backward_hooks"], d["_backward_pre_hooks"]

    def _has_backward_hooks(self):
        d = self.__dict__
        own = d.get("_backward_hooks") or d.get("_backward_pre_hooks")
        return bool(own or _global_backward_hooks or _global_backward_pre_hooks)

    def _set_hook_kind(self, full):
        self._backward_tables()
        kind = self.__dict__["_is_full_backward_hook"]
        if kind is not None and kind != full and self._backward_hooks:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self.__dict__["_is_full_backward_hook"] = full

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a new grad_input tuple; runs when the
        gradients w.r.t. the module's inputs are computed (grad_input: one entry per positional
        argument, None where no gradient). Returns a removable handle."""
        self._set_hook_kind(True)
        table, _ = self._backward_tables()
        return self._add_hook(table, hook, prepend, False)

    def register_backward_hook(self, hook):
        """Deprecated in torch; here it has the semantics of register_full_backward_hook (the
        gradients of the module's inputs and outputs, not those of its last op)."""
        self._set_hook_kind(False)
        table, _ = self._backward_tables()
        return self._add_hook(table, hook, False, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a new grad_output tuple; runs when the gradients
        w.r.t. the module's outputs are computed, before grad_input. Returns a removable handle."""
        _, table = self._backward_tables()
        return self._add_hook(table, hook, prepend, False)

    def _backward_hook_call(self):
        full, pre = self._backward_tables()
        full = list(_global_backward_hooks.values()) + list(full.values())
        pre = list(_global_backward_pre_hooks.values()) + list(pre.values())
        return _BackwardHookCall(self, full, pre)
