"""torch.fft on FFTW3 (kernels/cpu/fft.cc): fft/ifft, fft2/ifft2, fftn/ifftn, rfft/irfft,
rfft2/irfft2, rfftn/irfftn, hfft/ihfft, hfft2/ihfft2, hfftn/ihfftn, fftfreq/rfftfreq,
fftshift/ifftshift, with torch's n / s, dim and norm ("backward", "ortho", "forward"). Real
inputs are promoted (integers to float32); gradients are the adjoint transforms (the runtime's
fft_c2c / fft_r2c / fft_c2r ops). stft / istft are compositions of these."""
import math
import sys

from .. import _C
from .._C import Tensor

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
    "fftshift", "ifftshift",
]  # fmt: skip

_NORMS = ("backward", "ortho", "forward")


def _flow():
    return sys.modules[__name__.rsplit(".", 1)[0]]


def _scale(fn, norm, n, forward):
    """The factor a transform of `n` points multiplies by: torch's norm modes."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise ValueError(f'[{fn}] Invalid normalization mode: "{norm}" (expected one of {_NORMS})')
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == forward:
        return 1.0
    return 1.0 / n


def _float(fn, x):
    """A real input as float32/float64 (integers and bool: float32; half: float32)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"[{fn}] expected a tensor, got {type(x).__name__}")
    if x.dtype.is_complex or x.dtype in (_C.dtype.float32, _C.dtype.float64):
        return x
    return x.to(_C.dtype.float32)


def _as_complex(fn, x):
    x = _float(fn, x)
    if x.dtype.is_complex:
        return x
    return x.to(x.dtype.to_complex())


def _wrap(fn, d, ndim):
    if not -ndim <= d < ndim:
        raise IndexError(f"[{fn}] dim {d} out of range for a tensor of {ndim} dims")
    return d % ndim


def _resize(x, dim, n):
    """x zero-padded or truncated to n along dim (complex x through its real view)."""
    size = x.shape[dim]
    if size == n:
        return x
    if x.dtype.is_complex:
        r = _C._view_as_real(x)
        return _C._view_as_complex(_resize(r, dim, n).contiguous())
    if n < size:
        return x.narrow(dim, 0, n)
    pad = list(x.shape)
    pad[dim] = n - size
    return _flow().cat([x, _flow().zeros(pad, dtype=x.dtype, device=x.device)], dim)


def _dims(fn, x, s, dim, default_all=True):
    """torch's (s, dim) rules: the transformed dims and their signal sizes (None: unchanged)."""
    nd = x.dim()
    if dim is not None and isinstance(dim, int):
        dim = (dim,)
    if s is not None and isinstance(s, int):
        s = (s,)
    if dim is None:
        if s is not None:
            dim = tuple(range(nd - len(s), nd))
        elif default_all:
            dim = tuple(range(nd))
    dims = [_wrap(fn, d, nd) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"[{fn}] dims must be unique, got {tuple(dim)}")
    if s is not None and len(s) != len(dims):
        raise RuntimeError(
            f"[{fn}] When given, dim and shape arguments must have the same length (s={tuple(s)}, dim={tuple(dim)})"
        )
    sizes = [None] * len(dims) if s is None else [None if v == -1 else int(v) for v in s]
    for v in sizes:
        if v is not None and v < 1:
            raise RuntimeError(f"[{fn}] Invalid number of data points ({v}) specified")
    if not dims:
        raise RuntimeError(f"[{fn}] no dimension to transform")
    return dims, sizes


def _c2c(fn, x, s, dim, norm, forward, default_all=True):
    x = _as_complex(fn, x)
    dims, sizes = _dims(fn, x, s, dim, default_all)
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
    n = 1
    for d in dims:
        if x.shape[d] < 1:
            raise RuntimeError(f"[{fn}] Invalid number of data points ({x.shape[d]}) specified")
        n *= x.shape[d]
    return _C._fft_c2c(x, dims, forward, _scale(fn, norm, n, forward))


def _r2c(fn, x, s, dim, norm, forward, default_all=True):
    x = _float(fn, x)
    if x.dtype.is_complex:
        raise RuntimeError(f"[{fn}] expects a real input tensor, but got {x.dtype}")
    dims, sizes = _dims(fn, x, s, dim, default_all)
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
    n = 1
    for d in dims:
        if x.shape[d] < 1:
            raise RuntimeError(f"[{fn}] Invalid number of data points ({x.shape[d]}) specified")
        n *= x.shape[d]
    y = _C._fft_r2c(x, dims, _scale(fn, norm, n, forward))
    return y if forward else _C._conj(y)  # ihfft: the conjugate of the forward half


def _c2r(fn, x, s, dim, norm, forward, default_all=True):
    x = _as_complex(fn, x)
    dims, sizes = _dims(fn, x, s, dim, default_all)
    last = dims[-1]
    out_n = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[last] - 1)
    if out_n < 1:
        raise RuntimeError(f"[{fn}] Invalid number of data points ({out_n}) specified")
    for d, n in zip(dims[:-1], sizes[:-1]):
        if n is not None:
            x = _resize(x, d, n)
    x = _resize(x, last, out_n // 2 + 1)
    n = out_n
    for d in dims[:-1]:
        n *= x.shape[d]
    if forward:  # hfft: the transform of the Hermitian signal x is c2r of conj(x)
        x = _C._conj(x)
    return _C._fft_c2r(x, dims, out_n, _scale(fn, norm, n, forward))


def fft(input, n=None, dim=-1, norm=None):
    return _c2c("fft", input, n, dim, norm, True)


def ifft(input, n=None, dim=-1, norm=None):
    return _c2c("ifft", input, n, dim, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c("fft2", input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c("ifft2", input, s, dim, norm, False)


def fftn(input, s=None, dim=None, norm=None):
    return _c2c("fftn", input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None):
    return _c2c("ifftn", input, s, dim, norm, False)


def rfft(input, n=None, dim=-1, norm=None):
    return _r2c("rfft", input, n, dim, norm, True)


def irfft(input, n=None, dim=-1, norm=None):
    return _c2r("irfft", input, n, dim, norm, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("rfft2", input, s, dim, norm, True)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r("irfft2", input, s, dim, norm, False)


def rfftn(input, s=None, dim=None, norm=None):
    return _r2c("rfftn", input, s, dim, norm, True)


def irfftn(input, s=None, dim=None, norm=None):
    return _c2r("irfftn", input, s, dim, norm, False)


def hfft(input, n=None, dim=-1, norm=None):
    return _c2r("hfft", input, n, dim, norm, True)


def ihfft(input, n=None, dim=-1, norm=None):
    return _r2c("ihfft", input, n, dim, norm, False)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r("hfft2", input, s, dim, norm, True)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("ihfft2", input, s, dim, norm, False)


def hfftn(input, s=None, dim=None, norm=None):
    return _c2r("hfftn", input, s, dim, norm, True)


def ihfftn(input, s=None, dim=None, norm=None):
    return _r2c("ihfftn", input, s, dim, norm, False)


def _freq_values(n, d, onesided):
    if n < 0:
        raise RuntimeError(f"[fftfreq] n must be non-negative, got {n}")
    if onesided:
        return [k / (d * n) for k in range(n // 2 + 1)]
    return [(k if k <= (n - 1) // 2 else k - n) / (d * n) for k in range(n)]


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point fft: [0, 1, ..., -2, -1] / (d n)."""
    t = _flow().tensor(_freq_values(n, d, False), dtype=dtype, device=device)
    return _finish(t, dtype, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    t = _flow().tensor(_freq_values(n, d, True), dtype=dtype, device=device)
    return _finish(t, dtype, requires_grad)


def _finish(t, dtype, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shift(fn, x, dim, sign):
    nd = x.dim()
    if dim is None:
        dims = list(range(nd))
    elif isinstance(dim, int):
        dims = [_wrap(fn, dim, nd)]
    else:
        dims = [_wrap(fn, d, nd) for d in dim]
    if not dims:
        return x
    shifts = [(x.shape[d] // 2) * sign if sign > 0 else -(x.shape[d] // 2) for d in dims]
    if x.dtype.is_complex:  # rolled through the real view
        r = _C._view_as_real(x)
        return _C._view_as_complex(r.roll(shifts, dims).contiguous())
    return x.roll(shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero frequency to the centre: roll by n // 2 along each dim."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of fftshift: roll by -(n // 2)."""
    return _shift("ifftshift", input, dim, -1)


from ._stft import istft, stft  # noqa: E402,F401
