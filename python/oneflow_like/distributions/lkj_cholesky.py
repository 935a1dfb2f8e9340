"""LKJCholesky (torch.distributions.LKJCholesky): the lower Cholesky factor L of a D x D
correlation matrix C = L L^T drawn from the LKJ distribution, density proportional to
det(C)^(concentration - 1) (Lewandowski, Kurowicka and Joe, 2009)."""
import math

import oneflow_like as flow

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution over Cholesky factors of `dim` x `dim` correlation matrices with
    concentration eta > 0 (eta = 1: uniform over correlation matrices; larger eta favours
    the identity). Sampled by the onion method: row i (i >= 1) of L is sqrt(y_i) u_i on its
    first i entries, with y_i ~ Beta(i / 2, eta + (dim - 1 - i) / 2) and u_i uniform on the
    unit sphere of R^i, and L_ii = sqrt(1 - y_i). Every off-diagonal correlation then has
    the marginal 2 Beta(eta - 1 + dim/2, eta - 1 + dim/2) - 1."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = tuple(self.concentration.shape)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)
        self._init_beta()

    def _init_beta(self):
        c = self.concentration
        rows = flow.arange(1, self.dim, dtype=c.dtype, device=c.device)
        conc1 = (rows / 2).expand(tuple(self._batch_shape) + (self.dim - 1,))
        conc0 = c.unsqueeze(-1) + (self.dim - 1 - rows) / 2
        self._beta = Beta(conc1, conc0, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        new._init_beta()
        return new

    def sample(self, sample_shape=()):
        with flow.no_grad():
            c = self.concentration
            tiny = flow.finfo(c.dtype).tiny
            shape = self._extended_shape(sample_shape)
            y = self._beta.sample(sample_shape)
            y = flow.nn.functional.pad(y, [1, 0], value=0.0).unsqueeze(-1)
            u = flow.randn(shape, dtype=c.dtype, device=c.device).tril(-1)
            u = u / u.norm(dim=-1, keepdim=True).clamp(min=tiny)
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + flow.diag_embed(diag)

    def log_prob(self, value):
        """log p(L) = sum_{i=1}^{D-1} (D - 1 - i + 2 (eta - 1)) log L_ii - log Z, where
        log Z = sum_{i=1}^{D-1} [(i/2) log pi + lgamma(alpha - i/2) - lgamma(alpha)] and
        alpha = eta + (D - 1)/2 (rows counted from 0; row 0 has L_00 = 1)."""
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        D = self.dim
        rows = flow.arange(1, D, dtype=c.dtype, device=c.device)
        diag = flow.diagonal(value, dim1=-2, dim2=-1)[..., 1:]
        power = 2 * (c.unsqueeze(-1) - 1) + (D - 1 - rows)
        unnormalized = (power * diag.log()).sum(-1)
        alpha = c.unsqueeze(-1) + 0.5 * (D - 1)
        log_z = (
            rows * (0.5 * math.log(math.pi)) + flow.lgamma(alpha - rows / 2) - flow.lgamma(alpha)
        ).sum(-1)
        return unnormalized - log_z
