import math

import oneflow_like as flow

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy (Lorentz) distribution with median `loc` and half width `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    def _full(self, value):
        return flow.full(
            tuple(self._extended_shape()), value, dtype=self.loc.dtype, device=self.loc.device
        )

    @property
    def mean(self):
        return self._full(math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(math.inf)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = flow.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * flow.tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return flow.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return flow.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
