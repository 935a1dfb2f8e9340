import oneflow_like as flow

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _BinaryProbsLogits, broadcast_all

__all__ = ["Bernoulli"]

_bce = flow.nn.functional.binary_cross_entropy_with_logits


def _one_of(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


class Bernoulli(_BinaryProbsLogits, ExponentialFamily):
    """Bernoulli distribution: 1 with probability `probs` (or sigmoid(`logits`)), else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._init_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return flow.where(self.probs == 0.5, flow.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with flow.no_grad():
            return flow.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce(logits, value.to(logits.dtype), reduction="none")

    def entropy(self):
        return _bce(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = flow.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (flow.logit(self.probs),)

    def _log_normalizer(self, x):
        return flow.log1p(flow.exp(x))
