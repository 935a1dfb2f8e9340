import math

import oneflow_like as flow

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] of Kumaraswamy(a, b): b * B(1 + n / a, b)."""
    arg1 = 1 + n / a
    log_value = flow.lgamma(arg1) + flow.lgamma(b) - flow.lgamma(arg1 + b)
    return b * flow.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution on (0, 1): (1 - U^(1/b))^(1/a), a = concentration1,
    b = concentration0."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            flow.full_like(self.concentration0, 0),
            flow.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """((a - 1) / (a b - 1))^(1 / a); NaN where a < 1 or b < 1."""
        a, b = self.concentration1, self.concentration0
        log_mode = (flow.log(a - 1) - flow.log(a * b - 1)) / a
        bad = (a < 1) | (b < 1)
        return flow.where(bad, flow.full_like(log_mode, math.nan), log_mode.exp())

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = flow.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - flow.log(self.concentration1) - flow.log(self.concentration0)
