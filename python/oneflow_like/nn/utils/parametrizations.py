"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as
parametrizations (nn.utils.parametrize)."""
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


# ---- orthogonal -------------------------------------------------------------------------------
_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


def _mT(x):
    return x.transpose(-2, -1)


def _orthonormalize(a):
    """Q of a's QR with R's diagonal made positive (the Q closest to a's column space)."""
    x, tau = flow.geqrf(a)
    q = flow.linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthonormal(q):
    n, k = q.shape[-2], q.shape[-1]
    eps = 10.0 * n * flow.finfo(q.dtype).eps
    eye = flow.eye(k, dtype=q.dtype, device=q.device)
    return bool(flow.allclose(_mT(q) @ q, eye, atol=eps))


class _Orthogonal(Module):
    """Maps an unconstrained matrix X to one with orthonormal columns (rows when wide):
    matrix_exp / cayley of the skew-symmetric part of X's lower triangle, or the product of the
    Householder reflectors stored below X's diagonal. With use_trivialization, the result is
    multiplied by `base`, an orthonormal matrix set by right_inverse (so assigning a weight keeps
    it, and the optimizer moves around it)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        wide = n < k
        if wide:
            X, n, k = _mT(X), k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                pad = flow.zeros(*X.shape[:-2], n, n - k, dtype=X.dtype, device=X.device)
                X = flow.cat([X, pad], dim=-1)
            A = X - _mT(X)  # skew-symmetric
            if self.orthogonal_map == "matrix_exp":
                Q = flow.linalg.matrix_exp(A)
            else:
                eye = flow.eye(n, dtype=X.dtype, device=X.device)
                Q = flow.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = flow.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        return _mT(Q) if wide else Q

    def right_inverse(self, Q):
        with flow.no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor "
                    f"of shape {tuple(Q.shape)}."
                )
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            wide = n < k
            if wide:
                Q, n, k = _mT(Q), k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                A, tau = flow.geqrf(Q)
                # householder_product(A, 2 / (1 + |v|^2)) must give Q back: the diagonal of A
                # carries the sign of R's diagonal (and a zero tau flips it)
                d = A.diagonal(dim1=-2, dim2=-1).sign()
                d = flow.where(tau == 0, -d, d)
                eye = flow.eye(n, k, dtype=A.dtype, device=A.device)
                A = A.tril(diagonal=-1) + eye * d.unsqueeze(-2)
                return _mT(A) if wide else A
            if n == k:
                Q = Q.clone() if _is_orthonormal(Q) else _orthonormalize(Q)
            else:  # complete the columns to an n x n orthonormal basis
                extra = flow.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
                Q = _orthonormalize(flow.cat([Q, extra], dim=-1))
            self.base = Q
            # an X the maps send to -I (matrix_exp of 0 is I; the householder map of this X is
            # -I), so the weight starts as -base's first columns, as in torch
            neg = flow.zeros_like(Q_init)
            neg.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """torch.nn.utils.parametrizations.orthogonal: module.<name> constrained to orthonormal
    columns (or rows), through matrix_exp (default for square), cayley or householder (default
    for non-square)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, flow.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
            f"{orthogonal_map}"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
