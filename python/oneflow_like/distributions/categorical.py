import oneflow_like as flow

from . import constraints
from .distribution import Distribution
from .utils import _one_of, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical distribution over {0, ..., K-1}, parameterised by `probs` (non-negative,
    normalised along the last dim) or `logits` (unnormalised log-probabilities)."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(type(self).__name__, probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = tuple(self._param.shape[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            Categorical, batch_shape, _instance, ("probs", "logits"), _num_events=self._num_events
        )
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return flow.full(
            tuple(self._extended_shape()),
            float("nan"),
            dtype=self.probs.dtype,
            device=self.probs.device,
        )

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return flow.full(
            tuple(self._extended_shape()),
            float("nan"),
            dtype=self.probs.dtype,
            device=self.probs.device,
        )

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        with flow.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = flow.multinomial(probs_2d, n, True).t()
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = flow.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape[:-1]) + (1,))
        value = value.expand(shape)
        log_pmf = self.logits.expand(tuple(shape[:-1]) + (self._num_events,))
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        min_real = flow.finfo(self.logits.dtype).min
        logits = self.logits.clamp(min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        num_events = self._num_events
        values = flow.arange(num_events, dtype=flow.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
