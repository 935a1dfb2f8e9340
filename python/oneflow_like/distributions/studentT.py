import math

import oneflow_like as flow

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with `df` degrees of freedom, location `loc`, scale `scale`;
    drawn as loc + scale * Z / sqrt(Chi2(df) / df) (reparameterised)."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone()
        return flow.where(self.df <= 1, flow.full_like(m, math.nan), m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.scale.pow(2) * self.df / (self.df - 2)
        m = flow.where(self.df <= 2, flow.full_like(m, math.inf), m)
        return flow.where(self.df <= 1, flow.full_like(m, math.nan), m)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            StudentT,
            batch_shape,
            _instance,
            ("df", "loc", "scale"),
            _chi2=self._chi2.expand(batch_shape),
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * flow.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + flow.lgamma(0.5 * self.df)
            - flow.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * flow.log1p(y**2.0 / self.df) - Z

    def entropy(self):
        lbeta = flow.lgamma(0.5 * self.df) + math.lgamma(0.5) - flow.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5
            * (self.df + 1)
            * (flow.digamma(0.5 * (self.df + 1)) - flow.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
