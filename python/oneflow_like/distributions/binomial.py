import oneflow_like as flow

from . import constraints
from ._sampling import binomial
from .distribution import Distribution
from .utils import _BinaryProbsLogits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0 (as PyTorch's)
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryProbsLogits, Distribution):
    """Number of successes in `total_count` independent trials of probability `probs` (or
    sigmoid(`logits`))."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape = self._init_probs_or_logits(probs, logits, total_count)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Binomial, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with flow.no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = flow.lgamma(self.total_count + 1)
        log_factorial_k = flow.lgamma(value + 1)
        log_factorial_nmk = flow.lgamma(self.total_count - value + 1)
        # k log p + (n - k) log(1 - p) in terms of logits, stable for large |logits|
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * flow.log1p(flow.exp(-flow.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max().item())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(flow.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max().item())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`."
            )
        values = flow.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
