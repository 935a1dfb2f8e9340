"""flow.special: torch.special's names for the functions our ops compute exactly.

Aliases of table ops (expit = sigmoid, gammaln = lgamma, psi = digamma, erfinv, erf, logit,
xlogy, ...) and composites written with them (sinc, entr, ndtr, xlog1py), so gradients,
nn.Graph lowering and devices come with the ops. Not here yet: polygamma, multigammaln, i0/i0e/
i1/i1e, ndtri, log_ndtr, zeta and the Bessel/orthogonal-polynomial families; under mock_torch a
missing name raises naming both modules.
"""
import math

import oneflow_like as _flow
from oneflow_like.nn import functional as _F


def expit(input):
    return _flow.sigmoid(input)


def logit(input, eps=None):
    return _flow.logit(input, eps)


def gammaln(input):
    return _flow.lgamma(input)


def digamma(input):
    return _flow.digamma(input)


psi = digamma


def erfinv(input):
    return _flow.erfinv(input)


def erf(input):
    return _flow.erf(input)


def erfc(input):
    return _flow.erfc(input)


def exp2(input):
    return _flow.exp2(input)


def expm1(input):
    return _flow.expm1(input)


def log1p(input):
    return _flow.log1p(input)


def round(input, decimals=0):  # noqa: A001 (torch.special.round)
    return _flow.round(input, decimals=decimals)


def logsumexp(input, dim, keepdim=False):
    return _flow.logsumexp(input, dim, keepdim=keepdim)


def softmax(input, dim, dtype=None):
    return _F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    return _F.log_softmax(input, dim, dtype=dtype)


def xlogy(input, other):
    return _flow.xlogy(input, other)


def _tensors(op, input, other):
    """(input, other) as tensors of one floating dtype (either may be a Python number)."""
    if not isinstance(input, _flow.Tensor) and not isinstance(other, _flow.Tensor):
        raise TypeError(f"[special.{op}] expected a tensor argument, got {type(input).__name__}")
    ref = input if isinstance(input, _flow.Tensor) else other
    dtype = ref.dtype if ref.is_floating_point() else _flow.float32
    conv = [
        t.to(dtype) if isinstance(t, _flow.Tensor) else _flow.tensor(t, dtype=dtype)
        for t in (input, other)
    ]
    return conv[0].to(ref.device), conv[1].to(ref.device)


def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (the 0 is kept out of the division so gradients stay finite)."""
    if not input.is_floating_point():
        input = input.to(_flow.float32)
    pix = input * math.pi
    zero = input == 0
    safe = _flow.where(zero, _flow.ones_like(pix), pix)
    return _flow.where(zero, _flow.ones_like(pix), _flow.sin(safe) / safe)


def entr(input):
    """-x log x for x > 0, 0 at 0, -inf below 0, NaN for NaN."""
    pos = input > 0
    safe = _flow.where(pos, input, _flow.ones_like(input))
    rest = _flow.where(input == 0, _flow.zeros_like(input), _flow.full_like(input, -math.inf))
    out = _flow.where(pos, -input * _flow.log(safe), rest)
    return _flow.where(_flow.isnan(input), input, out)


def ndtr(input):
    """The standard normal CDF, 0.5 * erfc(-x / sqrt(2)) (accurate in both tails)."""
    if not input.is_floating_point():
        input = input.to(_flow.float32)
    return _flow.erfc(input * (-1 / math.sqrt(2))) * 0.5


def xlog1py(input, other):
    """x * log1p(y), 0 where x == 0 unless y is NaN. As in PyTorch, d/dx is log1p(y) at x == 0
    too; only the 0 * inf products are replaced."""
    x, y = _tensors("xlog1py", input, other)
    lg = _flow.log1p(y)
    out = x * lg
    return _flow.where((x == 0) & _flow.isinf(lg), _flow.zeros_like(out), out)


__all__ = [
    "expit", "logit", "gammaln", "digamma", "psi", "erfinv", "erf", "erfc", "exp2", "expm1", "log1p", "round", "logsumexp", "softmax",
    "log_softmax", "xlogy", "sinc", "entr", "ndtr", "xlog1py",
]  # fmt: skip
