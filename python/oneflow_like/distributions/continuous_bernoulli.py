import math

import oneflow_like as flow

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _BinaryProbsLogits, broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]

_bce = flow.nn.functional.binary_cross_entropy_with_logits


class ContinuousBernoulli(_BinaryProbsLogits, ExponentialFamily):
    """Continuous Bernoulli on [0, 1] (Loaiza-Ganem & Cunningham 2019): density proportional
    to p^x (1-p)^(1-x). Within `lims` around p = 1/2, where the closed forms divide 0 by 0,
    Taylor expansions are used (as PyTorch's)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        batch_shape = self._init_probs_or_logits(probs, logits)
        if probs is not None:
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError(
                        f"ContinuousBernoulli: the parameter probs has invalid values:\n"
                        f"{self.probs}"
                    )
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(ContinuousBernoulli, batch_shape, _instance, _lims=self._lims)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return flow.where(
            self._outside_unstable_region(), self.probs, flow.full_like(self.probs, self._lims[0])
        )

    def _cont_bern_log_norm(self):
        """log C(p), the log normalising constant."""
        cut_probs = self._cut_probs()
        below = flow.where(cut_probs <= 0.5, cut_probs, flow.zeros_like(cut_probs))
        above = flow.where(cut_probs >= 0.5, cut_probs, flow.ones_like(cut_probs))
        log_norm = flow.log(flow.abs(flow.log1p(-cut_probs) - flow.log(cut_probs))) - flow.where(
            cut_probs <= 0.5, flow.log1p(-2.0 * below), flow.log(2.0 * above - 1.0)
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return flow.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (
            flow.log1p(-cut_probs) - flow.log(cut_probs)
        )
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return flow.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return flow.sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        vars_ = cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2) + 1.0 / (
            flow.log1p(-cut_probs) - flow.log(cut_probs)
        ).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return flow.where(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=()):
        with flow.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = flow.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) / (
            2.0 * cut_probs - 1.0
        )
        unbounded_cdfs = flow.where(self._outside_unstable_region(), cdfs, value)
        return flow.where(
            value <= 0.0,
            flow.zeros_like(value),
            flow.where(value >= 1.0, flow.ones_like(value), unbounded_cdfs),
        )

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return flow.where(
            self._outside_unstable_region(),
            (flow.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - flow.log1p(-cut_probs))
            / (flow.log(cut_probs) - flow.log1p(-cut_probs)),
            value,
        )

    def entropy(self):
        log_probs0 = flow.log1p(-self.probs)
        log_probs1 = flow.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of the normaliser as a function of the natural parameter (the logits)."""
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = flow.where(out_unst_reg, x, flow.full_like(x, self._lims[0] - 0.5))
        log_norm = flow.log(flow.abs(flow.exp(cut_nat_params) - 1.0)) - flow.log(
            flow.abs(cut_nat_params)
        )
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return flow.where(out_unst_reg, log_norm, taylor)
