import math

import oneflow_like as flow

from . import constraints
from ._sampling import _reject_loop
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(x):
    """log I0(x) for x > 0, from the exponentially scaled Bessel function (exact, where
    PyTorch uses a polynomial approximation good to about 1e-7)."""
    return flow.log(flow.special.i0e(x)) + x


def _log_i1(x):
    return flow.log(flow.special.i1e(x)) + x


class VonMises(Distribution):
    """Circular von Mises distribution on angles: density exp(concentration cos(x - loc)) /
    (2 pi I0(concentration)). Samples lie in [-pi, pi); mean and variance are the circular ones."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        tau = 1 + (1 + 4 * self.concentration**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * self.concentration)
        self._proposal_r = (1 + rho**2) / (2 * rho)
        super().__init__(self.loc.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            VonMises, batch_shape, _instance, ("loc", "concentration", "_proposal_r")
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * flow.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    def sample(self, sample_shape=()):
        """Best & Fisher (1979) rejection sampling, in vectorised rounds."""
        shape = tuple(self._extended_shape(sample_shape))
        with flow.no_grad():
            loc = self.loc.expand(shape)
            conc = self.concentration.expand(shape)
            r = self._proposal_r.expand(shape)

            def propose(done):
                u1 = flow.rand(shape, dtype=loc.dtype, device=loc.device)
                u2 = flow.rand(shape, dtype=loc.dtype, device=loc.device)
                u3 = flow.rand(shape, dtype=loc.dtype, device=loc.device)
                z = flow.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = conc * (r - f)
                u2 = u2.clamp(min=flow.finfo(loc.dtype).tiny)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                return (u3 - 0.5).sign() * f.clamp(min=-1, max=1).acos(), accept

            x = _reject_loop("VonMises sampler", loc, propose)
            return flow.remainder(x + math.pi + loc, 2 * math.pi) - math.pi

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_i1(self.concentration) - _log_i0(self.concentration)).exp()
