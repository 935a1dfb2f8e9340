import oneflow_like as flow

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of `total_count` draws from a Categorical(probs or logits): event shape [K]."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(tuple(batch_shape) + tuple(self.event_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        # category indices of every draw: [total_count, *sample_shape, *batch_shape]
        samples = self._categorical.sample((self.total_count,) + sample_shape)
        order = list(range(1, samples.dim())) + [0]
        samples = samples.permute(*order)  # draws last
        counts = flow.zeros(
            tuple(self._extended_shape(sample_shape)), dtype=flow.int64, device=samples.device
        )
        counts = counts.scatter_add(-1, samples, flow.ones_like(samples))
        return counts.to(self.probs.dtype)

    def entropy(self):
        n = flow.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - flow.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = flow.exp(self._binomial.log_prob(support))
        weights = flow.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = flow.lgamma(value.sum(-1) + 1)
        log_factorial_xs = flow.lgamma(value + 1).sum(-1)
        # 0 * -inf counts as 0 (a category of probability 0 that was not drawn)
        logits = flow.where(
            (value == 0) & (logits == -float("inf")), flow.zeros_like(logits), logits
        )
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
