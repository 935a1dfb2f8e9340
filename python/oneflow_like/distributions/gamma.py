import oneflow_like as flow

from . import constraints
from ._sampling import standard_gamma
from .exp_family import ExponentialFamily
from .utils import _as_value, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma distribution with shape `concentration` and inverse scale `rate`. rsample is
    reparameterised (implicit gradients of the Marsaglia-Tsang draws)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = flow.finfo(value.dtype).tiny
        return value.clamp(min=tiny)  # the ratio can underflow to 0 for tiny concentrations

    def log_prob(self, value):
        value = _as_value(value, self.rate)
        if self._validate_args:
            self._validate_sample(value)
        return (
            flow.xlogy(self.concentration, self.rate)
            + flow.xlogy(self.concentration - 1, value)
            - self.rate * value
            - flow.lgamma(self.concentration)
        )

    def entropy(self):
        return (
            self.concentration
            - flow.log(self.rate)
            + flow.lgamma(self.concentration)
            + (1.0 - self.concentration) * flow.digamma(self.concentration)
        )

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return flow.lgamma(x + 1) + (x + 1) * flow.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return flow.special.gammainc(self.concentration, self.rate * value)
