import oneflow_like as flow

from . import constraints
from .distribution import Distribution
from .utils import _BinaryProbsLogits, broadcast_all

__all__ = ["Geometric"]

_bce = flow.nn.functional.binary_cross_entropy_with_logits


class Geometric(_BinaryProbsLogits, Distribution):
    """Number of failures before the first success in Bernoulli(`probs`) trials."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._init_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # Add an extra check beyond unit_interval: probs must be > 0
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.masked_fill(valid, float("nan"))
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to be positive but found invalid values:\n{invalid_value}"
                )

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return flow.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = flow.finfo(self.probs.dtype).tiny
        with flow.no_grad():
            u = flow.rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs = flow.where((probs == 1) & (value == 0), flow.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return _bce(self.logits, self.probs, reduction="none") / self.probs
