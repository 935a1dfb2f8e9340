import oneflow_like as flow

from . import constraints
from ._sampling import poisson
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryProbsLogits, lazy_property

__all__ = ["NegativeBinomial"]

_logsigmoid = flow.nn.functional.logsigmoid


class NegativeBinomial(_BinaryProbsLogits, Distribution):
    """Number of successes before `total_count` failures in Bernoulli(`probs`) trials; drawn
    as a Gamma-Poisson mixture."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        batch_shape = self._init_probs_or_logits(probs, logits, total_count)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(NegativeBinomial, batch_shape, _instance)

    @property
    def mean(self):
        return self.total_count * flow.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / flow.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(
            concentration=self.total_count, rate=flow.exp(-self.logits), validate_args=False
        )

    def sample(self, sample_shape=()):
        with flow.no_grad():
            rate = self._gamma.sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * _logsigmoid(-self.logits) + value * _logsigmoid(
            self.logits
        )
        log_normalization = (
            -flow.lgamma(self.total_count + value)
            + flow.lgamma(1.0 + value)
            + flow.lgamma(self.total_count)
        )
        # the r + k = 0 case: 0 successes of a zero-failure distribution has probability 1
        log_normalization = flow.where(
            self.total_count + value == 0.0, flow.zeros_like(log_normalization), log_normalization
        )
        return log_unnormalized_prob - log_normalization
