"""flow.special: torch.special's names for the functions our ops compute exactly.

Aliases of table ops (expit = sigmoid, gammaln = lgamma, psi = digamma, erfinv, erf, logit,
xlogy, ...), the special-function table ops computed in double in every kernel (i0/i0e/i1/i1e,
ndtri, log_ndtr, erfcx, the Bessel J/Y/K families, spherical_bessel_j0, airy_ai: flow._C._special, as
torch._C._special) and composites written with them (sinc, entr, ndtr, xlog1py, multigammaln),
so gradients, nn.Graph lowering and devices come with the ops; polygamma (flow.polygamma), zeta
(the Hurwitz zeta) and gammainc/gammaincc (flow.igamma/igammac), also computed in double, and
the orthogonal polynomials (Chebyshev T/U/V/W and shifted, Hermite H/He, Laguerre, Legendre)
by their recurrences in double: every name of torch.special. Under mock_torch a missing name
raises naming both modules.
"""
import math

import oneflow_like as _flow
from oneflow_like import _C
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


def _float(input):
    return input if input.is_floating_point() else input.to(_flow.float32)


def i0(input):
    return _flow.i0(_float(input))


modified_bessel_i0 = i0


def _table(name, doc):
    fn = getattr(_C._special, "special_" + name)

    def op(input):
        return fn(_float(input))

    op.__name__, op.__qualname__, op.__doc__ = name, name, doc
    return op


i0e = _table("i0e", "exp(-|x|) * I0(x), the exponentially scaled modified Bessel function.")
i1 = _table("i1", "I1(x), the modified Bessel function of the first kind of order 1.")
modified_bessel_i1 = i1
i1e = _table("i1e", "exp(-|x|) * I1(x).")
ndtri = _table("ndtri", "The inverse of the standard normal CDF (the quantile function).")
log_ndtr = _table("log_ndtr", "log of the standard normal CDF, accurate in both tails.")
erfcx = _table("erfcx", "The scaled complementary error function exp(x^2) * erfc(x).")
bessel_j0 = _table("bessel_j0", "J0(x), the Bessel function of the first kind of order 0.")
bessel_j1 = _table("bessel_j1", "J1(x), the Bessel function of the first kind of order 1.")
bessel_y0 = _table("bessel_y0", "Y0(x), the Bessel function of the second kind of order 0.")
bessel_y1 = _table("bessel_y1", "Y1(x), the Bessel function of the second kind of order 1.")
modified_bessel_k0 = _table(
    "modified_bessel_k0", "K0(x), the modified Bessel function of the second kind."
)
modified_bessel_k1 = _table(
    "modified_bessel_k1", "K1(x), the modified Bessel function of the second kind."
)
scaled_modified_bessel_k0 = _table("scaled_modified_bessel_k0", "exp(x) * K0(x).")
scaled_modified_bessel_k1 = _table("scaled_modified_bessel_k1", "exp(x) * K1(x).")
spherical_bessel_j0 = _table("spherical_bessel_j0", "sin(x) / x, the spherical Bessel function j0.")
airy_ai = _table("airy_ai", "Ai(x), the Airy function of the first kind.")


def multigammaln(input, p):
    """log of the multivariate gamma function of dimension p:
    p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2); every element must exceed (p - 1) / 2."""
    if not isinstance(p, int) or p < 1:
        raise ValueError(f"[multigammaln] p must be a positive integer, got {p!r}")
    x = _float(input)
    if not x.is_lazy and bool((x <= (p - 1) / 2).any()):
        raise ValueError(
            f"[multigammaln] All elements must be greater than (p-1)/2 = {(p - 1) / 2}"
        )
    js = _flow.arange(p, dtype=x.dtype, device=x.device) * 0.5
    return _flow.lgamma(x.unsqueeze(-1) - js).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def polygamma(n, input):
    """The n-th derivative of digamma (n >= 0); integer tensors compute in float32."""
    return _C._special.polygamma(n, input)


def _pair_args(name, input, other):
    """torch.special's binary functions take a number for either argument."""
    if not isinstance(input, _flow.Tensor) and not isinstance(other, _flow.Tensor):
        raise TypeError(f"[{name}] expected at least one tensor argument")
    if not isinstance(input, _flow.Tensor):
        input = _flow.full_like(other, float(input), dtype=_float_dtype(other))
    if not isinstance(other, _flow.Tensor):
        other = _flow.full_like(input, float(other), dtype=_float_dtype(input))
    return input, other


def _float_dtype(t):
    return t.dtype if t.is_floating_point() else _flow.float32


def zeta(input, other):
    """The Hurwitz zeta function sum_k (k + other)^-input (SciPy's zeta(x, q))."""
    return _C._special.special_zeta(*_pair_args("zeta", input, other))


def gammainc(input, other):
    """The regularized lower incomplete gamma function P(input, other) (torch.igamma)."""
    return _flow.igamma(*_pair_args("gammainc", input, other))


def gammaincc(input, other):
    """The regularized upper incomplete gamma function Q(input, other) (torch.igammac)."""
    return _flow.igammac(*_pair_args("gammaincc", input, other))


def _poly(name, doc):
    fn = getattr(_C._special, "special_" + name)

    def op(input, n):
        return fn(*_pair_args(name, input, n))

    op.__name__, op.__qualname__, op.__doc__ = name, name, doc
    return op


_POLYS = {
    "chebyshev_polynomial_t": "Chebyshev polynomial of the first kind T_n(x).",
    "chebyshev_polynomial_u": "Chebyshev polynomial of the second kind U_n(x).",
    "chebyshev_polynomial_v": "Chebyshev polynomial of the third kind V_n(x).",
    "chebyshev_polynomial_w": "Chebyshev polynomial of the fourth kind W_n(x).",
    "hermite_polynomial_h": "Physicists' Hermite polynomial H_n(x).",
    "hermite_polynomial_he": "Probabilists' Hermite polynomial He_n(x).",
    "laguerre_polynomial_l": "Laguerre polynomial L_n(x).",
    "legendre_polynomial_p": "Legendre polynomial P_n(x).",
    "shifted_chebyshev_polynomial_t": "Shifted Chebyshev polynomial T*_n(x) = T_n(2x - 1).",
    "shifted_chebyshev_polynomial_u": "Shifted Chebyshev polynomial U*_n(x) = U_n(2x - 1).",
    "shifted_chebyshev_polynomial_v": "Shifted Chebyshev polynomial V*_n(x) = V_n(2x - 1).",
    "shifted_chebyshev_polynomial_w": "Shifted Chebyshev polynomial W*_n(x) = W_n(2x - 1).",
}
for _name, _doc in _POLYS.items():
    globals()[_name] = _poly(
        _name, _doc + " Degree n: a tensor or a number (truncated; n < 0 gives 0)."
    )
del _name, _doc


__all__ = [
    "expit", "logit", "gammaln", "digamma", "psi", "erfinv", "erf", "erfc", "exp2", "expm1", "log1p", "round", "logsumexp", "softmax",
    "log_softmax", "xlogy", "sinc", "entr", "ndtr", "xlog1py", "i0", "i0e", "i1", "i1e", "ndtri", "log_ndtr",
    "erfcx", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "airy_ai", "multigammaln", "polygamma", "zeta", "gammainc", "gammaincc",
] + list(_POLYS)  # fmt: skip
