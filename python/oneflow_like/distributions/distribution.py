"""Distribution: the base class of torch.distributions (batch_shape, event_shape, sampling,
log_prob, argument and sample validation)."""
import warnings

import oneflow_like as flow

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _size(shape):
    return flow.Size(tuple(shape))


class Distribution:
    """Base class of probability distributions.

    batch_shape: the shape over which parameters are batched; event_shape: the shape of one
    sample. A sample has shape sample_shape + batch_shape + event_shape; log_prob of it has
    shape sample_shape + batch_shape."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument/sample validation on (True, the default under __debug__) or off."""
        if value not in [True, False]:
            raise ValueError(
                f"Distribution.set_default_validate_args: expected True or False, got {value!r}"
            )
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation."
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with batch dims expanded to `batch_shape` (parameters are
        expanded views, not copies)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """A dict from parameter name to the Constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint of this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample (or a batch of them) of shape sample_shape + batch_shape + event_shape,
        without gradients."""
        with flow.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised sample: gradients flow back to the parameters."""
        raise NotImplementedError(
            f"{self.__class__.__name__} has no reparameterised sampler (has_rsample=False); "
            "use sample()"
        )

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(flow.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement log_prob")

    def cdf(self, value):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement icdf")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement enumerate_support")

    def entropy(self):
        raise NotImplementedError(f"{self.__class__.__name__} does not implement entropy")

    def perplexity(self):
        return flow.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, flow.Size):
            sample_shape = _size(sample_shape)
        return _size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raises ValueError if `value` is not a tensor, does not broadcast against this
        distribution's shape, or lies outside the support."""
        if not isinstance(value, flow.Tensor):
            raise ValueError(
                f"{self.__class__.__name__}: the value argument to log_prob must be a Tensor, "
                f"got {type(value).__name__}"
            )
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"{self.__class__.__name__}: the right-most size of value must match "
                f"event_shape: {tuple(value.shape)} vs {tuple(self._event_shape)}."
            )
        actual_shape = tuple(value.shape)
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"{self.__class__.__name__}: value with shape {actual_shape} is not "
                    f"broadcastable with batch_shape+event_shape: {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation."
            )
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__() method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        """Name(param: value or size, ...), as torch's: a one-element parameter by its value
        (a 0-dim one as a Python number, as torch's format() of a 0-dim tensor gives)."""

        def show(v):
            if v.numel() != 1:
                return str(v.size())
            return str(v.item()) if v.dim() == 0 else str(v)

        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(f"{p}: {show(self.__dict__[p])}" for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"


def _expand_params(self, cls, batch_shape, _instance, names, **attrs):
    """expand() for distributions whose state is the parameters `names` (each of shape
    batch_shape + trailing dims): a new `cls` instance with expanded views of them."""
    new = self._get_checked_instance(cls, _instance)
    batch_shape = _size(batch_shape)
    nb = len(self._batch_shape)
    for name in names:
        if name in self.__dict__:
            v = self.__dict__[name]
            setattr(new, name, v.expand(tuple(batch_shape) + tuple(v.shape[nb:])))
    for k, v in attrs.items():
        setattr(new, k, v)
    Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new


Distribution._expand_params = _expand_params
