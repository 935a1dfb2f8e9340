"""The Tensor methods (and their torch.* functions) that PyTorch scripts touch, composed from
existing ops so gradients and every device come with them:

- in-place forms of existing ops (eq_, fmod_, cumsum_, tril_, index_add_, ...): the out-of-place
  result written back with copy_, which bumps the version counter and records the gradient as
  every in-place op does; they check torch's rules first (the result must have self's shape and
  a dtype castable to self's) and return self;
- scatter-style ops: scatter_reduce (sum/prod/mean/amax/amin, include_self), index_copy,
  index_reduce, masked_scatter, select/slice/diagonal/as_strided_scatter, put, fill_diagonal_;
- views and shapes: unfold (sliding windows, an as_strided view), sum_to_size, split_with_sizes,
  narrow_copy, new_empty_strided;
- numerics: bitwise shifts (and << >>), frexp, nextafter, renorm, cov, corrcoef, histogram,
  mode, matrix_exp, cholesky_solve, cholesky_inverse, triangular_solve;
- random fills from uniform_ draws (exponential_, cauchy_, log_normal_, geometric_,
  bernoulli_) and the CPU Python-callable maps (apply_, map_, map2_);
- queries and casts: equal, is_nonzero, is_signed, is_inference, is_complex, get_device, type,
  byte, char, short, ndimension, is_pinned/pin_memory, the legacy Tensor.new.

Not here: the in-place metadata changes (squeeze_, t_, resize_, set_, the .data setter, ...)
are in _tensor_inplace_meta.py (they rebind the tensor object through the runtime);
share_memory_/is_shared and record_stream need the storage and a CUDA stream API that Python
cannot reach.

Segment reductions (scatter_reduce's prod/amax/amin) sort the targets and combine neighbours in
log2(n) doubling steps (a segmented scan), so they cost O(n log n), not O(n * targets).
"""
import builtins
import math

import oneflow_like as flow
from oneflow_like._torch_functions import _method_function  # (imports this module at its end)

_methods = {}
_functions = {}


def _method(fn=None, *, name=None, top=False):
    """Registers fn as a Tensor method (fn(self, ...)); top=True exports it as flow.<name> too."""

    def reg(f):
        n = name or f.__name__
        _methods[n] = f
        if top:
            _functions[n] = f
        return f

    return reg(fn) if fn is not None else reg


def _dim(op, d, n):
    nn = builtins.max(n, 1)
    if not -nn <= d < nn:
        raise IndexError(
            f"[{op}] Dimension out of range (expected to be in range of [{-nn}, {nn - 1}], "
            f"but got {d})"
        )
    return d % nn


# ---- in-place forms ---------------------------------------------------------------------------


def _write_back(self, op, result):
    """Writes `result` into self as torch's in-place ops do, and returns self."""
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"[{op}] output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if result.dtype != self.dtype and not flow.can_cast(result.dtype, self.dtype):
        raise RuntimeError(
            f"[{op}] result type {result.dtype} can't be cast to the desired output type "
            f"{self.dtype}"
        )
    if self.is_leaf and self.requires_grad and flow.is_grad_enabled() and not self._is_view():
        raise RuntimeError(  # (a view's refusals are copy_'s, as torch's check_inplace)
            f"[{op}] a leaf Variable that requires grad is being used in an in-place operation."
        )
    self.copy_(result)
    return self


def _old(self, *args, **kwargs):
    """self's value to compute an in-place result from: a copy when autograd records the op
    (self or another tensor argument requires grad: the write would otherwise invalidate the
    self the op saved for its gradient), else self. clone() saves nothing for backward (copy.def's
    `save: none`), so the write-back leaves it valid."""
    if not flow.is_grad_enabled():
        return self
    tracked = self.requires_grad or any(
        isinstance(a, flow.Tensor) and a.requires_grad for a in (*args, *kwargs.values())
    )
    return self.clone() if tracked else self


def _inplace_of(base):
    def fn(self, *args, **kwargs):
        old = _old(self, *args, **kwargs)
        return _write_back(self, base + "_", getattr(old, base)(*args, **kwargs))

    fn.__name__ = base + "_"
    fn.__doc__ = f"Tensor.{base}_(...): Tensor.{base}(...) written into self; returns self."
    return fn


_INPLACE_OF = (
    "eq ne lt le gt ge greater greater_equal less less_equal not_equal "
    "logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not "
    "fmod remainder floor_divide true_divide atan2 arctan2 hypot copysign xlogy heaviside "
    "gcd lcm ldexp nan_to_num erf log1p sgn sinc deg2rad rad2deg mvlgamma igamma igammac "
    "cumsum cumprod tril triu renorm index_add index_fill index_copy index_reduce "
    "masked_scatter scatter_reduce put bitwise_left_shift bitwise_right_shift "
    "addmm addmv addr addbmm baddbmm nextafter"
).split()


def float_power_(self, exponent):
    """Tensor.float_power_: float_power in place, which needs self to be float64 (as torch)."""
    if self.dtype != flow.float64:
        raise RuntimeError(
            f"[float_power_] the base given to float_power_ has dtype {self.dtype} but the "
            f"operation's result requires dtype {flow.float64}"
        )
    return _write_back(self, "float_power_", _old(self).float_power(exponent))


_methods["float_power_"] = float_power_


# ---- bitwise shifts ---------------------------------------------------------------------------

_INT_BITS = {flow.uint8: 8, flow.int8: 8, flow.int16: 16, flow.int32: 32, flow.int64: 64}


def _shift_operands(op, input, other):
    if not isinstance(input, flow.Tensor):  # a Python int takes the tensor's dtype, as torch
        input = flow.tensor(input, dtype=other.dtype, device=other.device)
    a = input
    b = (
        other
        if isinstance(other, flow.Tensor)
        else flow.tensor(other, dtype=a.dtype, device=a.device)
    )
    for t in (a, b):
        if t.dtype not in _INT_BITS:
            raise RuntimeError(f"[{op}] expects integer tensors, got {a.dtype} and {b.dtype}")
    a, b = flow.broadcast_tensors(a, b)
    dt = flow.result_type(a, b)
    return a.to(dt), b.to(dt), _INT_BITS[dt]


@_method(top=True)
def bitwise_left_shift(input, other):
    """input << other, elementwise (two's complement wraparound; shifts of the bit width or more
    give 0, as torch)."""
    a, b, bits = _shift_operands("bitwise_left_shift", input, other)
    s = b.clamp(0, bits - 1)
    p = flow.pow(flow.full_like(s, 2), s)  # 2**s; 2**(bits-1) wraps to the sign bit
    r = a * p
    return flow.where((b >= bits) | (b < 0), flow.zeros_like(r), r)


@_method(top=True)
def bitwise_right_shift(input, other):
    """input >> other, elementwise (arithmetic for signed dtypes: rounds toward -inf; shifts of
    the bit width or more give 0 or -1, as torch)."""
    a, b, bits = _shift_operands("bitwise_right_shift", input, other)
    s = b.clamp(0, bits - 2)
    p = flow.pow(flow.full_like(s, 2), s)
    r = a // p
    r = flow.where(b >= bits - 1, r // 2, r)  # 2**(bits-1) does not fit: halve once more
    sign = flow.where(a < 0, flow.full_like(a, -1), flow.zeros_like(a))
    return flow.where((b >= bits) | (b < 0), sign, r)


def _shift_op(fn, reflected):
    def op(self, other):
        if not isinstance(other, (flow.Tensor, int)) or isinstance(other, builtins.bool):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return op


def _shift_iop(fn, name):
    def op(self, other):
        if not isinstance(other, (flow.Tensor, int)) or isinstance(other, builtins.bool):
            return NotImplemented
        return _write_back(self, name, fn(self, other))

    return op


# ---- scatter-style ops ------------------------------------------------------------------------


def _segment_reduce(keys, vals, combine):
    """(segment keys, combined values): vals grouped by equal keys (1-d), combined pairwise with
    `combine` by a segmented scan over the key-sorted order (log2(n) doubling steps)."""
    perm = flow.sort(keys, stable=True).indices
    ks, vs = keys.index_select(0, perm), vals.index_select(0, perm)
    n = ks.numel()
    s = 1
    while s < n:
        same = ks.narrow(0, s, n - s) == ks.narrow(0, 0, n - s)
        head = vs.narrow(0, 0, n - s)
        head = flow.where(same, combine(head, vs.narrow(0, s, n - s)), head)
        vs = flow.cat([head, vs.narrow(0, n - s, s)])
        s *= 2
    if n == 0:
        return ks, vs
    start = flow.cat([flow.ones(1, dtype=flow.bool, device=ks.device), ks[1:] != ks[:-1]])
    sel = flow.nonzero(start).reshape(-1)
    return ks.index_select(0, sel), vs.index_select(0, sel)


def _finite_delta(x):
    """x - x (zero), whose gradient is 1 where x is finite (0 elsewhere, avoiding inf - inf)."""
    x = flow.where(flow.isfinite(x), x, flow.zeros_like(x)) if x.dtype.is_floating_point else x
    return x - x.detach()


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_impl(op, input, dim, index, src, reduce, include_self):
    if reduce not in _REDUCES:
        raise RuntimeError(
            f"[{op}] reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if index.dtype != flow.int64:
        raise RuntimeError(f"[{op}] Expected dtype int64 for index, got {index.dtype}")
    nd = input.dim()
    d = _dim(op, dim, nd)
    if index.dim() != nd or src.dim() != nd:
        raise RuntimeError(
            f"[{op}] Index tensor must have the same number of dimensions as self and src "
            f"tensors: self {list(input.shape)}, index {list(index.shape)}, src {list(src.shape)}"
        )
    for k in range(nd):
        if index.shape[k] > src.shape[k] or (k != d and index.shape[k] > input.shape[k]):
            raise RuntimeError(
                f"[{op}] Expected index {list(index.shape)} to be smaller than self "
                f"{list(input.shape)} apart from dimension {d} and to be smaller size than src "
                f"{list(src.shape)}"
            )
    if index.numel() and not index.is_lazy:  # (a traced graph cannot read its data)
        lo, hi = int(index.min()), int(index.max())
        if lo < 0 or hi >= input.shape[d]:
            bad = lo if lo < 0 else hi
            raise RuntimeError(
                f"[{op}] index {bad} is out of bounds for dimension {d} with size {input.shape[d]}"
            )
    src = src.to(input.dtype)
    for k in range(nd):
        if src.shape[k] != index.shape[k]:
            src = src.narrow(k, 0, index.shape[k])
    # Each index element's target, as a linear index into the (contiguous) output.
    strides = [1] * nd
    for k in range(nd - 2, -1, -1):
        strides[k] = strides[k + 1] * input.shape[k + 1]
    keys = index * strides[d] if nd else index
    for k in range(nd):
        if k != d:
            shape = [-1 if j == k else 1 for j in range(nd)]
            keys = keys + flow.arange(index.shape[k], device=index.device).reshape(shape) * (
                strides[k]
            )
    keys, vals = keys.reshape(-1), src.reshape(-1)
    base = input.reshape(-1)
    n = base.numel()
    touched = flow.zeros(n, dtype=flow.bool, device=input.device).scatter(0, keys, True)
    floating = input.dtype.is_floating_point
    if reduce in ("sum", "mean"):
        start = base if include_self else flow.where(touched, flow.zeros_like(base), base)
        total = start.scatter_add(0, keys, vals)
        if reduce == "sum":
            return total.reshape(input.shape)
        count = flow.zeros(n, dtype=input.dtype, device=input.device).scatter_add(
            0, keys, flow.ones_like(vals)
        )
        if include_self:
            count = count + 1
        count = flow.where(touched, count, flow.ones_like(count))
        mean = total / count if floating else total // count
        return flow.where(touched, mean, base).reshape(input.shape)
    if reduce == "prod":
        seg_keys, seg_vals = _segment_reduce(keys, vals, lambda a, b: a * b)
        repl = base.scatter(0, seg_keys, seg_vals)
        out = flow.where(touched, base * repl, base) if include_self else repl
        return out.reshape(input.shape)
    # amax / amin: the extreme values from detached data; the gradient is shared evenly among
    # the elements equal to the result (self's included), as torch's.
    pick = flow.maximum if reduce == "amax" else flow.minimum
    seg_keys, seg_vals = _segment_reduce(keys, vals.detach(), pick)
    b0 = base.detach()
    repl = b0.scatter(0, seg_keys, seg_vals)
    m = flow.where(touched, pick(b0, repl) if include_self else repl, b0)
    if not floating:
        return m.reshape(input.shape)
    tie_src = vals.detach() == m.index_select(0, keys)
    # As torch (2.x too): self's value counts among the ties even with include_self=False,
    # though it then gets no gradient at the positions written.
    tie_self = touched & (b0 == m)
    count = flow.zeros_like(m).scatter_add(0, keys, tie_src.to(m.dtype)) + tie_self.to(m.dtype)
    if not include_self:
        tie_self = flow.zeros_like(touched)
    zero_v, zero_b = flow.zeros_like(vals), flow.zeros_like(base)
    spread = flow.zeros_like(base).scatter_add(
        0, keys, flow.where(tie_src, _finite_delta(vals), zero_v)
    ) + flow.where(tie_self, _finite_delta(base), zero_b)
    safe = flow.where(count > 0, count, flow.ones_like(count))
    out = flow.where(touched, m + spread / safe, base)
    return out.reshape(input.shape)


@_method(top=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: src's elements reduced ("sum", "prod", "mean", "amax", "amin")
    into input at index along dim (with input's own value unless include_self=False); integer
    means round toward -inf, as torch."""
    return _scatter_reduce_impl("scatter_reduce", input, dim, index, src, reduce, include_self)


def _slices_index(op, input, dim, index, source):
    """index (a 1-d tensor of slice numbers along dim) expanded to source's shape."""
    d = _dim(op, dim, input.dim())
    if index.dim() > 1:
        raise IndexError(f"[{op}] Index is supposed to be a vector, got {index.dim()}-d")
    index = index.reshape(-1)
    if index.dtype != flow.int64:
        raise RuntimeError(f"[{op}] Expected dtype int64 for index, got {index.dtype}")
    src_shape = list(source.shape) if source.dim() else [1]
    want = list(input.shape) if input.dim() else [1]
    want[d] = index.numel()
    if src_shape != want:
        raise RuntimeError(
            f"[{op}] source {list(source.shape)} must have the shape of self "
            f"{list(input.shape)} with dimension {d} of size {index.numel()} (the index's)"
        )
    shape = [-1 if k == d else 1 for k in range(len(want))]
    return d, index.reshape(shape).expand(*want), source.reshape(want)


@_method(top=True)
def index_copy(input, dim, index, source):
    """torch.index_copy: input with its slices index[i] along dim replaced by source's i-th."""
    d, idx, src = _slices_index("index_copy", input, dim, index, source)
    size = input.shape[d] if input.dim() else 1
    if index.numel() and not index.is_lazy and (int(index.min()) < 0 or int(index.max()) >= size):
        raise IndexError(
            f"[index_copy] index out of range for dimension {d} with size {size}: "
            f"{index.reshape(-1).tolist()}"
        )
    x = input if input.dim() else input.reshape(1)
    return x.scatter(d, idx, src.to(input.dtype)).reshape(input.shape)


@_method(top=True)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce: source's slices reduced ("prod", "mean", "amax", "amin") into
    input's slices index[i] along dim."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"[index_reduce] reduce argument must be either prod, mean, amax or amin, got "
            f"{reduce}"
        )
    d, idx, src = _slices_index("index_reduce", input, dim, index, source)
    return _scatter_reduce_impl("index_reduce", input, d, idx, src, reduce, include_self)


@_method(top=True)
def masked_scatter(input, mask, source):
    """torch.masked_scatter: input with the positions where mask (broadcast) is True filled, in
    row-major order, from source's leading elements."""
    if mask.dtype != flow.bool:
        raise RuntimeError(f"[masked_scatter] expected mask of dtype bool, got {mask.dtype}")
    x, m = flow.broadcast_tensors(input, mask)
    flat = m.reshape(-1)
    need = int(flat.sum()) if flat.numel() and not flat.is_lazy else 0
    if need > source.numel():
        raise RuntimeError(
            f"[masked_scatter] Number of elements of source < number of ones in mask "
            f"({source.numel()} < {need})"
        )
    pos = (flow.cumsum(flat.to(flow.int64), 0) - 1).clamp(min=0)
    vals = source.reshape(-1).to(input.dtype)
    if vals.numel() == 0:
        return x.clone()
    picked = vals.index_select(0, pos).reshape(x.shape)
    return flow.where(m, picked, x)


@_method(top=True)
def select_scatter(input, src, dim, index):
    """torch.select_scatter: input with input.select(dim, index) replaced by src."""
    d = _dim("select_scatter", dim, input.dim())
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"[select_scatter] index {index} out of range for dimension {d} with size {size}"
        )
    want = [s for k, s in enumerate(input.shape) if k != d]
    if list(src.shape) != want:
        raise RuntimeError(
            f"[select_scatter] expected src to have a size equal to the slice of self. src size "
            f"= {list(src.shape)}, slice size = {want}"
        )
    idx = flow.tensor([index % size], device=input.device)
    return index_copy(input, d, idx, src.unsqueeze(d))


@_method(top=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """torch.slice_scatter: input with input[start:end:step] along dim replaced by src."""
    d = _dim("slice_scatter", dim, input.dim())
    if step <= 0:
        raise RuntimeError(f"[slice_scatter] slice step must be positive, got {step}")
    picks = list(builtins.range(input.shape[d]))[slice(start, end, step)]
    want = list(input.shape)
    want[d] = len(picks)
    if list(src.shape) != want:
        raise RuntimeError(
            f"[slice_scatter] expected src to have a size equal to the slice of self. src size "
            f"= {list(src.shape)}, slice size = {want}"
        )
    return index_copy(input, d, flow.tensor(picks, dtype=flow.int64, device=input.device), src)


@_method(top=True)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """torch.diagonal_scatter: input with its diagonal (offset, dim1, dim2) replaced by src."""
    nd = input.dim()
    d1, d2 = _dim("diagonal_scatter", dim1, nd), _dim("diagonal_scatter", dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"[diagonal_scatter] dim1 and dim2 cannot be equal, got {dim1}")
    want = list(flow.diagonal(input, offset, d1, d2).shape)
    if list(src.shape) != want:
        raise RuntimeError(
            f"[diagonal_scatter] expected src to have a size equal to the diagonal of self. src "
            f"size = {list(src.shape)}, diagonal size = {want}"
        )
    x = flow.movedim(input, (d1, d2), (-2, -1))
    R, C = x.shape[-2], x.shape[-1]
    n = want[-1]
    rows = flow.arange(R, device=input.device).reshape(-1, 1)
    cols = flow.arange(C, device=input.device).reshape(1, -1)
    mask = (cols - rows) == offset
    if n == 0:
        return input.clone()
    pos = (rows if offset >= 0 else cols).expand(R, C).clamp(max=n - 1)
    s = src.to(input.dtype).unsqueeze(-2).expand(*(want[:-1] + [R, n]))
    vals = s.gather(-1, pos.expand(*(want[:-1] + [R, C])))
    return flow.movedim(flow.where(mask, vals, x), (-2, -1), (d1, d2))


@_method(top=True)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """torch.as_strided_scatter: input (taken as contiguous) with the elements of its
    as_strided(size, stride, storage_offset) view replaced by src."""
    size, stride = list(size), list(stride)
    if list(src.shape) != size:
        raise RuntimeError(
            f"[as_strided_scatter] expected src to have the view's size {size}, got "
            f"{list(src.shape)}"
        )
    n = input.numel()
    pos = flow.arange(n, device=input.device).as_strided(
        size, stride, 0 if storage_offset is None else storage_offset
    )
    flat = input.reshape(-1).scatter(0, pos.reshape(-1), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


@_method(top=True)
def put(input, index, source, accumulate=False):
    """torch.put: input (taken as 1-d) with elements index (negative counts from the end) set
    to source's, or added to them with accumulate=True."""
    n = input.numel()
    if index.numel() != source.numel():
        raise RuntimeError(
            f"[put] Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    idx = index.reshape(-1).to(flow.int64)
    if idx.numel() and not idx.is_lazy:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < -n or hi >= n:
            raise IndexError(
                f"[put] out of range: tried to access index {lo if lo < -n else hi} on a tensor "
                f"of {n} elements."
            )
    idx = idx % builtins.max(n, 1)
    flat = input.reshape(-1).index_put((idx,), source.reshape(-1).to(input.dtype), accumulate)
    return flat.reshape(input.shape)


@_method
def fill_diagonal_(self, fill_value, wrap=False):
    """Tensor.fill_diagonal_: the main diagonal (of a matrix, or of a tensor whose dims are all
    equal) set to fill_value; wrap=True restarts it every (cols + 1) rows of a tall matrix."""
    nd = self.dim()
    if nd < 2:
        raise RuntimeError("[fill_diagonal_] dimensions must larger than 1")
    if nd > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("[fill_diagonal_] all dimensions of input must be of equal length")
    flat = flow.arange(self.numel(), device=self.device)
    if nd == 2:
        R, C = self.shape
        step = C + 1
        limit = self.numel() if wrap and R > C + 1 else builtins.min(R, C) * step
    else:
        n = self.shape[0]
        step = builtins.sum(n**k for k in builtins.range(nd))
        limit = n * step
    mask = ((flat % step) == 0) & (flat < limit)
    self.masked_fill_(mask.reshape(self.shape), fill_value)
    return self


# ---- views and shapes -------------------------------------------------------------------------


@_method
def unfold(self, dimension, size, step):
    """Tensor.unfold: every window of `size` elements, `step` apart, along dimension, as a new
    last dim (a view sharing self's memory when self is contiguous; of a contiguous copy
    otherwise)."""
    nd = self.dim()
    d = _dim("unfold", dimension, nd) if nd else 0
    length = self.shape[d] if nd else 1
    if step <= 0:
        raise RuntimeError(f"[unfold] step is {step} but must be > 0")
    if size > length or size < 0:
        raise RuntimeError(
            f"[unfold] maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    x = self if self.is_contiguous() else self.contiguous()
    strides = list(x.stride()) if nd else []
    shape = list(x.shape)
    st = strides[d] if nd else 1
    if nd:
        shape[d] = (length - size) // step + 1
        strides[d] = st * step
    return x.as_strided(shape + [size], strides + [st], x.storage_offset())


@_method
def sum_to_size(self, *size):
    """Tensor.sum_to_size: self summed down to `size` (which must expand to self's shape)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s == t or s == 1 for s, t in zip(size, shape[lead:]))
    if not ok:
        raise RuntimeError(
            f"[sum_to_size] size {list(size)} is not expandable to size {list(shape)}"
        )
    out = self.sum(list(builtins.range(lead))) if lead else self
    dims = [k for k, (s, t) in enumerate(zip(size, shape[lead:])) if s == 1 and t != 1]
    return out.sum(dims, keepdim=True) if dims else out


@_method(top=True)
def split_with_sizes(input, split_sizes, dim=0):
    d = _dim("split_with_sizes", dim, input.dim())
    split_sizes = [int(s) for s in split_sizes]
    if builtins.sum(split_sizes) != input.shape[d] or builtins.min(split_sizes, default=0) < 0:
        raise RuntimeError(
            f"[split_with_sizes] expects split_sizes to sum exactly to {input.shape[d]} (input "
            f"tensor's size at dimension {d}), but got split_sizes={split_sizes}"
        )
    out, start = [], 0
    for s in split_sizes:
        out.append(input.narrow(d, start, s))
        start += s
    return tuple(out)


@_method(top=True)
def narrow_copy(input, dim, start, length):
    return input.narrow(dim, start, length).clone()


@_method
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
    """Tensor.new_empty_strided: an uninitialised tensor of `size` with the given strides."""
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"[new_empty_strided] mismatch in length of strides and shape: {size} and {stride}"
        )
    need = 0 if 0 in size else 1 + builtins.sum((s - 1) * t for s, t in zip(size, stride))
    base = flow.empty(
        need,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
    )
    out = base.as_strided(size, stride, 0)
    return out.requires_grad_(True) if requires_grad else out


# ---- numerics ---------------------------------------------------------------------------------

from .return_types import frexp as frexp_t  # noqa: E402


@_method(top=True)
def frexp(input):
    """torch.frexp: (mantissa, exponent) with input = mantissa * 2**exponent, |mantissa| in
    [0.5, 1) (0, inf and NaN: themselves with exponent 0); exponent int32."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"[frexp] torch.frexp() only supports floating-point dtypes, got {input.dtype}"
        )
    x = input.detach()
    regular = flow.isfinite(x) & (x != 0)
    ax = flow.where(regular, x.abs(), flow.ones_like(x)).to(flow.float64)
    e = flow.floor(flow.log2(ax)) + 1
    m = ax / flow.pow(flow.full_like(ax, 2.0), e)
    e = flow.where(m >= 1, e + 1, flow.where(m < 0.5, e - 1, e))
    e = flow.where(regular, e, flow.zeros_like(e))
    scale = flow.pow(flow.full_like(e, 2.0), e).to(input.dtype)
    return frexp_t(input / scale, e.to(flow.int32))


@_method(top=True)
def renorm(input, p, dim, maxnorm):
    """torch.renorm: each slice along dim whose p-norm exceeds maxnorm scaled down to it."""
    if p <= 0:
        raise RuntimeError(f"[renorm] non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"[renorm] non-negative maxnorm expected, got {maxnorm}")
    if input.dim() <= 1:
        raise RuntimeError(f"[renorm] input needs at least 2 dimensions, got {input.dim()}")
    d = _dim("renorm", dim, input.dim())
    others = [k for k in builtins.range(input.dim()) if k != d]
    if math.isinf(p):
        norm = input.abs().amax(others, keepdim=True)
    else:
        norm = (input.abs() ** p).sum(others, keepdim=True) ** (1.0 / p)
    factor = flow.where(norm > maxnorm, maxnorm / (norm + 1e-7), flow.ones_like(norm))
    return input * factor


def _floating(x):
    return x if x.dtype.is_floating_point else x.to(flow.get_default_dtype())


def _cov_weights(name, w, n, dtype):
    """cov's fweights (integral) or aweights (floating): one non-negative weight per
    observation, as `dtype`."""
    integral = name == "fweights"
    if w.dtype.is_floating_point == integral:
        kind = "an integral" if integral else "a floating"
        raise RuntimeError(f"[cov] expected {name} to have {kind} dtype, got {w.dtype}")
    if w.dim() > 1 or w.numel() != n:
        raise RuntimeError(
            f"[cov] expected {name} to have one dimension with {n} elements, got "
            f"{list(w.shape)}"
        )
    if w.numel() and float(w.min()) < 0:
        raise RuntimeError(f"[cov] {name} cannot be negative")
    return w.to(dtype)


@_method(top=True)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov: the covariance of the variables in input's rows (observations in columns),
    with optional integer frequency and float observation weights."""
    if input.dim() > 2:
        raise ValueError(f"[cov] expected input to have two or fewer dimensions, got {input.dim()}")
    x = _floating(input)
    x = x.reshape(1, -1) if x.dim() < 2 else x
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _cov_weights("fweights", fweights, n, x.dtype)
    if aweights is not None:
        aw = _cov_weights("aweights", aweights, n, x.dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = x.mean(1)
        w_sum = float(n)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
    else:
        norm = w_sum - correction
    norm = norm.clamp(min=0) if isinstance(norm, flow.Tensor) else builtins.max(norm, 0.0)
    xm = x - avg.unsqueeze(1)
    c = flow.matmul(xm, (xm * w if w is not None else xm).t())
    return (c / norm).squeeze()


@_method(top=True)
def corrcoef(input):
    """torch.corrcoef: Pearson correlation coefficients of input's rows (clipped to [-1, 1])."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = flow.sqrt(flow.diagonal(c))
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1)


from .return_types import histogram as histogram_t  # noqa: E402


@_method(top=True)
def histogram(input, bins, *, range=None, weight=None, density=False):
    """torch.histogram: (hist, bin_edges) of input's values in `bins` equal bins over `range`
    (the data's min and max by default) or between the given increasing edges; values outside
    are ignored, the last bin includes its right edge."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"[histogram] torch.histogram: input tensor must be floating, got {input.dtype}"
        )
    x = input.reshape(-1)
    if isinstance(bins, flow.Tensor):
        if bins.dim() != 1 or bins.numel() < 1:
            raise RuntimeError("[histogram] bins must be a 1-d tensor with at least one edge")
        edges = bins.to(input.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"[histogram] bins must be > 0, got {bins}")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.numel():
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(
                f"[histogram] max must be larger than min, got min {lo} and max {hi}"
            )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = flow.linspace(lo, hi, bins + 1, dtype=flow.float64, device=input.device).to(
            input.dtype
        )
    nb = edges.numel() - 1
    w = flow.ones_like(x) if weight is None else weight.reshape(-1).to(input.dtype)
    if nb < 1:
        return histogram_t(flow.zeros(0, dtype=input.dtype, device=input.device), edges)
    idx = flow.searchsorted(edges, x, right=True) - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    idx = flow.where(x == edges[-1], flow.full_like(idx, nb - 1), idx).clamp(0, nb - 1)
    hist = flow.zeros(nb, dtype=input.dtype, device=input.device).scatter_add(
        0, idx, flow.where(inside, w, flow.zeros_like(w))
    )
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    return histogram_t(hist, edges)


from .return_types import mode as mode_t  # noqa: E402


@_method(top=True)
def mode(input, dim=-1, keepdim=False):
    """torch.mode: (values, indices) of the most frequent value along dim (the smallest of
    equally frequent ones) and the index of its last occurrence."""
    if input.dim() == 0:
        return mode_t(input.clone(), flow.zeros((), dtype=flow.int64, device=input.device))
    d = _dim("mode", dim, input.dim())
    n = input.shape[d]
    if n == 0:
        raise IndexError(f"[mode] Expected reduction dim {d} to have non-zero size.")
    x = flow.movedim(input, d, -1)
    sv, perm = flow.sort(x, -1, stable=True)
    pos = flow.arange(n, device=input.device).expand(*sv.shape)
    start = flow.cat(
        [flow.ones_like(sv.narrow(-1, 0, 1), dtype=flow.bool), sv[..., 1:] != sv[..., :-1]], -1
    )
    run_start = flow.cummax(flow.where(start, pos, flow.zeros_like(pos)), -1).values
    run_len = pos - run_start + 1
    score = run_len * (n + 1) + (n - 1 - pos)  # the longest run, then the smallest value
    best = score.argmax(-1, keepdim=True)
    values = sv.gather(-1, best).squeeze(-1)
    indices = perm.gather(-1, best).squeeze(-1)
    if keepdim:
        values, indices = values.unsqueeze(d), indices.unsqueeze(d)
    return mode_t(values, indices)


def _check_matrix(op, a):
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"[{op}] A must be batches of square matrices, but they are {list(a.shape[-2:])} "
            f"matrices"
        )


@_method(top=True)
def matrix_exp(input):
    """torch.matrix_exp: the matrix exponential of (batches of) square matrices, by scaling and
    squaring with a degree-18 Taylor polynomial (float64 accurate for ||A/2^s||_1 <= 1/2)."""
    _check_matrix("matrix_exp", input)
    a = input if input.dtype.is_complex else _floating(input)
    n = a.shape[-1]
    if a.numel() == 0:
        return a.clone()
    norm = float(a.detach().abs().sum(-2).amax()) if n else 0.0
    s = builtins.max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0 else 0
    a = a / (2.0**s)
    real = a.real.dtype if a.dtype.is_complex else a.dtype  # complex: a real identity promotes
    eye = flow.eye(n, dtype=real, device=a.device).expand(*a.shape)
    out, term = eye, eye
    for k in builtins.range(1, 19):
        term = flow.matmul(term, a) / k
        out = out + term
    for _ in builtins.range(s):
        out = flow.matmul(out, out)
    return out


def _triangle(a, upper):
    """a's upper (or lower) triangle as the value, with the gradient of the whole of a (torch's
    cholesky_solve and cholesky_inverse read one triangle but differentiate the full matrix)."""
    other = flow.tril(a, -1) if upper else flow.triu(a, 1)
    return a - other.detach()


@_method(top=True)
def cholesky_solve(input, input2, upper=False):
    """torch.cholesky_solve(B, L): the solution X of A X = B with A = L L^T (or U^T U)."""
    _check_matrix("cholesky_solve", input2)
    f = _triangle(input2, upper)
    ft = f.transpose(-2, -1)
    first, second = (ft, f) if upper else (f, ft)
    return flow.linalg.solve(second, flow.linalg.solve(first, input))


@_method(top=True)
def cholesky_inverse(input, upper=False):
    """torch.cholesky_inverse(L): the inverse of A = L L^T (or U^T U) from its factor."""
    _check_matrix("cholesky_inverse", input)
    inv = flow.linalg.inv(_triangle(input, upper))
    if upper:  # A = U^T U: A^-1 = U^-1 U^-T
        return flow.matmul(inv, inv.transpose(-2, -1))
    return flow.matmul(inv.transpose(-2, -1), inv)


from .return_types import triangular_solve as triangular_solve_t  # noqa: E402


@_method(top=True)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve(b, A): (X, A.clone()) with X solving op(T) X = b for T the upper
    (or lower) triangle of A (unit diagonal if unitriangular), op transposing if asked."""
    _check_matrix("triangular_solve", A)
    if transpose:  # op(T) = T^T: the other triangle of A^T
        A_, upper_ = A.transpose(-2, -1), not upper
    else:
        A_, upper_ = A, upper
    x = flow.linalg.solve_triangular(A_, input, upper=upper_, unitriangular=unitriangular)
    return triangular_solve_t(x, A.clone())


_FLOAT_BITS = {flow.float64: (53, -1021, 2.0**-1074), flow.float32: (24, -125, 2.0**-149)}


@_method(top=True)
def nextafter(input, other):
    """torch.nextafter: the next representable value after input toward other, elementwise
    (float32/float64; no gradient, as torch). Built from frexp: one unit in the last place of
    input's binade, half of it stepping down from a power of two, the subnormal step at least."""
    a = input.detach()
    b = other.detach() if isinstance(other, flow.Tensor) else other
    b = b if isinstance(b, flow.Tensor) else flow.tensor(b, dtype=a.dtype, device=a.device)
    if a.dtype not in _FLOAT_BITS or b.dtype not in _FLOAT_BITS:
        raise RuntimeError(
            f"[nextafter] expects float32 or float64 tensors, got {a.dtype} and {b.dtype}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"[nextafter] expected both inputs to have the same dtype, got {a.dtype} and "
            f"{b.dtype}"
        )
    a, b = flow.broadcast_tensors(a, b)
    p, emin, tiny = _FLOAT_BITS[a.dtype]
    up = b > a
    d = flow.where(up, flow.ones_like(a), -flow.ones_like(a))
    m, e = frexp(a.abs())
    e = e.to(flow.float64)
    away = (a > 0) == up  # moving away from zero
    step_e = flow.where(~away & (m == 0.5), e - 1 - p, e - p)
    step = flow.pow(flow.full_like(step_e, 2.0), step_e).clamp(min=tiny).to(a.dtype)
    out = a + d * step
    big = float(flow.finfo(a.dtype).max)
    out = flow.where(a == 0, d * tiny, out)
    out = flow.where(
        flow.isinf(a), flow.where(a > 0, flow.full_like(a, big), flow.full_like(a, -big)), out
    )
    out = flow.where(a == b, b, out)
    return flow.where(flow.isnan(a) | flow.isnan(b), a + b, out)


# ---- random fills -----------------------------------------------------------------------------


def _uniform_like(self, generator):
    dt = self.dtype if self.dtype.is_floating_point else flow.float64
    return flow.empty(tuple(self.shape), dtype=dt, device=self.device).uniform_(
        0.0, 1.0, generator=generator
    )


def _random_fill(self, op, values):
    if self.is_leaf and self.requires_grad and flow.is_grad_enabled():
        raise RuntimeError(
            f"[{op}] a leaf Variable that requires grad is being used in an in-place operation."
        )
    self.copy_(values)
    return self


@_method
def exponential_(self, lambd=1.0, *, generator=None):
    """Tensor.exponential_: samples of Exp(lambd) (-log(1 - U) / lambd)."""
    if not lambd > 0:
        raise RuntimeError(f"[exponential_] expects lambda > 0.0, but found lambda={lambd}")
    u = _uniform_like(self, generator)
    return _random_fill(self, "exponential_", -flow.log1p(-u) / lambd)


@_method
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Tensor.cauchy_: samples of Cauchy(median, sigma) (median + sigma tan(pi (U - 1/2)))."""
    if not sigma > 0:
        raise RuntimeError(f"[cauchy_] expects sigma > 0.0, but found sigma={sigma}")
    u = _uniform_like(self, generator)
    return _random_fill(self, "cauchy_", median + sigma * flow.tan(math.pi * (u - 0.5)))


@_method
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Tensor.log_normal_: exp of samples of N(mean, std)."""
    if not std > 0:
        raise RuntimeError(f"[log_normal_] expects std > 0.0, but found std={std}")
    z = _uniform_like(self, generator).normal_(mean, std, generator=generator)
    return _random_fill(self, "log_normal_", flow.exp(z))


@_method
def geometric_(self, p, *, generator=None):
    """Tensor.geometric_: the number of Bernoulli(p) trials up to the first success."""
    if not 0 < p < 1:
        raise RuntimeError(f"[geometric_] expects p to be in (0, 1), but got p={p}")
    u = _uniform_like(self, generator).to(flow.float64)
    k = flow.ceil(flow.log1p(-u) / math.log1p(-p)).clamp(min=1)
    return _random_fill(self, "geometric_", k)


@_method
def bernoulli_(self, p=0.5, *, generator=None):
    """Tensor.bernoulli_: 1 with probability p (a number, or a tensor broadcast to self), else
    0."""
    pt = p if isinstance(p, flow.Tensor) else None
    if pt is None and not 0 <= p <= 1:
        raise RuntimeError(f"[bernoulli_] expects p to be in [0, 1], but got p={p}")
    if pt is not None and pt.numel() and (float(pt.min()) < 0 or float(pt.max()) > 1):
        raise RuntimeError("[bernoulli_] expects all elements of p to be in [0, 1]")
    u = _uniform_like(self, generator)
    return _random_fill(self, "bernoulli_", (u < (pt.to(u.dtype) if pt is not None else p)))


# ---- Python callables -------------------------------------------------------------------------


def _python_map(self, op, fn, *others):
    if self.device.type != "cpu":
        raise TypeError(f"[{op}] is only implemented on CPU tensors, got {self.device}")
    if self.requires_grad and flow.is_grad_enabled():
        raise RuntimeError(f"[{op}] can't be used on a tensor that requires grad")
    cols = [self.reshape(-1).tolist()] + [
        o.detach().expand(*self.shape).reshape(-1).tolist() for o in others
    ]
    vals = [fn(*args) for args in zip(*cols)]
    self.copy_(flow.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


@_method
def apply_(self, callable):
    """Tensor.apply_: each element replaced by callable(element) (CPU only, slow: Python)."""
    return _python_map(self, "apply_", callable)


@_method
def map_(self, tensor, callable):
    """Tensor.map_: self[i] = callable(self[i], tensor[i]) (tensor broadcast to self)."""
    return _python_map(self, "map_", callable, tensor)


@_method
def map2_(self, x, y, callable):
    """Tensor.map2_: self[i] = callable(self[i], x[i], y[i]) (x, y broadcast to self)."""
    return _python_map(self, "map2_", callable, x, y)


@_method
def prelu(self, weight):
    return flow.nn.functional.prelu(self, weight)


# ---- queries and casts ------------------------------------------------------------------------


@_method
def equal(self, other):
    return flow.equal(self, other)


@_method(top=True)
def is_nonzero(input):
    """torch.is_nonzero: the truth of a one-element tensor."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("[is_nonzero] Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError(
            "[is_nonzero] Boolean value of Tensor with more than one value is ambiguous"
        )
    return builtins.bool(input.item() != 0)


@_method
def is_signed(self):
    return self.dtype.is_signed


@_method(top=True)
def is_inference(input):
    """Always False: this runtime has no separate inference-tensor kind (tensors made under
    flow.inference_mode are ordinary tensors without autograd history)."""
    return False


@_method
def ndimension(self):
    return self.dim()


@_method
def get_device(self):
    """The CUDA device index, or -1 for a CPU tensor."""
    return -1 if self.device.type == "cpu" else self.device.index


_TYPE_NAMES = {
    "Float": flow.float32,
    "Double": flow.float64,
    "Half": flow.float16,
    "BFloat16": flow.bfloat16,
    "Long": flow.int64,
    "Int": flow.int32,
    "Short": flow.int16,
    "Char": flow.int8,
    "Byte": flow.uint8,
    "Bool": flow.bool,
}
_NAME_OF_TYPE = {v: k for k, v in _TYPE_NAMES.items() if v is not None}


@_method(name="type")
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type(): the type name ('oneflow_like.FloatTensor', 'oneflow_like.cuda.LongTensor';
    'torch.' spellings are accepted as arguments); type(dtype or name): self converted to it
    (self itself when it already is)."""
    if dtype is None:
        cuda = ".cuda" if self.device.type == "cuda" else ""
        return f"oneflow_like{cuda}.{_NAME_OF_TYPE[self.dtype]}Tensor"
    device = None
    if isinstance(dtype, str):
        parts = dtype.split(".")
        if len(parts) not in (2, 3) or parts[0] not in ("torch", "oneflow_like"):
            raise ValueError(f"[type] invalid type: {dtype!r}")
        if len(parts) == 3 and parts[1] != "cuda":
            raise ValueError(f"[type] invalid type: {dtype!r}")
        kind = parts[-1][: -len("Tensor")] if parts[-1].endswith("Tensor") else None
        if kind not in _TYPE_NAMES:
            raise ValueError(f"[type] invalid type: {dtype!r}")
        device = "cuda" if len(parts) == 3 else "cpu"
        dtype = _TYPE_NAMES[kind]
    elif not isinstance(dtype, flow.dtype):
        raise TypeError(f"[type] expected a dtype or a type name, got {type(dtype).__name__}")
    if dtype == self.dtype and (device is None or self.device.type == device):
        return self
    out = self.to(dtype)
    if device is not None and out.device.type != device:
        out = out.to(device)
    return out


@_method
def byte(self):
    return self.to(flow.uint8)


@_method
def char(self):
    return self.to(flow.int8)


@_method
def short(self):
    return self.to(flow.int16)


@_method
def is_pinned(self):
    """False: this runtime exposes no page-locked tensors to Python (its CUDA copies stage
    through an internal pinned pool)."""
    return False


@_method
def pin_memory(self):
    """Tensor.pin_memory: raises without CUDA, as torch; with CUDA, a contiguous CPU copy (the
    runtime's host-to-device copies already stage through its own pinned pool)."""
    if self.device.type != "cpu":
        raise RuntimeError(
            f"[pin_memory] cannot pin '{self.device}' memory, only dense CPU tensors"
        )
    if not flow.cuda.is_available():
        raise RuntimeError(
            "[pin_memory] Cannot access accelerator device when none is available (pinned "
            "memory needs CUDA)"
        )
    return self.contiguous().clone()


@_method(top=True)
def is_complex(input):
    """True for complex64 / complex128 tensors."""
    return input.dtype.is_complex


@_method(name="new")
def new_legacy(self, *args, dtype=None, device=None):
    """Tensor.new (legacy): new() an empty tensor, new(*sizes) an uninitialised one, new(data) a
    copy of a list or array, all in self's dtype and device unless given."""
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    if not args:
        return flow.empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], flow.Tensor):
        return args[0].to(device).to(dtype)
    sizes = args[0] if len(args) == 1 and isinstance(args[0], flow.Size) else args
    if all(isinstance(a, int) and not isinstance(a, builtins.bool) for a in sizes):
        return flow.empty(*sizes, dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError(f"[new] expects sizes or one sequence of data, got {args!r}")
    return self.new_tensor(args[0], dtype=dtype, device=device)


# ---- small spellings --------------------------------------------------------------------------


@_method
def is_same_size(self, other):
    return flow.is_same_size(self, other)


@_method
def vdot(self, other):
    return flow.vdot(self, other)


@_method
def svd(self, some=True, compute_uv=True):
    return flow.svd(self, some, compute_uv)


@_method
def unsafe_chunk(self, chunks, dim=0):
    return self.chunk(chunks, dim)


@_method
def unsafe_split(self, split_size, dim=0):
    return self.split(split_size, dim)


@_method
def unsafe_split_with_sizes(self, split_sizes, dim=0):
    return split_with_sizes(self, split_sizes, dim)


# The Tensor methods above that torch also exposes as functions of the tensor.
_TOP_LEVEL_METHODS = (
    "addmv_ deg2rad_ erf_ gcd_ lcm_ ldexp_ log1p_ nan_to_num_ rad2deg_ sinc_ xlogy_ "
    "get_device is_signed unsafe_chunk unsafe_split unsafe_split_with_sizes"
).split()


def _install():
    T = flow.Tensor
    for base in _INPLACE_OF:
        if not hasattr(T, base + "_"):
            _methods.setdefault(base + "_", _inplace_of(base))
    for name, fn in _methods.items():
        if not hasattr(T, name):
            setattr(T, name, fn)
    if not hasattr(T, "is_cpu"):
        T.is_cpu = property(lambda self: self.device.type == "cpu")
    for dunder, fn in (
        ("__lshift__", _shift_op(bitwise_left_shift, False)),
        ("__rlshift__", _shift_op(bitwise_left_shift, True)),
        ("__rshift__", _shift_op(bitwise_right_shift, False)),
        ("__rrshift__", _shift_op(bitwise_right_shift, True)),
        ("__ilshift__", _shift_iop(bitwise_left_shift, "__ilshift__")),
        ("__irshift__", _shift_iop(bitwise_right_shift, "__irshift__")),
    ):
        if not hasattr(T, dunder):
            setattr(T, dunder, fn)
    g = flow.__dict__
    for name, fn in _functions.items():
        g.setdefault(name, fn)
    for name in _TOP_LEVEL_METHODS:  # torch.<name>(input, ...) = input.<name>(...)
        g.setdefault(name, _method_function(name))


_install()
