"""torch.autograd.detect_anomaly / set_detect_anomaly and the legacy Variable.

Anomaly mode is a switch of the C++ backward engine: while on, every gradient a node returns is
checked and a NaN fails the backward with "Function 'MulBackward0' returned nan values in its
0th output" (the node's op, as torch names it). The forward traceback torch also prints is
not recorded."""
import contextlib
import warnings

from .. import _C


def is_anomaly_enabled():
    return _C._is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    return _C._is_anomaly_check_nan_enabled()


def set_anomaly_enabled(enabled, check_nan=True):
    _C._set_anomaly_enabled(bool(enabled), bool(check_nan))


class detect_anomaly(contextlib.ContextDecorator):
    """Context manager / decorator: anomaly detection on inside (check_nan=True: backward fails
    at the first node returning a NaN gradient)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging."
        )

    def __enter__(self):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        set_anomaly_enabled(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)
        return False


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): sets anomaly detection now (a function) and
    restores the previous setting when used as a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)
        return False


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor)

    def __call__(cls, data, requires_grad=False, volatile=False):
        """Variable(tensor, requires_grad=False): a leaf sharing the tensor's data."""
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"[Variable] data must be a tensor, got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed (Variable.volatile is always False)")
        out = data.detach()
        return out.requires_grad_(True) if requires_grad else out


class Variable(metaclass=_VariableMeta):
    """torch.autograd.Variable: the legacy wrapper; tensors are Variables (isinstance is True)
    and Variable(x, requires_grad=True) returns a leaf tensor sharing x's data."""
