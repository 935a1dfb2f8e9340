import oneflow_like as flow

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _as_value, _BinaryProbsLogits, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_BinaryProbsLogits, Distribution):
    """The logit of a RelaxedBernoulli draw (Maddison et al. 2017): (logits + logistic
    noise) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape = self._init_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            LogitRelaxedBernoulli,
            batch_shape,
            _instance,
            ("probs", "logits"),
            temperature=self.temperature,
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    # torch 1.13 leaves LogitRelaxedBernoulli's flag False although rsample is
    # reparameterised (RelaxedBernoulli, built on it, says True); kept equal to torch's
    has_rsample = False

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(flow.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / (
            self.temperature
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return (
            flow.log(_as_value(self.temperature, diff))
            + diff
            - 2 * (flow.nn.functional.softplus(diff))
        )


class _RelaxedParams:
    """temperature, logits and probs of a relaxed distribution, read from its base."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedParams, TransformedDistribution):
    """A continuous relaxation of Bernoulli on (0, 1) with `temperature` (Concrete /
    Gumbel-softmax, binary case); reparameterised."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)
