"""More torch.* top-level functions that ordinary scripts call, built from existing ops (so
gradients, nn.Graph and every device come with them): conversion (as_tensor, asarray, the
deprecated inclusive range), shape helpers (tile, ravel, unflatten, repeat_interleave,
is_same_size), dtype queries (finfo, iinfo, promote_types, result_type, can_cast), window
functions (hann, hamming, blackman, bartlett, kaiser), elementwise helpers (sinc, isposinf,
isneginf, isreal, positive, ldexp), linear algebra spellings (matrix_power, pinverse, svd with
torch.svd's (U, S, V), vdot, chain_matmul, lu, lu_solve, lu_unpack, nuclear_norm, frobenius_norm,
svd_lowrank and pca_lowrank (randomized, Halko et al.)), the nn.functional ops torch also exposes at the top
level (celu, conv_transpose2d, cosine_similarity, pixel_shuffle, ...) and the in-place Tensor
methods torch exposes as functions (clamp_min_, fill_, index_put_, zero_, ...).
"""
import builtins
import math
from collections import namedtuple

import numpy as np

import oneflow_like as flow

_methods = {}


def _method(fn):
    """Registers fn as a Tensor method too (fn(self, ...))."""
    _methods[fn.__name__] = fn
    return fn


# ---- conversion -------------------------------------------------------------------------------


def _as_tensor(data, dtype, device):
    """(the tensor as_tensor returns, whether it shares `data`'s memory)."""
    if isinstance(data, flow.Tensor):
        out = data
        if dtype is not None and out.dtype != dtype:
            out = out.to(dtype)
        if device is not None and out.device != flow.device(device):
            out = out.to(device)
        return out, out is data
    if isinstance(data, np.ndarray) and (device is None or flow.device(device).type == "cpu"):
        out = flow.from_numpy(data)
        if dtype is None or out.dtype == dtype:
            return out, True
        return out.to(dtype), False
    return flow.tensor(data, dtype=dtype, device=device), False


def as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: `data` itself when it is already a tensor of that dtype and device, a view
    of a NumPy array's memory when no conversion is needed (as from_numpy), else a new tensor."""
    return _as_tensor(data, dtype, device)[0]


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """torch.asarray: shares memory with `obj` when it can and `copy` is not True; `copy=False`
    raises when a copy would be needed."""
    out, shared = _as_tensor(obj, dtype, device)
    if copy is False and not shared:
        raise ValueError(
            f"[asarray] copy=False, but {type(obj).__name__} cannot be used without a copy "
            f"(dtype {dtype}, device {device})"
        )
    if copy is True and shared:
        out = out.clone()
    if requires_grad:
        out = out.detach().requires_grad_(True)  # an alias of out that is a leaf
    return out


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """torch.range (deprecated in PyTorch): like arange but `end` is included; float32 default."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("[range] step must be nonzero")
    n = int(math.floor((end - start) / step)) + 1
    out = flow.arange(n, dtype=flow.float64, device=device) * step + start
    out = out.to(dtype if dtype is not None else flow.get_default_dtype())
    return out.requires_grad_(True) if requires_grad else out


# ---- shape helpers ----------------------------------------------------------------------------


@_method
def tile(input, dims):
    """torch.tile: repeat with `dims` padded with leading ones to the input's rank (or the input
    viewed with leading size-1 dims when `dims` is longer)."""
    dims = tuple(dims) if isinstance(dims, (list, tuple, flow.Size)) else (dims,)
    nd = input.dim()
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    elif len(dims) > nd:
        input = input.reshape((1,) * (len(dims) - nd) + tuple(input.shape))
    return input.repeat(*dims)


@_method
def ravel(input):
    """torch.ravel: the elements in row-major order as a 1-d tensor (a view when contiguous)."""
    return input.reshape(-1)


@_method
def unflatten(input, dim, sizes):
    """torch.unflatten: dim `dim` split into `sizes` (one entry may be -1)."""
    nd = input.dim()
    d = dim % builtins.max(nd, 1) if -nd <= dim < builtins.max(nd, 1) else None
    if d is None:
        raise IndexError(f"[unflatten] dim {dim} out of range for a {nd}-d tensor")
    sizes = tuple(sizes)
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    n = input.shape[d]
    if (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
        raise ValueError(
            f"[unflatten] sizes {list(sizes)} do not multiply to the size {n} of dim {dim}"
        )
    return input.reshape(tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1 :]))


@_method
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """torch.repeat_interleave: each element (or slice along `dim`) repeated `repeats` times
    (an int, or a tensor with one count per element/slice); with one tensor argument, the
    indices 0..n-1 repeated by its counts."""
    if repeats is None:  # repeat_interleave(counts)
        counts = input
        return repeat_interleave(
            flow.arange(counts.numel(), device=counts.device), counts, 0, output_size=output_size
        )
    if dim is None:
        input, dim = input.reshape(-1), 0
    nd = input.dim()
    if not -builtins.max(nd, 1) <= dim < builtins.max(nd, 1):
        raise IndexError(f"[repeat_interleave] dim {dim} out of range for a {nd}-d tensor")
    dim %= builtins.max(nd, 1)
    n = input.shape[dim]
    if isinstance(repeats, flow.Tensor):
        counts = repeats.to("cpu").numpy().astype(np.int64).reshape(-1)
        if counts.size == 1:
            counts = np.full(n, int(counts[0]))
    else:
        counts = np.full(n, int(repeats))
    if counts.size != n or (counts < 0).any():
        raise ValueError(
            f"[repeat_interleave] repeats must be non-negative and one per slice ({n}), got "
            f"{counts.tolist()}"
        )
    idx = np.repeat(np.arange(n), counts)
    if output_size is not None and output_size != idx.size:
        raise ValueError(f"[repeat_interleave] output_size {output_size} != {idx.size}")
    return input.index_select(dim, flow.tensor(idx, device=input.device))


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


# ---- dtype queries ----------------------------------------------------------------------------

finfo_t = namedtuple("finfo", "bits eps max min tiny smallest_normal resolution dtype")
iinfo_t = namedtuple("iinfo", "bits max min dtype")

_FLOATS = {
    "float64": (64, 52, 1023),
    "float32": (32, 23, 127),
    "float16": (16, 10, 15),
    "bfloat16": (16, 7, 127),
}
# float8 (mantissa bits, exponent bias, largest finite value): e4m3fn spends its top code on NaN
# (448 = 1.75 * 2^8), the fnuz types shift the bias by one (no -0, no infinities).
_FLOAT8 = {
    "float8_e4m3fn": (3, 7, 448.0),
    "float8_e5m2": (2, 15, 57344.0),
    "float8_e4m3fnuz": (3, 8, 240.0),
    "float8_e5m2fnuz": (2, 16, 57344.0),
}


def _dtype_name(d):
    return str(d).replace("oneflow_like.", "").replace("torch.", "")


def finfo(type=None):
    """torch.finfo: the limits of a floating dtype (bits, eps, max, min, tiny, resolution)."""
    type = flow.get_default_dtype() if type is None else type
    name = _dtype_name(type)
    if name in _FLOAT8:
        mant, bias, mx = _FLOAT8[name]
        tiny = 2.0 ** (1 - bias)
        return finfo_t(8, 2.0**-mant, mx, -mx, tiny, tiny, 1.0, name)
    if name not in _FLOATS:
        raise TypeError(f"[finfo] {name} is not a floating point dtype")
    bits, mant, emax = _FLOATS[name]
    eps = 2.0**-mant
    mx = (2.0 - eps) * 2.0**emax
    tiny = 2.0 ** (1 - emax)
    res = 10.0 ** -math.floor(mant * math.log10(2))
    return finfo_t(bits, eps, mx, -mx, tiny, tiny, res, name)


def iinfo(type):
    """torch.iinfo: the limits of an integer dtype."""
    name = _dtype_name(type)
    try:
        info = np.iinfo(name)
    except (TypeError, ValueError):
        raise TypeError(f"[iinfo] {name} is not an integer dtype") from None
    return iinfo_t(info.bits, int(info.max), int(info.min), name)


def _category(d):
    if d == flow.bool:
        return 0
    return 2 if d.is_floating_point else 1


def _probe(x):
    """A stand-in for x in dtype promotion: an empty 1-d slice of a dimensioned tensor, a 0-d
    tensor or a number as it is (promotion only looks at dtype and dimensioned-ness)."""
    if isinstance(x, flow.Tensor) and x.dim() > 0:
        return x.detach().reshape(-1)[:0]
    return x.detach() if isinstance(x, flow.Tensor) else x


def _is_bool(v):
    return v.dtype == flow.bool if isinstance(v, flow.Tensor) else isinstance(v, bool)


_LIMITED = (
    "uint16",
    "uint32",
    "uint64",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)


def _promoted(x, y):
    if _is_bool(x) and _is_bool(y):  # the runtime's add has no bool result
        return flow.bool

    def limited(v):
        return isinstance(v, flow.Tensor) and _dtype_name(v.dtype) in _LIMITED

    if limited(x) or limited(y):  # these dtypes have no add: torch's table and refusals directly
        if isinstance(x, flow.Tensor) and isinstance(y, flow.Tensor):
            return promote_types(x.dtype, y.dtype)
        t, n = (x, y) if limited(x) else (y, x)
        if isinstance(n, float) and not t.dtype.is_floating_point:
            return flow.get_default_dtype()
        return t.dtype
    return (x + y).dtype


def promote_types(type1, type2):
    """torch.promote_types: the dtype a binary op of these dtypes computes in (the runtime's own
    promotion; float8 with another dtype and uint16/32/64 with a non-floating one raise, as in
    torch 2.x)."""
    return flow._C._promote_types(type1, type2)


def result_type(tensor1, tensor2):
    """torch.result_type of two tensors or numbers (a 0-d tensor or a number does not promote a
    dimensioned tensor within its category), by the runtime's own promotion."""
    a, b = _probe(tensor1), _probe(tensor2)
    if not isinstance(a, flow.Tensor) and not isinstance(b, flow.Tensor):
        a = flow.tensor(a)
    return _promoted(a, b)


def can_cast(from_, to):
    """torch.can_cast: casting within a category (bool < integer < floating) or up is allowed,
    down is not."""
    return _category(from_) <= _category(to)


# ---- sampling ---------------------------------------------------------------------------------


@_method
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """torch.multinomial: category indices drawn from the rows of `input` (non-negative weights,
    not necessarily normalised). With replacement: inverse CDF of uniform draws; without:
    the Gumbel top-k trick (successive sampling proportional to the remaining weights)."""
    if input.dim() not in (1, 2):
        raise ValueError(f"[multinomial] input must be 1-d or 2-d, got {input.dim()}-d")
    w = input if input.dim() == 2 else input.unsqueeze(0)
    if not w.dtype.is_floating_point:
        raise TypeError(f"[multinomial] expects floating point weights, got {w.dtype}")
    rows, n = w.shape
    wn = w.detach().to("cpu").double().numpy()
    if not np.isfinite(wn).all() or (wn < 0).any():
        raise ValueError("[multinomial] weights must be finite and non-negative")
    nonzero = (wn > 0).sum(axis=1)
    if (nonzero == 0).any():
        raise ValueError("[multinomial] a row of weights sums to zero")
    if num_samples <= 0:
        raise ValueError(f"[multinomial] num_samples must be positive, got {num_samples}")
    if not replacement and num_samples > nonzero.min():
        raise ValueError(
            f"[multinomial] cannot draw {num_samples} samples without replacement from a row "
            f"with {int(nonzero.min())} non-zero weights"
        )
    wd = w.detach().double()
    if replacement:
        cdf = flow.cumsum(wd, dim=1)
        u = flow.rand(rows, num_samples, dtype=flow.float64, device=w.device, generator=generator)
        u = u * cdf[:, -1:]
        idx = flow.searchsorted(cdf.contiguous(), u.contiguous(), right=True)
        out = flow.clamp(idx, max=n - 1)
    else:
        u = flow.rand(rows, n, dtype=flow.float64, device=w.device, generator=generator)
        gumbel = -flow.log(-flow.log(u.clamp(min=1e-300)))
        keys = flow.where(
            wd > 0, flow.log(wd.clamp(min=1e-300)) + gumbel, flow.full_like(wd, -np.inf)
        )
        out = flow.topk(keys, num_samples, dim=1).indices
    out = out.to(flow.int64)
    return out if input.dim() == 2 else out.squeeze(0)


# ---- window functions -------------------------------------------------------------------------


def _window(name, n, periodic, dtype, device, fn):
    if n < 0:
        raise ValueError(f"[{name}] window_length must be non-negative, got {n}")
    dtype = dtype if dtype is not None else flow.get_default_dtype()
    if n == 0:
        return flow.zeros(0, dtype=dtype, device=device)
    if n == 1:
        return flow.ones(1, dtype=dtype, device=device)
    m = n if periodic else n - 1  # a periodic window is the symmetric one of n + 1, cut
    k = np.arange(n, dtype=np.float64)
    return flow.tensor(fn(k, m), dtype=dtype, device=device)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    w = _window(
        "hann_window",
        window_length,
        periodic,
        dtype,
        device,
        lambda k, m: 0.5 - 0.5 * np.cos(2 * np.pi * k / m),
    )
    return w.requires_grad_(True) if requires_grad else w


def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    device=None,
    requires_grad=False,
):
    w = _window(
        "hamming_window",
        window_length,
        periodic,
        dtype,
        device,
        lambda k, m: alpha - beta * np.cos(2 * np.pi * k / m),
    )
    return w.requires_grad_(True) if requires_grad else w


def blackman_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    w = _window(
        "blackman_window",
        window_length,
        periodic,
        dtype,
        device,
        lambda k, m: 0.42 - 0.5 * np.cos(2 * np.pi * k / m) + 0.08 * np.cos(4 * np.pi * k / m),
    )
    return w.requires_grad_(True) if requires_grad else w


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    w = _window(
        "bartlett_window",
        window_length,
        periodic,
        dtype,
        device,
        lambda k, m: 1 - np.abs(2 * k / m - 1),
    )
    return w.requires_grad_(True) if requires_grad else w


def kaiser_window(
    window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False
):
    w = _window(
        "kaiser_window",
        window_length,
        periodic,
        dtype,
        device,
        lambda k, m: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / m - 1) ** 2, 0, None)))
        / np.i0(beta),
    )
    return w.requires_grad_(True) if requires_grad else w


# ---- elementwise helpers ----------------------------------------------------------------------


@_method
def sinc(input):
    """torch.sinc: sin(pi x) / (pi x), 1 at 0 (the gradient there is 0, as torch's)."""
    x = input if input.dtype.is_floating_point else input.to(flow.get_default_dtype())
    zero = x == 0
    safe = flow.where(zero, flow.ones_like(x), x) * math.pi
    return flow.where(zero, flow.ones_like(x), flow.sin(safe) / safe)


@_method
def isposinf(input):
    return flow.isinf(input) & (input > 0)


@_method
def isneginf(input):
    return flow.isinf(input) & (input < 0)


@_method
def isreal(input):
    """torch.isreal: every element of a real tensor is real."""
    return flow.ones_like(input, dtype=flow.bool)


@_method
def positive(input):
    return input


@_method
def ldexp(input, other):
    """torch.ldexp: input * 2**other (in input's floating dtype, or the default one)."""
    x = input if input.dtype.is_floating_point else input.to(flow.get_default_dtype())
    e = other if isinstance(other, flow.Tensor) else flow.tensor(other, device=x.device)
    return x * flow.pow(flow.full_like(x, 2.0), e.to(x.dtype))


@_method
def copysign(input, other):
    """torch.copysign: |input| with the sign bit of other (so -0.0 counts as negative); floating
    result (the default dtype for integer inputs)."""
    x = input if input.dtype.is_floating_point else input.to(flow.get_default_dtype())
    o = other if isinstance(other, flow.Tensor) else flow.tensor(float(other), device=x.device)
    return flow.where(flow.signbit(o), -flow.abs(x), flow.abs(x))


def _int_pair(name, a, b):
    if not isinstance(b, flow.Tensor):
        b = flow.tensor(b, device=a.device)
    for t in (a, b):
        if t.dtype.is_floating_point or t.dtype == flow.bool:
            raise TypeError(f"[{name}] expects integer tensors, got {t.dtype}")
    return flow.broadcast_tensors(a, b)


@_method
def gcd(input, other):
    """torch.gcd: the greatest common divisor, elementwise (non-negative; gcd(0, 0) = 0), by
    Euclid's algorithm on the whole tensor (at most ~90 rounds for int64)."""
    a, b = _int_pair("gcd", input, other)
    a, b = flow.abs(a), flow.abs(b)
    while bool((b != 0).any()):
        nz = b != 0
        safe = flow.where(nz, b, flow.ones_like(b))
        a, b = flow.where(nz, b, a), flow.where(nz, a % safe, b)
    return a


@_method
def lcm(input, other):
    """torch.lcm: the least common multiple, elementwise (0 when either is 0)."""
    a, b = _int_pair("lcm", input, other)
    g = gcd(a, b)
    safe = flow.where(g == 0, flow.ones_like(g), g)
    return flow.abs(a // safe * b)


# ---- linear algebra spellings -----------------------------------------------------------------


@_method
def matrix_power(input, n):
    return flow.linalg.matrix_power(input, n)


@_method
def pinverse(input, rcond=1e-15):
    """torch.pinverse: the pseudo-inverse, singular values below rcond * the largest dropped."""
    return flow.linalg.pinv(input, rtol=rcond)


from .return_types import lu_unpack as lu_unpack_t  # noqa: E402
from .return_types import svd as svd_t  # noqa: E402


def svd(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with input = U diag(S) V^T (V, not linalg.svd's Vh); some=False gives
    the full U and V; compute_uv=False gives zero-filled U and V, as torch."""
    u, s, vh = flow.linalg.svd(input, full_matrices=not some)
    v = vh.transpose(-2, -1)
    if not compute_uv:
        u, v = flow.zeros_like(u), flow.zeros_like(v)
    return svd_t(u, s, v)


lu_t = namedtuple("lu", "LU pivots")
lu_infos_t = namedtuple("lu", "LU pivots infos")


@_method
def lu(input, pivot=True, get_infos=False, out=None):
    """torch.lu (deprecated for linalg.lu_factor): (LU, pivots), with the infos when get_infos
    (then a singular matrix does not raise)."""
    if get_infos:
        r = flow.linalg.lu_factor_ex(input, pivot=pivot)
        res = lu_infos_t(r.LU, r.pivots, r.info)
    else:
        r = flow.linalg.lu_factor(input, pivot=pivot)
        res = lu_t(r.LU, r.pivots)
    if out is not None:
        for o, t in zip(out, res):
            o.copy_(t)
        return type(res)(*out)
    return res


@_method
def lu_solve(input, LU_data, LU_pivots, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve(LU_data, LU_pivots, b)."""
    return flow.linalg.lu_solve(LU_data, LU_pivots, input, out=out)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, out=None):
    """torch.lu_unpack: (P, L, U) with A = P L U from lu_factor's output; the parts not unpacked
    are empty tensors."""
    res = flow.linalg._lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    res = lu_unpack_t(*res)
    if out is not None:
        for o, t in zip(out, res):
            o.copy_(t)
        return type(res)(*out)
    return res


def nuclear_norm(input, dim=None, keepdim=False, *, out=None, dtype=None):
    """torch.nuclear_norm: the sum of the singular values over `dim` (2 dims; default the last
    two of a 2-d input)."""
    if isinstance(dim, bool):  # torch.nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.dim() != 2:
            raise RuntimeError(
                f"nuclear_norm: Expected a 2-D tensor when dim is not given, got {input.dim()}-D"
            )
        dim = (-2, -1)
    r = flow.linalg.matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    return flow.linalg._out(r, out)


def frobenius_norm(input, dim=(-2, -1), keepdim=False, *, out=None, dtype=None):
    """torch.frobenius_norm: sqrt of the sum of squares over `dim` (one or two dims)."""
    dim = [dim] if isinstance(dim, int) else list(dim)
    if len(dim) > 2:
        raise RuntimeError(f"frobenius_norm: Expected at most 2 dimensions, got {len(dim)}")
    r = flow.linalg.vector_norm(input, 2, dim, keepdim, dtype=dtype)
    return flow.linalg._out(r, out)


def _approximate_basis(A, q, niter, M):
    """An orthonormal Q [..., m, q] whose range approximates A - M's (Halko et al. 2011, Algorithm
    4.4: a Gaussian sketch and niter subspace iterations, re-orthonormalised by QR)."""
    n = A.shape[-1]
    R = flow.randn(*A.shape[:-2], n, q, dtype=A.dtype, device=A.device)
    X = flow.matmul(A, R) if M is None else flow.matmul(A, R) - flow.matmul(M, R)
    Q = flow.linalg.qr(X).Q
    At = A.transpose(-2, -1)
    Mt = None if M is None else M.transpose(-2, -1)
    for _ in builtins.range(niter):
        X = flow.matmul(At, Q) if M is None else flow.matmul(At, Q) - flow.matmul(Mt, Q)
        Q = flow.linalg.qr(X).Q
        X = flow.matmul(A, Q) if M is None else flow.matmul(A, Q) - flow.matmul(M, Q)
        Q = flow.linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank: (U [..., m, q], S [..., q], V [..., n, q]) approximating the SVD of
    A - M by a randomized range finder and the SVD of the small projection (Halko et al. 2011,
    Algorithm 5.1); exact for matrices of rank <= q up to rounding. Differentiable."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.expand(*A.shape)
    if m < n:  # work on the transpose, whose range is the smaller one
        Mt = None if M is None else M.transpose(-2, -1)
        U, S, V = svd_lowrank(A.transpose(-2, -1), q, niter, Mt)
        return svd_t(V, S, U)
    Q = _approximate_basis(A, q, niter, M)
    B = flow.matmul(Q.transpose(-2, -1), A if M is None else A - M)
    U, S, Vh = flow.linalg.svd(B, full_matrices=False)
    return svd_t(flow.matmul(Q, U), S, Vh.transpose(-2, -1))


def pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank: svd_lowrank of A with its column means subtracted (center=True);
    q defaults to min(6, m, n)."""
    m, n = A.shape[-2], A.shape[-1]
    q = builtins.min(6, m, n) if q is None else q
    if not 0 <= q <= builtins.min(m, n):
        raise ValueError(
            f"pca_lowrank: q(={q}) must be non-negative and <= min(m, n)={builtins.min(m, n)}"
        )
    if not center:
        return svd_lowrank(A, q, niter)
    C = A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A - C, q, niter)


def vdot(input, other):
    """torch.vdot: the dot product of two 1-d tensors, the first conjugated when complex."""
    return flow.dot(input.conj() if input.dtype.is_complex else input, other)


def chain_matmul(*matrices):
    """torch.chain_matmul (deprecated for linalg.multi_dot): the product of 2-d matrices."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise ValueError("[chain_matmul] expects at least one matrix")
    out = matrices[0]
    for m in matrices[1:]:
        out = flow.matmul(out, m)
    return out


def fill(input, value):
    """torch.fill: a new tensor like input filled with value."""
    return flow.full_like(input, value)


# ---- top-level spellings of nn.functional ops and in-place Tensor methods ---------------------

_F_ALIASES = (
    "adaptive_avg_pool1d",
    "alpha_dropout",
    "bilinear",
    "celu",
    "celu_",
    "channel_shuffle",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_similarity",
    "feature_alpha_dropout",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "rrelu",
    "rrelu_",
    "selu_",
    "threshold",
    "threshold_",
)

_INPLACE_METHODS = ("clamp_min_", "clamp_max_", "clip_", "round_", "zero_", "fill_", "index_put_")


def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d: always (values, indices), as the top-level torch op."""
    return flow.nn.functional.adaptive_max_pool1d(input, output_size, return_indices=True)


def _method_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"torch.{name}(input, ...): input.{name}(...)."
    return fn


def _install():
    g = flow.__dict__
    for name, fn in list(globals().items()):
        if name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        if getattr(fn, "__module__", None) != __name__:
            continue
        g.setdefault(name, fn)
    F = flow.nn.functional
    for name in _F_ALIASES:
        g.setdefault(name, getattr(F, name))
    for name in _INPLACE_METHODS + ("detach",):
        g.setdefault(name, _method_function(name))
    for name, fn in _methods.items():
        if not hasattr(flow.Tensor, name):
            setattr(flow.Tensor, name, fn)


_install()


from . import _tensor_methods_compat  # noqa: E402,F401  (scatter_reduce, unfold, eq_, ...)
from . import _tensor_inplace_meta  # noqa: E402,F401  (t_, squeeze_, resize_, set_, .data = ...)
