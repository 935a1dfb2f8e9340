import math

import oneflow_like as flow

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv, _tril_solve
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _add_identity(K):
    n = K.shape[-1]
    return K + flow.eye(n, dtype=K.dtype, device=K.device)


def _batch_capacitance_tril(W, D):
    """Cholesky factor of the capacitance matrix C = I + W^T D^-1 W."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return flow.linalg.cholesky(_add_identity(flow.matmul(Wt_Dinv, W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log|W W^T + D| = log|C| + log|D| (matrix determinant lemma)."""
    return 2 * flow.diagonal(capacitance_tril, dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x by the Woodbury identity:
    (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with covariance cov_factor @ cov_factor.T + diag(cov_diag)
    (cov_factor: [..., n, m], m usually << n); log_prob and entropy cost O(n m^2)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m, got "
                f"{tuple(cov_factor.shape)}"
            )
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(
                f"cov_diag must be a batch of vectors with shape {event_shape}, got "
                f"{tuple(cov_diag.shape)}"
            )
        try:
            shape = flow.broadcast_shapes(
                tuple(loc.shape) + (1,), tuple(cov_factor.shape), tuple(cov_diag.shape) + (1,)
            )
        except (RuntimeError, ValueError) as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
            ) from e
        shape = tuple(shape)
        self.loc = loc.expand(shape[:-1])
        self.cov_factor = cov_factor.expand(shape)
        self.cov_diag = cov_diag.expand(shape[:-1])
        batch_shape = shape[:-2]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (
            self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        ).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        # sqrt(D) chol(I + D^-1/2 W W^T D^-1/2): better conditioned than chol(covariance)
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = _add_identity(flow.matmul(Dinvsqrt_W, Dinvsqrt_W.mT))
        scale_tril = cov_diag_sqrt_unsqueeze * flow.linalg.cholesky(K)
        return scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        covariance_matrix = flow.matmul(W, W.mT) + flow.diag_embed(self._unbroadcasted_cov_diag)
        return covariance_matrix.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = _tril_solve(self._capacitance_tril, Wt_Dinv)
        precision_matrix = flow.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - flow.matmul(
            A.mT, A
        )
        return precision_matrix.expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        W_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
            + self._unbroadcasted_cov_diag.sqrt() * eps_D
        )

    def _logdet(self):
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
