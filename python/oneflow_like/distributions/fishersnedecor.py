import math

import oneflow_like as flow

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """Fisher-Snedecor (F) distribution with `df1` and `df2` degrees of freedom: a ratio of
    scaled Gamma draws (reparameterised)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            FisherSnedecor,
            batch_shape,
            _instance,
            ("df1", "df2"),
            _gamma1=self._gamma1.expand(batch_shape),
            _gamma2=self._gamma2.expand(batch_shape),
        )

    @property
    def mean(self):
        df2 = self.df2
        return flow.where(df2 <= 2, flow.full_like(df2, math.nan), df2 / (df2 - 2))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return flow.where(self.df1 <= 2, flow.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        v = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return flow.where(df2 <= 4, flow.full_like(v, math.nan), v)

    def rsample(self, sample_shape=()):
        X1 = self._gamma1.rsample(sample_shape)
        X2 = self._gamma2.rsample(sample_shape)
        tiny = flow.finfo(X2.dtype).tiny
        return (X1 / X2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * flow.log(value)
        t3 = (ct1 + ct2) * flow.log1p(ct3 * value)
        return t1 + t2 - t3
