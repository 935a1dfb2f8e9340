"""Wishart distribution (torch.distributions.Wishart): positive-definite p x p matrices
X = sum of df outer products of N(0, Sigma) vectors, for real df > p - 1."""
import math
import numbers
import warnings

import oneflow_like as flow

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril, _tril_solve
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2.0)


def _mvdigamma(a, p):
    """The multivariate digamma function: d/da log Gamma_p(a) = sum_{i<p} digamma(a - i/2)."""
    if not bool((a > (p - 1) / 2).all()):
        raise ValueError(f"Wishart: the multivariate digamma needs a > {(p - 1) / 2}")
    half = flow.arange(p, dtype=a.dtype, device=a.device) / 2
    return flow.digamma(a.unsqueeze(-1) - half).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=flow.finfo(x.dtype).eps)


def _log_det_tril(L):
    """log|det L| of lower-triangular L with a positive diagonal."""
    return flow.diagonal(L, dim1=-2, dim2=-1).log().sum(-1)


class Wishart(ExponentialFamily):
    """Wishart distribution with `df` degrees of freedom (> p - 1) and scale matrix given by
    exactly one of covariance_matrix, precision_matrix (its inverse) or scale_tril (its lower
    Cholesky factor). rsample is reparameterised through the Bartlett decomposition
    X = (L A)(L A)^T, with A lower-triangular, A_ii = sqrt(chi2(df - i)), A_ij ~ N(0, 1)."""

    arg_constraints = {
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
        "df": constraints.greater_than(0),
    }
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = [
            (name, m)
            for name, m in (
                ("covariance_matrix", covariance_matrix),
                ("precision_matrix", precision_matrix),
                ("scale_tril", scale_tril),
            )
            if m is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError(
                f"{name} must be at least two-dimensional, with optional leading batch "
                f"dimensions (Wishart: got shape {tuple(param.shape)})"
            )
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = flow.tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(flow.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        # df's lower bound depends on p: a per-instance copy of the class's table
        self.arg_constraints = dict(type(self).arg_constraints)
        self.arg_constraints["df"] = constraints.greater_than(p - 1)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if bool(self.df.lt(p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim."
            )
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = flow.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._init_chi2()

    def _init_chi2(self):
        # the Bartlett diagonal: A_ii^2 ~ chi2(df - i), i = 0 .. p - 1
        p = self._event_shape[-1]
        steps = flow.arange(p, dtype=self.df.dtype, device=self.df.device)
        df = self.df.expand(self._batch_shape).unsqueeze(-1) - steps
        self._dist_chi2 = Chi2(df, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new.arg_constraints = self.arg_constraints
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        new._init_chi2()
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return flow.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        L_inv = _tril_solve(L, flow.eye(p, dtype=L.dtype, device=L.device))
        return flow.matmul(L_inv.mT, L_inv).expand(self._matrix_shape())

    def _df_matrix(self):
        return self.df.expand(self._batch_shape).unsqueeze(-1).unsqueeze(-1)

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        """(df - p - 1) Sigma; NaN where df <= p + 1 (no interior mode)."""
        factor = self.df.expand(self._batch_shape) - self._event_shape[-1] - 1
        factor = flow.where(factor > 0, factor, flow.full_like(factor, math.nan))
        return factor.unsqueeze(-1).unsqueeze(-1) * self.covariance_matrix

    @property
    def variance(self):
        """Var(X_ij) = df (Sigma_ij^2 + Sigma_ii Sigma_jj)."""
        V = self.covariance_matrix
        diag = flow.diagonal(V, dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        lead = tuple(diag.shape[:-1])
        rows, cols = flow.tril_indices(p, p, offset=-1)
        below = flow.randn(lead + (rows.shape[0],), dtype=L.dtype, device=L.device)
        flat = flow.zeros(lead + (p * p,), dtype=L.dtype, device=L.device)
        flat = flat.scatter(-1, (rows * p + cols).expand(lead + (rows.shape[0],)), below)
        A = flat.reshape(lead + (p, p)) + flow.diag_embed(diag)
        chol = flow.matmul(L, A)
        return flow.matmul(chol, chol.mT)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """A reparameterised draw. Low df can give numerically singular draws; those are
        redrawn up to max_try_correction times (default 10), with a warning if any remain."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = tuple(sample_shape)
        sample = self._bartlett(sample_shape)
        singular = flow.linalg.cholesky_ex(sample.detach()).info.ne(0)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                redraw = self._bartlett(sample_shape)
                sample = flow.where(singular.unsqueeze(-1).unsqueeze(-1), redraw, sample)
                singular = flow.linalg.cholesky_ex(sample.detach()).info.ne(0)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        """(df - p - 1)/2 log|X| - tr(Sigma^-1 X)/2 - df/2 (p log 2 + log|Sigma|)
        - log Gamma_p(df/2)."""
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        L_X = flow.linalg.cholesky(value)
        # tr(Sigma^-1 X) = |L^-1 L_X|_F^2
        M = _tril_solve(L, L_X)
        trace = M.pow(2).sum((-2, -1))
        return (
            -nu * (p * _LOG_2 / 2 + _log_det_tril(L))
            - flow.mvlgamma(nu / 2, p)
            + (nu - p - 1) * _log_det_tril(L_X)
            - trace / 2
        )

    def entropy(self):
        """-E[log p(X)], with E[log|X|] = mvdigamma(df/2, p) + p log 2 + log|Sigma| and
        E[tr(Sigma^-1 X)] = df p."""
        nu = self.df
        p = self._event_shape[-1]
        log_det_sigma = 2 * _log_det_tril(self._unbroadcasted_scale_tril)
        e_log_det = _mvdigamma(nu / 2, p) + p * _LOG_2 + log_det_sigma
        return (
            nu * (p * _LOG_2 + log_det_sigma) / 2
            + flow.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * e_log_det
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        return -0.5 * self.precision_matrix, 0.5 * self.df

    def _log_normalizer(self, x, y):
        """F(eta1, eta2) for eta1 = -Sigma^-1/2, eta2 = df/2:
        eta2 (p log 2 - log|-2 eta1|) + log Gamma_p(eta2)."""
        p = self._event_shape[-1]
        return y * (p * _LOG_2 - flow.linalg.slogdet(-2 * x).logabsdet) + flow.mvlgamma(y, p)
