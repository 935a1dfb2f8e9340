"""Tests on values that PyTorch has as top-level functions and Tensor methods, composed from
comparison ops: isnan, isinf, isfinite, isclose, allclose, all, any."""
import math

from oneflow_like import _C

Tensor = _C.Tensor


def isnan(input):
    return input != input


def isinf(input):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        return _C.zeros_like(input).to(_C.bool)
    return input.abs() == math.inf


def isfinite(input):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        return _C.ones_like(input).to(_C.bool)
    return (input - input) == 0  # nan for inf and nan, 0 otherwise


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol |other| elementwise (infinities close only to themselves)."""
    if rtol < 0 or atol < 0:
        raise ValueError(f"[isclose] rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    if not isinstance(other, Tensor):
        other = _C.full_like(input, other)
    close = ((input - other).abs() <= atol + rtol * other.abs()) & isfinite(input) & isfinite(other)
    close = close | (input == other)
    if equal_nan:
        close = close | (isnan(input) & isnan(other))
    return close


def all(input, dim=None, keepdim=False):
    """True where every element (along dim) is nonzero."""
    false = (input == 0).to(_C.int64)
    n = false.sum() if dim is None else false.sum(dim, keepdim=keepdim)
    return n == 0


def any(input, dim=None, keepdim=False):
    """True where some element (along dim) is nonzero."""
    true = (input != 0).to(_C.int64)
    n = true.sum() if dim is None else true.sum(dim, keepdim=keepdim)
    return n > 0


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(all(isclose(input, other, rtol, atol, equal_nan)))


for _fn in (isnan, isinf, isfinite, isclose, all, any, allclose):
    if not hasattr(Tensor, _fn.__name__):
        setattr(Tensor, _fn.__name__, _fn)

__all__ = ["all", "allclose", "any", "isclose", "isfinite", "isinf", "isnan"]
