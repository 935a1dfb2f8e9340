"""torch.nn.utils.weight_norm (the forward-pre-hook style): w = g * v / ||v||, the norm over every
dim but `dim` (dim=None: over the whole tensor). The module gets parameters name_g and name_v and
recomputes `name` before each forward."""
import oneflow_like as flow
from oneflow_like.nn.modules.module import Parameter


def norm_except_dim(v, dim):
    """The 2-norm of v over every dimension but `dim`, shaped to broadcast against v (dim=-1 or
    None: the norm of the whole tensor, 0-d)."""
    if dim is None or dim == -1:
        return (v * v).sum().sqrt()
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    return (v * v).sum(others, keepdim=True).sqrt() if others else v.abs()


def weight_from_g_v(g, v, dim):
    return v * (g / norm_except_dim(v, dim))


class WeightNorm:
    """The forward pre hook of one weight-normed parameter."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_from_g_v(g, v, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        with flow.no_grad():
            g = norm_except_dim(weight, fn.dim).detach().clone()
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes module.<name> as name_g * name_v / ||name_v|| (norm over all dims but
    `dim`); returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_hook_style(module, hook_cls, name, what):
    """Finds the forward pre hook of class hook_cls for `name`, folds it back, unregisters it."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, hook_cls) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Folds g and v back into one Parameter `name`; returns the module."""
    return remove_hook_style(module, WeightNorm, name, "weight_norm")
