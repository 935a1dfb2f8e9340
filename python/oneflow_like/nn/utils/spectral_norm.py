"""torch.nn.utils.spectral_norm (the forward-pre-hook style): w = w_orig / sigma, sigma the
largest singular value of w_orig reshaped to (size(dim), -1), estimated by power iteration on the
buffers name_u and name_v (updated in place in training mode only)."""
import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like.nn.modules.module import Parameter
from oneflow_like.nn.utils.weight_norm import remove_hook_style


def weight_matrix(weight, dim):
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.reshape(weight.shape[0], -1)


def power_iteration(weight_mat, u, v, n_power_iterations, eps, u_first=False):
    """n steps of the power method, writing the new u and v into the given buffers (v from u,
    then u from v; u_first: the other way round, as torch's parametrization does)."""
    with flow.no_grad():
        for _ in range(n_power_iterations):
            if u_first:
                u.copy_(F.normalize(flow.mv(weight_mat, v), dim=0, eps=eps))
            v.copy_(F.normalize(flow.mv(weight_mat.t(), u), dim=0, eps=eps))
            if not u_first:
                u.copy_(F.normalize(flow.mv(weight_mat, v), dim=0, eps=eps))


class SpectralNorm:
    """The forward pre hook of one spectrally normalized parameter."""

    def __init__(self, name, n_power_iterations, dim, eps):
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = weight_matrix(weight, self.dim)
        if do_power_iteration:
            power_iteration(weight_mat, u, v, self.n_power_iterations, self.eps)
            u, v = u.clone(), v.clone()
        sigma = flow.dot(u, flow.mv(weight_mat, v))
        return weight / sigma

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with flow.no_grad():
            weight_mat = weight_matrix(weight, dim)
            h, w = weight_mat.shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            u = F.normalize(flow.randn(h, **kw), dim=0, eps=eps)
            v = F.normalize(flow.randn(w, **kw), dim=0, eps=eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with flow.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        del module._parameters[self.name + "_orig"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))


def default_dim(module):
    """0, or 1 for the transposed convolutions (whose weight is (in, out, ...))."""
    from oneflow_like import nn

    transposed = tuple(
        getattr(nn, n)
        for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
        if hasattr(nn, n)
    )
    return 1 if isinstance(module, transposed) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.<name> by its spectral norm before each forward; returns the module."""
    SpectralNorm.apply(
        module, name, n_power_iterations, default_dim(module) if dim is None else dim, eps
    )
    return module


def remove_spectral_norm(module, name="weight"):
    """Folds the normalization back into one Parameter `name`; returns the module."""
    return remove_hook_style(module, SpectralNorm, name, "spectral_norm")
