import oneflow_like as flow

from . import constraints
from ._sampling import standard_gamma
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex with parameter `concentration` (last dim = the
    categories). rsample normalises reparameterised Gamma draws, so gradients flow."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        gammas = standard_gamma(concentration)
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(
            min=flow.finfo(gammas.dtype).tiny, max=1 - flow.finfo(gammas.dtype).eps
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            flow.xlogy(self.concentration - 1.0, value).sum(-1)
            + flow.lgamma(self.concentration.sum(-1))
            - flow.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        # all concentrations < 1: PyTorch's choice, one-hot at the argmax of the 0/0 row
        one_hot = flow.nn.functional.one_hot(
            mode.argmax(dim=-1), num_classes=concentrationm1.shape[-1]
        ).to(mode.dtype)
        return flow.where(mask.unsqueeze(-1), one_hot, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (
            flow.lgamma(self.concentration).sum(-1)
            - flow.lgamma(a0)
            - (k - a0) * flow.digamma(a0)
            - ((self.concentration - 1.0) * flow.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - flow.lgamma(x.sum(-1))
