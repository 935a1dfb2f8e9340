"""ExponentialFamily: distributions with density exp(<t(x), theta> - F(theta) + k(x))."""
import oneflow_like as flow

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give _natural_params (theta), _log_normalizer (F) and _mean_carrier_measure
    (E[k(x)]); entropy then follows from the Bregman divergence of F."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[k(x)], by autograd."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with flow.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = flow.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
