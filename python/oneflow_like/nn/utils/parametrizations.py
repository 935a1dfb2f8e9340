"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations
(nn.utils.parametrize). orthogonal is not provided."""
import oneflow_like as flow
import oneflow_like.nn.functional as F
from oneflow_like.nn.modules.module import Module
from oneflow_like.nn.utils import parametrize
from oneflow_like.nn.utils.spectral_norm import default_dim, power_iteration, weight_matrix
from oneflow_like.nn.utils.weight_norm import norm_except_dim, weight_from_g_v


class _WeightNorm(Module):
    """original0 = g (the norms), original1 = v (the direction); weight = g * v / ||v||."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_from_g_v(weight_g, weight_v, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """module.<name> = g * v / ||v|| (norm over every dim but `dim`; None: the whole tensor),
    with parametrizations.<name>.original0 = g and original1 = v. Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma estimated by power iteration on the buffers _u and _v (15 steps at
    registration, n_power_iterations per forward in training mode)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = weight_matrix(weight, self.dim)
            h, w = mat.shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", F.normalize(flow.randn(h, **kw), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(flow.randn(w, **kw), dim=0, eps=eps))
            power_iteration(mat.detach(), self._u, self._v, 15, eps, u_first=True)

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = weight_matrix(weight, self.dim)
        if self.training:
            power_iteration(
                mat.detach(), self._u, self._v, self.n_power_iterations, self.eps, u_first=True
            )
        u, v = self._u.clone(), self._v.clone()
        sigma = flow.dot(u, flow.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """module.<name> divided by its spectral norm (power iteration state in
    parametrizations.<name>[0]._u / _v). Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, flow.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = default_dim(module) if dim is None else dim
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
