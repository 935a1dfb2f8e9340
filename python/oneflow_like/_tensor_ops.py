"""torch.* functions (and the Tensor methods of the same names) composed from existing ops, so
gradients, nn.Graph and every device come with them: products (outer, dot, mv, addmv, baddbmm,
kron, cross, trace), layout helpers (movedim, swapaxes, rot90, hstack/vstack/dstack, atleast_*d,
tensor_split, broadcast_to/broadcast_tensors, meshgrid, block_diag, diag, tril_indices), reductions
and statistics (count_nonzero, var_mean, aminmax, nanmean, median, quantile), elementwise helpers
(logaddexp, hypot, atan2, nan_to_num, heaviside, deg2rad), searching and counting (bucketize,
searchsorted, isin, unique, unique_consecutive, bincount, histc) and integration (trapezoid).

Functions whose result size depends on the data (unique, bincount, argwhere) read it on the host,
as nonzero does.
"""
import builtins
import math

import numpy as np

import oneflow_like as flow

_methods = {}


def _method(fn=None, *, name=None):
    """Registers fn as a Tensor method too (fn(self, ...))."""

    def reg(f):
        _methods[name or f.__name__] = f
        return f

    return reg(fn) if fn is not None else reg


def _dim(d, n):
    nn = builtins.max(n, 1)
    if not -nn <= d < nn:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nn}, {nn - 1}], but got {d})"
        )
    return d % nn


# ---- products -------------------------------------------------------------------------------


@_method
def outer(input, vec2):
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: expected 1-D vectors, got {input.dim()}-D and {vec2.dim()}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = _method(outer, name="ger")


@_method
def dot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors"
        )
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{input.shape[0]} and {other.shape[0]} elements respectively"
        )
    return (input * other).sum()


@_method
def inner(input, other):
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    return flow.tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))


@_method
def mv(input, vec):
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(
            f"mv: expected a matrix and a vector, got {input.dim()}-D and {vec.dim()}-D"
        )
    return flow.matmul(input, vec)


@_method
def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _axpby(input, flow.matmul(mat, vec), beta, alpha)


@_method
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _axpby(input, flow.bmm(batch1, batch2), beta, alpha)


@_method
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _axpby(input, flow.bmm(batch1, batch2).sum(0), beta, alpha)


@_method
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return _axpby(input, outer(vec1, vec2), beta, alpha)


def _axpby(input, prod, beta, alpha):
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:  # input is ignored (NaN/inf in it do not propagate), as PyTorch does
        return out + flow.zeros_like(input)
    return out + (input if beta == 1 else input * beta)


@_method
def kron(input, other):
    a, b = input, other
    n = builtins.max(a.dim(), b.dim())
    a = a.reshape([1] * (n - a.dim()) + list(a.shape))
    b = b.reshape([1] * (n - b.dim()) + list(b.shape))
    inter = []
    for i in range(n):
        inter += [a.shape[i], b.shape[i]]
    ax = a.reshape([s for i in range(n) for s in (a.shape[i], 1)])
    bx = b.reshape([s for i in range(n) for s in (1, b.shape[i])])
    return (ax * bx).reshape([a.shape[i] * b.shape[i] for i in range(n)])


@_method
def cross(input, other, dim=None):
    """The cross product of 3-vectors along dim (default: the first dim of size 3)."""
    a, b = flow.broadcast_tensors(input, other)
    if dim is None:
        dims = [i for i, s in enumerate(a.shape) if s == 3]
        if not dims:
            raise RuntimeError(f"no dimension of size 3 in input of shape {tuple(a.shape)}")
        dim = dims[0]
    dim = _dim(dim, a.dim())
    if a.shape[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[dim]}"
        )
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return flow.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


@_method
def trace(input):
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


@_method
def diag(input, diagonal=0):
    """1-D: a square matrix with input on the diagonal-th diagonal; 2-D: that diagonal."""
    if input.dim() == 2:
        return input.diagonal(diagonal)
    if input.dim() != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return diag_embed(input, diagonal, 0, 1)


@_method
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Places the last dim of input on the offset diagonal of new (dim1, dim2) planes (complex:
    its real and imaginary parts, each placed so)."""
    if input.dtype.is_complex:
        return flow.complex(
            diag_embed(input.real, offset, dim1, dim2), diag_embed(input.imag, offset, dim1, dim2)
        )
    n = input.shape[-1]
    eye = flow.eye(n, dtype=input.dtype, device=input.device)
    out = input.unsqueeze(-1) * eye  # (..., n, n) with input on the main diagonal
    k = builtins.abs(offset)
    if k:  # shift it: pad columns before / rows after (offset > 0), or the reverse
        pads = (k, 0, 0, k) if offset > 0 else (0, k, k, 0)
        out = flow.nn.functional.pad(out, pads)
    nd = out.dim()
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if (d1, d2) != (nd - 2, nd - 1):
        out = movedim(out, (nd - 2, nd - 1), (d1, d2))
    return out


@_method
def diagflat(input, offset=0):
    return diag(input.reshape(-1), offset)


def _triangle_indices(row, col, offset, lower, dtype, device):
    r, c = np.indices((row, col))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return flow.tensor(np.stack([r[keep], c[keep]]), dtype=dtype or flow.int64, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _triangle_indices(row, col, offset, False, dtype, device)


# ---- layout ---------------------------------------------------------------------------------


@_method
def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
            f"same number of dims as destination ({dst} dims)"
        )
    n = input.dim()
    src, dst = [_dim(d, n) for d in src], [_dim(d, n) for d in dst]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return input.permute(order)


moveaxis = _method(movedim, name="moveaxis")


@_method
def swapaxes(input, axis0, axis1):
    return input.transpose(axis0, axis1)


swapdims = _method(swapaxes, name="swapdims")


@_method
def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    return input if input.dim() < 2 else input.transpose(0, 1)


@_method
def adjoint(input):
    return input.transpose(-2, -1)


@_method
def rot90(input, k=1, dims=(0, 1)):
    d0, d1 = dims
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


@_method
def fliplr(input):
    return input.flip(1)


@_method
def flipud(input):
    return input.flip(0)


def atleast_1d(*tensors):
    r = [t.reshape(1) if t.dim() == 0 else t for t in _flat(tensors)]
    return r[0] if len(r) == 1 else tuple(r)


def atleast_2d(*tensors):
    r = [t.reshape(1, -1) if t.dim() < 2 else t for t in _flat(tensors)]
    return r[0] if len(r) == 1 else tuple(r)


def atleast_3d(*tensors):
    def up(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.dim() == 2 else t

    r = [up(t) for t in _flat(tensors)]
    return r[0] if len(r) == 1 else tuple(r)


def _flat(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def hstack(tensors):
    ts = atleast_1d(*tensors)
    ts = [ts] if isinstance(ts, flow.Tensor) else list(ts)
    return flow.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    ts = atleast_2d(*tensors)
    return flow.cat([ts] if isinstance(ts, flow.Tensor) else list(ts), 0)


row_stack = vstack


def dstack(tensors):
    ts = atleast_3d(*tensors)
    return flow.cat([ts] if isinstance(ts, flow.Tensor) else list(ts), 2)


def column_stack(tensors):
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return flow.cat(cols, 1)


@_method
def tensor_split(input, indices_or_sections, dim=0):
    """Splits into n near-equal parts (the first size % n one longer) or at the given indices."""
    d = _dim(dim, input.dim())
    size = input.shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        idx = [
            int(i)
            for i in (
                indices_or_sections.tolist()
                if isinstance(indices_or_sections, flow.Tensor)
                else indices_or_sections
            )
        ]
        bounds = [0] + [builtins.min(builtins.max(i, 0), size) for i in idx] + [size]
    return tuple(
        input.narrow(d, bounds[i], builtins.max(bounds[i + 1] - bounds[i], 0))
        for i in range(len(bounds) - 1)
    )


@_method
def hsplit(input, indices_or_sections):
    return tensor_split(input, indices_or_sections, 1 if input.dim() > 1 else 0)


@_method
def vsplit(input, indices_or_sections):
    return tensor_split(input, indices_or_sections, 0)


@_method
def dsplit(input, indices_or_sections):
    return tensor_split(input, indices_or_sections, 2)


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        s = [s] if isinstance(s, int) else list(s)
        n = builtins.max(len(out), len(s))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(s)) + s
        out = []
        for x, y in zip(a, b):
            if x != y and 1 not in (x, y):
                raise RuntimeError(
                    f"Shape mismatch: objects cannot be broadcast to a single shape: {shapes}"
                )
            out.append(y if x == 1 else x)
    return flow.Size(out)


@_method
def broadcast_to(input, size):
    return input.expand(*size)


def broadcast_tensors(*tensors):
    ts = _flat(tensors)
    shape = broadcast_shapes(*[t.shape for t in ts])
    return tuple(t.expand(*shape) for t in ts)


def meshgrid(*tensors, indexing="ij"):
    ts = _flat(tensors)
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of 'xy' or 'ij', got {indexing}")
    if indexing == "xy" and len(ts) >= 2:
        ts = [ts[1], ts[0]] + ts[2:]
    n = len(ts)
    shape = [t.numel() for t in ts]
    grids = [
        t.reshape([-1 if i == k else 1 for i in range(n)]).expand(*shape) for k, t in enumerate(ts)
    ]
    if indexing == "xy" and n >= 2:  # the first two inputs were swapped: swap their grids back
        grids = [grids[1], grids[0]] + grids[2:]
    return tuple(grids)


def cartesian_prod(*tensors):
    ts = _flat(tensors)
    if len(ts) == 1:
        return ts[0]
    return flow.stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], 1)


def block_diag(*tensors):
    ts = [t.reshape(1, -1) if t.dim() < 2 else t for t in _flat(tensors)]
    rows, cols = builtins.sum(t.shape[0] for t in ts), builtins.sum(t.shape[1] for t in ts)
    blocks, c = [], 0
    for t in ts:
        blocks.append(flow.nn.functional.pad(t, (c, cols - c - t.shape[1])))
        c += t.shape[1]
    return flow.cat(blocks, 0) if blocks else flow.zeros(rows, cols)  # cat promotes dtypes


# ---- reductions and statistics ---------------------------------------------------------------


@_method
def count_nonzero(input, dim=None):
    return (input != 0).sum(dim) if dim is not None else (input != 0).sum()


def _stat_mean(stat):
    def fn(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
        c = correction if unbiased is None else None
        spread = getattr(input, stat)(dim, unbiased=unbiased, keepdim=keepdim, correction=c)
        return spread, input.mean(dim, keepdim=keepdim)

    fn.__name__ = f"{stat}_mean"
    return _method(fn)


var_mean = _stat_mean("var")
std_mean = _stat_mean("std")


from .return_types import aminmax as _aminmax  # noqa: E402


@_method
def aminmax(input, *, dim=None, keepdim=False):
    if dim is None:
        return (
            _aminmax(input.amin(), input.amax())
            if not keepdim
            else _aminmax(
                input.amin(list(range(input.dim())), keepdim=True),
                input.amax(list(range(input.dim())), keepdim=True),
            )
        )
    return _aminmax(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))


@_method
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    ok = ~flow.isnan(x)
    total = flow.nansum(x, dim, keepdim)
    count = ok.sum(dim, keepdim=keepdim) if dim is not None else ok.sum()
    return total / count


from .return_types import median as _median  # noqa: E402


@_method
def median(input, dim=None, keepdim=False):
    """The lower median (PyTorch's): element (n - 1) // 2 of the sorted values; NaN if any."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return flow.tensor(float("nan"), dtype=input.dtype)
        v = flow.sort(flat).values
        return v[(flat.numel() - 1) // 2] if not bool(flow.isnan(flat).any()) else v[-1]
    d = _dim(dim, input.dim())
    n = input.shape[d] if input.dim() else 1
    k = (n - 1) // 2 + 1
    r = flow.kthvalue(input, k, d, keepdim)
    # A line holding NaN has median NaN (at its first NaN) as in PyTorch.
    if input.dtype.is_floating_point and bool(flow.isnan(input).any()):
        nan_line = flow.isnan(input).any(d, keepdim=keepdim)
        first_nan = flow.isnan(input).to(flow.int64).argmax(d, keepdim=keepdim)
        vals = flow.where(nan_line, flow.full_like(r.values, float("nan")), r.values)
        idx = flow.where(nan_line, first_nan, r.indices)
        return _median(vals, idx)
    return _median(r.values, r.indices)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """Positions q (n - 1) of the sorted values along dim, interpolated; n counts the non-NaN
    values per line when ignore_nan (nanquantile), else a line holding NaN gives NaN (quantile).
    A 1-D q adds a leading dim with one entry per q."""
    name = "nanquantile" if ignore_nan else "quantile"
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
            f"Got {interpolation}"
        )
    scalar_q = not isinstance(q, (flow.Tensor, list, tuple)) or (
        isinstance(q, flow.Tensor) and q.dim() == 0
    )
    qs = np.atleast_1d(
        np.asarray(q.tolist() if isinstance(q, flow.Tensor) else q, dtype=np.float64)
    )
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _dim(dim, input.dim())
    if x.shape[d] == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    v = flow.sort(x, d).values  # NaN last
    nan = flow.isnan(x)
    if ignore_nan:
        count = (~nan).sum(d, keepdim=True).to(x.dtype)
    else:
        count = flow.full_like(v.narrow(d, 0, 1), float(x.shape[d]))
    last = (count - 1).clamp(min=0)
    outs = []
    for qq in qs:
        pos = last * qq
        lo, hi = pos.floor(), pos.ceil()
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = pos.round()  # half to even, as PyTorch
        a = v.gather(d, lo.to(flow.int64))
        b = v.gather(d, hi.to(flow.int64))
        frac = (
            0.5 if interpolation == "midpoint" else (pos - lo if interpolation == "linear" else 0.0)
        )
        r = a + (b - a) * frac
        empty = (count == 0) if ignore_nan else nan.any(d, keepdim=True)
        outs.append(flow.where(empty, flow.full_like(r, float("nan")), r))
    r = flow.stack(outs, 0)  # (Q, *x's shape with dim d of size 1)
    if dim is None:
        r = r.reshape([len(outs)] + ([1] * input.dim() if keepdim else []))
    elif not keepdim:
        r = r.squeeze(d + 1)
    return r[0] if scalar_q else r


@_method
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


@_method
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


# ---- elementwise helpers -------------------------------------------------------------------


@_method
def logaddexp(input, other):
    m = flow.maximum(input, other)
    m = flow.where(flow.isinf(m), flow.zeros_like(m), m).detach()
    return m + flow.log(flow.exp(input - m) + flow.exp(other - m))


@_method
def logaddexp2(input, other):
    ln2 = math.log(2.0)
    return logaddexp(input * ln2, other * ln2) / ln2


@_method
def hypot(input, other):
    return flow.sqrt(input * input + other * other)


@_method
def atan2(input, other):
    """The angle of (other, input) in [-pi, pi] (IEEE signs of zero aside)."""
    zero = flow.zeros_like(input * other)
    full = lambda v: flow.full_like(zero, v)  # noqa: E731
    safe = flow.where(other == 0, full(1.0), other + zero)
    base = flow.atan(input / safe)
    adj = flow.where(other < 0, flow.where(input < 0, full(-math.pi), full(math.pi)), zero)
    on_axis = flow.where(
        input > 0, full(math.pi / 2), flow.where(input < 0, full(-math.pi / 2), zero)
    )
    return flow.where(other == 0, on_axis, base + adj)


arctan2 = _method(atan2, name="arctan2")


@_method
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not input.dtype.is_floating_point:
        return input.clone()
    info = np.finfo(
        {flow.float32: np.float32, flow.float64: np.float64}.get(input.dtype, np.float32)
    )
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    x = flow.where(flow.isnan(input), nan, input)
    x = flow.where(x == float("inf"), posinf, x)
    return flow.where(x == float("-inf"), neginf, x)


@_method
def heaviside(input, values):
    return flow.where(
        input == 0,
        values.to(input.dtype).expand_as(input) if isinstance(values, flow.Tensor) else values,
        (input > 0).to(input.dtype),
    )


@_method
def deg2rad(input):
    return input * (math.pi / 180.0)


@_method
def rad2deg(input):
    return input * (180.0 / math.pi)


@_method
def sgn(input):
    """input / |input| for complex tensors (0 at 0), the sign for real ones."""
    if input.dtype.is_complex:
        return flow._C._complex_unary("sgn", input)
    return flow.sign(input)


@_method
def signbit(input):
    """True where the sign bit is set (also for -0.0 and negative NaN payloads)."""
    if not input.dtype.is_floating_point:
        return input < 0
    return (input < 0) | ((input == 0) & (1.0 / input < 0))


@_method
def float_power(input, exponent):
    e = exponent.to(flow.float64) if isinstance(exponent, flow.Tensor) else exponent
    return flow.pow(input.to(flow.float64), e)


@_method
def true_divide(input, other):
    return flow.div(input, other)


@_method
def rsub(input, other, alpha=1):
    return other - input * alpha


# ---- searching and counting ----------------------------------------------------------------


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of the bucket of each value: boundaries[i-1] < x <= boundaries[i] (right=False)."""
    if boundaries.dim() != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})"
        )
    x = input if isinstance(input, flow.Tensor) else flow.tensor(input)
    cmp = (x.unsqueeze(-1) >= boundaries) if right else (x.unsqueeze(-1) > boundaries)
    r = cmp.sum(-1)
    return r.to(flow.int32) if out_int32 else r


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Insertion points of input into the last dim of sorted_sequence (left unless right/side)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("side and right can't be set to opposites")
        right = side == "right"
    seq = sorted_sequence if sorter is None else flow.gather(sorted_sequence, -1, sorter)
    x = input if isinstance(input, flow.Tensor) else flow.tensor(input, dtype=seq.dtype)
    scalar = x.dim() == 0
    if seq.dim() == 1:
        r = bucketize(x.reshape(-1) if scalar else x, seq, right=right)
    else:
        if tuple(seq.shape[:-1]) != tuple(x.shape[:-1]):
            raise RuntimeError(
                f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                f"dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {list(seq.shape)} and input value tensor {list(x.shape)}"
            )
        cmp = (
            (x.unsqueeze(-1) >= seq.unsqueeze(-2))
            if right
            else (x.unsqueeze(-1) > seq.unsqueeze(-2))
        )
        r = cmp.sum(-1)
    r = r.reshape(()) if scalar else r
    return r.to(flow.int32) if out_int32 else r


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    e = elements if isinstance(elements, flow.Tensor) else flow.tensor(elements)
    t = test_elements if isinstance(test_elements, flow.Tensor) else flow.tensor(test_elements)
    r = (e.unsqueeze(-1) == t.reshape(-1)).any(-1)
    return ~r if invert else r


def _unique_sorted(flat, return_inverse, return_counts, consecutive):
    if consecutive:
        v, perm = flat, None
    else:
        v, perm = flow.sort(flat, stable=True)
    n = v.numel()
    if n == 0:
        empty = flow.zeros(0, dtype=flow.int64, device=flat.device)
        return v, empty, empty
    new = flow.cat([flow.ones(1, dtype=flow.bool, device=v.device), v[1:] != v[:-1]])
    group = flow.cumsum(new, 0) - 1  # group id of each sorted element
    starts = flow.nonzero(new).reshape(-1)
    values = v.index_select(0, starts)
    inverse = counts = None
    if return_inverse:
        inverse = group if perm is None else flow.zeros_like(group).scatter(0, perm, group)
    if return_counts:
        ends = flow.cat([starts[1:], flow.tensor([n], dtype=flow.int64, device=v.device)])
        counts = ends - starts
    return values, inverse, counts


def _unique_impl(input, return_inverse, return_counts, dim, consecutive):
    if dim is None:
        values, inverse, counts = _unique_sorted(
            input.reshape(-1), return_inverse, return_counts, consecutive
        )
        if inverse is not None:
            inverse = inverse.reshape(input.shape)
    else:
        # Unique slices along dim: each slice is one row of keys; order rows lexicographically with
        # stable sorts from the last key to the first, then compare neighbours.
        d = _dim(dim, input.dim())
        rows = input.movedim(d, 0).reshape(input.shape[d], -1)
        n = rows.shape[0]
        if consecutive:
            perm = flow.arange(n, device=input.device)
        else:
            perm = flow.arange(n, device=input.device)
            for c in reversed(range(rows.shape[1])):
                key = rows[:, c].index_select(0, perm)
                perm = perm.index_select(0, flow.sort(key, stable=True).indices)
        srt = rows.index_select(0, perm)
        new = flow.ones(n, dtype=flow.bool, device=input.device)
        if n > 1:
            new = flow.cat([new[:1], (srt[1:] != srt[:-1]).any(1)])
        group = flow.cumsum(new, 0) - 1
        starts = flow.nonzero(new).reshape(-1)
        picked = srt.index_select(0, starts)
        shape = [picked.shape[0]] + [s for i, s in enumerate(input.shape) if i != d]
        values = picked.reshape(shape).movedim(0, d)
        inverse = flow.zeros_like(group).scatter(0, perm, group) if return_inverse else None
        counts = None
        if return_counts:
            ends = flow.cat([starts[1:], flow.tensor([n], dtype=flow.int64, device=input.device)])
            counts = ends - starts
    out = (values,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return out[0] if len(out) == 1 else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Sorted unique values (or slices along dim), with the inverse map and counts on request.
    NaNs are each unique, as in PyTorch."""
    return _unique_impl(input, return_inverse, return_counts, dim, consecutive=False)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    return _unique_impl(input, return_inverse, return_counts, dim, consecutive=True)


_methods[
    "unique"
] = lambda self, sorted=True, return_inverse=False, return_counts=False, dim=None: unique(
    self, sorted, return_inverse, return_counts, dim
)
_methods["unique_consecutive"] = unique_consecutive


def bincount(input, weights=None, minlength=0):
    if input.dim() != 1 or input.dtype.is_floating_point:
        raise RuntimeError(
            f"bincount only supports 1-d non-negative integral inputs, got {input.dtype} of {input.dim()} dims"
        )
    if input.numel() and int(input.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    size = builtins.max(int(input.max()) + 1 if input.numel() else 0, minlength)
    dtype = weights.dtype if weights is not None else flow.int64
    out = flow.zeros(size, dtype=dtype, device=input.device)
    src = (
        weights
        if weights is not None
        else flow.ones(input.numel(), dtype=flow.int64, device=input.device)
    )
    return out.scatter_add(0, input.to(flow.int64), src)


_methods["bincount"] = bincount


@_method
def histc(input, bins=100, min=0, max=0):
    """Counts of input in `bins` equal bins over [min, max] (the data's range when both are 0);
    values outside are ignored."""
    lo, hi = float(min), float(max)
    if lo == hi:
        if input.numel() == 0:
            lo, hi = 0.0, 0.0
        else:
            lo, hi = float(input.min()), float(input.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"max must be larger than min, got min {lo} and max {hi}")
    x = input.reshape(-1)
    inside = (x >= lo) & (x <= hi)
    idx = ((x - lo) * (bins / (hi - lo))).floor().to(flow.int64).clamp(0, bins - 1)
    idx = flow.where(inside, idx, flow.zeros_like(idx))
    counts = flow.zeros(bins, dtype=input.dtype, device=input.device)
    return counts.scatter_add(0, idx, inside.to(input.dtype))


@_method
def argwhere(input):
    return flow.nonzero(input)


@_method
def take(input, index):
    return input.reshape(-1).index_select(0, index.reshape(-1)).reshape(index.shape)


@_method
def take_along_dim(input, indices, dim=None):
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    shape = list(
        broadcast_shapes(
            *[
                [s if i != dim % input.dim() else 1 for i, s in enumerate(t.shape)]
                for t in (input, indices)
            ]
        )
    )
    sx = [input.shape[i] if i == dim % input.dim() else s for i, s in enumerate(shape)]
    si = [indices.shape[i] if i == dim % input.dim() else s for i, s in enumerate(shape)]
    return input.expand(*sx).gather(dim, indices.expand(*si))


@_method
def index_fill(input, dim, index, value):
    d = _dim(dim, input.dim())
    mask = flow.zeros(input.shape[d], dtype=flow.bool, device=input.device)
    mask = mask.scatter(0, index.reshape(-1), True)
    mask = mask.reshape([-1 if i == d else 1 for i in range(input.dim())])
    return flow.where(mask, value, input)


# ---- integration, grids ----------------------------------------------------------------------


def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _dim(dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    a, b = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None:
        xd = x.diff(dim=d if x.dim() == y.dim() else -1) if x.dim() > 1 else x[1:] - x[:-1]
        if x.dim() == 1:
            xd = xd.reshape([-1 if i == d else 1 for i in range(y.dim())])
        return ((a + b) * xd).sum(d) / 2
    return (a + b).sum(d) * ((1.0 if dx is None else dx) / 2)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _dim(dim, y.dim())
    n = y.shape[d]
    a, b = y.narrow(d, 0, builtins.max(n - 1, 0)), y.narrow(d, 1, builtins.max(n - 1, 0))
    if x is not None:
        xd = x[1:] - x[:-1] if x.dim() == 1 else x.diff(dim=d)
        if x.dim() == 1:
            xd = xd.reshape([-1 if i == d else 1 for i in range(y.dim())])
        return flow.cumsum((a + b) * xd / 2, d)
    return flow.cumsum((a + b) * ((1.0 if dx is None else dx) / 2), d)


@_method
def diff(input, n=1, dim=-1, prepend=None, append=None):
    d = _dim(dim, input.dim())
    x = input
    if prepend is not None or append is not None:
        parts = (
            ([prepend] if prepend is not None else [])
            + [x]
            + ([append] if append is not None else [])
        )
        x = flow.cat(
            [
                p.expand(*[s if i != d else p.shape[d] for i, s in enumerate(x.shape)])
                if p.dim() == x.dim()
                else p
                for p in parts
            ],
            d,
        )
    for _ in range(n):
        L = x.shape[d]
        a, b = x.narrow(d, 1, builtins.max(L - 1, 0)), x.narrow(d, 0, builtins.max(L - 1, 0))
        x = (a != b) if x.dtype == flow.bool else a - b
    return x


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    e = flow.linspace(start, end, steps, dtype=flow.float64, device=device)
    r = flow.pow(flow.full_like(e, float(base)), e).to(dtype or flow.get_default_dtype())
    return r.requires_grad_(requires_grad) if requires_grad else r


def vander(x, N=None, increasing=False):
    n = x.shape[0] if N is None else N
    powers = flow.arange(n, device=x.device)
    if not increasing:
        powers = powers.flip(0)
    xx = x.unsqueeze(1)
    if not x.dtype.is_floating_point:
        xx = xx.to(flow.int64)
    cols = [xx ** int(p) if int(p) else flow.ones_like(xx) for p in powers.tolist()]
    return flow.cat(cols, 1) if cols else flow.zeros(x.shape[0], 0, dtype=xx.dtype)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M)."""
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    diff_ = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (diff_ != 0).sum(-1).to(x1.dtype)
    if math.isinf(p):
        return diff_.abs().amax(-1)
    if p == 2:
        return flow.sqrt((diff_ * diff_).sum(-1))
    return (diff_.abs() ** p).sum(-1) ** (1.0 / p)


@_method
def dist(input, other, p=2):
    return flow.norm(input - other, p)


def clone(input, *, memory_format=None):
    return input.clone()


def _install():
    g = flow.__dict__
    for name, fn in list(globals().items()):
        if (
            name.startswith("_")
            or not callable(fn)
            or name in ("namedtuple",)
            or isinstance(fn, type)
        ):
            continue
        if getattr(fn, "__module__", None) != __name__:
            continue
        g.setdefault(name, fn)
    for alias in ("ger", "moveaxis", "swapdims", "row_stack", "trapz", "arctan2"):
        g.setdefault(alias, globals()[alias])
    for name, fn in _methods.items():
        if not hasattr(flow.Tensor, name):
            setattr(flow.Tensor, name, fn)
    if not hasattr(flow.Tensor, "mT"):
        flow.Tensor.mT = property(lambda self: self.transpose(-2, -1))
        flow.Tensor.mH = flow.Tensor.mT
        flow.Tensor.H = property(lambda self: self.transpose(0, 1))


_install()
