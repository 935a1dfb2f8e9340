import oneflow_like as flow

from . import constraints
from ._sampling import poisson
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson distribution with rate `rate`: P(k) = rate^k e^-rate / k!."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, _instance, ("rate",))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with flow.no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return flow.xlogy(value, rate) - rate - flow.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (flow.log(self.rate),)

    def _log_normalizer(self, x):
        return flow.exp(x)
