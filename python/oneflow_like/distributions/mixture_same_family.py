import oneflow_like as flow

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture of components of one family: `mixture_distribution` (a Categorical over K)
    picks a component of `component_distribution`, whose rightmost batch dim is K.

        gmm = MixtureSameFamily(Categorical(weights), Independent(Normal(locs, scales), 1))
    """

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                "MixtureSameFamily: the mixture distribution needs to be an instance of "
                f"distributions.Categorical, got {type(mixture_distribution).__name__}"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "MixtureSameFamily: the component distribution needs to be an instance of "
                f"distributions.Distribution, got {type(component_distribution).__name__}"
            )
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(
            new, batch_shape, new._component_distribution.event_shape, validate_args=False
        )
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: Var(Y) = E[Var(Y|X)] + Var(E[Y|X])
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (
            probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)
        ).sum(-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self.component_distribution.cdf(x)
        mix_prob = self.mixture_distribution.probs
        return (cdf_x * mix_prob).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        x = self._pad(x)
        log_prob_x = self.component_distribution.log_prob(x)  # [S, B, k]
        log_mix_prob = flow.log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return flow.logsumexp(log_prob_x + log_mix_prob, dim=-1)  # [S, B]

    def sample(self, sample_shape=()):
        with flow.no_grad():
            sample_shape = tuple(sample_shape)
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)  # [n, B]
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)  # [n, B, k, E]
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.expand(mix_shape + (1,) + es)
            samples = comp_samples.gather(gather_dim, index)
            return samples.squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """Mixture probabilities [B_m, k] -> [B_m, k, 1 (per event dim)]: they then broadcast
        against the components' [B, k, E] (B_m right-aligned with B)."""
        return x.reshape(tuple(x.shape) + (1,) * self._event_ndims)

    def __repr__(self):
        return (
            f"MixtureSameFamily(\n  {self.mixture_distribution},\n"
            f"  {self.component_distribution})"
        )
