"""Batching rules for flow.func.vmap (JAX's design: record once, rewrite each op, replay).

vmap records the function once on one sample (lazy tensors, the op-level trace nn.Graph
compiles), so every op it runs is in the trace: the forward ops, and under grad/vjp inside vmap
the backward ops autograd dispatched too. Each recorded op is then replayed eagerly, once for the
whole batch, through its batching rule: a value is either unbatched or batched with the batch
at dim 0; a rule rewrites the op's inputs and attributes (shifts dims, widens shapes, aligns
broadcasting, folds the batch into conv/pool's N or into groups) and runs the same op through
the normal dispatcher (`_Trace.dispatch`), so the autograd engine records the replay and outer
transforms (grad(vmap(f)), vmap(vmap(f)) inside a trace) differentiate it. An op recorded where
autograd did not record a node (under no_grad, on a detached tensor) replays on detached inputs.
An op without a rule runs once per sample (with a one-time warning naming it); a rule whose
result does not have the recorded sample shape and dtype also falls back to that, so a missing
or wrong rule costs speed, never a wrong shape. `run` returns None when the function cannot be
recorded (data-dependent Python control flow, .item(), in-place writes into inputs or captured
tensors): vmap then runs its per-sample loop. Ops whose output shape depends on values
(masked_select, nonzero, boolean masks) raise torch's errors when fed a recorded tensor.
Recorded traces are cached (_cached_record: the key is what the recording read, as
torch.compile's guards). Complex functions record too (the trace is made with eager_replay=True,
which lets it take complex dtypes: it is only replayed, never compiled).
"""
import sys
import warnings

import oneflow_like as flow
from oneflow_like import _C

enabled = True  # False: vmap runs its per-sample loop (the benchmark's and tests' reference)
_WARNED = set()
# What the last vmap call did: {"path": "batched" | "loop", "reason": str, "fallback_ops": [...]}
# (tests and the benchmark read it).
last_run = {}

_RANDOM = {"uniform", "normal", "randint", "randperm", "bernoulli", "dropout"}
_RANDOM_INPLACE = {"uniform_", "normal_", "randint_"}
_VIEWS = {"reshape", "expand", "permute", "squeeze", "unsqueeze", "slice", "select", "as_strided"}
_VIEWS |= {"view_as_real", "view_as_complex"}


# View ops whose recorded form reads input 0 as contiguous (their functional entries copy a
# strided input first; a trace of lazy tensors records no such copy).
_CONTIGUOUS_INPUT = {"reshape", "as_strided", "as_strided_scatter"}


class _Cant(Exception):
    """Raised by a rule that does not cover this case: the op runs per sample."""


class _Ctx:
    def __init__(self, trace, B, randomness):
        self.trace, self.B, self.randomness = trace, B, randomness
        self.index = 0
        self.name = ""
        self.out_metas = ()
        self.outs = ()  # the op's output value ids
        self.used = set()  # the value ids some op or the function's result reads

    def with_metas(self, metas):
        c = _Ctx(self.trace, self.B, self.randomness)
        c.index, c.name, c.out_metas = self.index, self.name, metas
        c.outs, c.used = self.outs, self.used
        return c

    def call(self, inputs, **attrs):
        inputs = list(inputs)
        if self.name in _CONTIGUOUS_INPUT and not inputs[0].is_contiguous():
            inputs[0] = inputs[0].contiguous()
        return list(self.trace.dispatch(self.index, inputs, attrs))


def _srank(t, b):
    return t.dim() - 1 if b else t.dim()


def _bat(ctx, t, b):
    """t batched at dim 0 (an unbatched value expanded)."""
    if b:
        return t
    return t.unsqueeze(0).expand((ctx.B,) + tuple(t.shape))


def _pad(t, r):
    """Batched t with its sample padded to rank r by leading 1s (broadcasting alignment)."""
    s = t.dim() - 1
    if s >= r:
        return t
    return t.reshape((t.shape[0],) + (1,) * (r - s) + tuple(t.shape[1:]))


def _finish(ctx, outs):
    """Batched outputs reshaped to [B] + their recorded sample shapes."""
    res = []
    for o, (shape, _) in zip(outs, ctx.out_metas):
        want = (ctx.B,) + tuple(shape)
        if tuple(o.shape) != want:
            if o.numel() != _numel(want):
                raise _Cant()
            o = o.reshape(want)
        res.append((o, True))
    return res


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _nd(d, rank):
    return d + rank if d < 0 else d


# ---- rules --------------------------------------------------------------------------------------
def _elementwise(ctx, attrs, args):
    r = max(_srank(t, b) for t, b in args)
    return [(o, True) for o in ctx.call([_pad(t, r) if b else t for t, b in args])]


def _unary(ctx, attrs, args):
    """The unary table: one input, or a backward op (dy, x[, y]) whose inputs must have the
    output's shape exactly (its schema does not broadcast)."""
    if len(args) == 1:
        return [(o, True) for o in ctx.call([args[0][0]])]
    shape = (ctx.B,) + tuple(ctx.out_metas[0][0])
    return _finish(ctx, ctx.call([_bat(ctx, t, b).expand(shape) for t, b in args]))


def _all_batched(ctx, attrs, args):
    """Internal backward ops that pair x with its reduced values (keepdim shapes) without
    broadcasting a missing batch: every input batched."""
    return _finish(ctx, ctx.call([_bat(ctx, t, b) for t, b in args]))


def _one_input(ctx, attrs, args):
    """An op of input 0 alone whose attributes do not name dims (cast, contiguous, one_hot)."""
    if len(args) != 1:
        raise _Cant()
    return [(o, True) for o in ctx.call([args[0][0]])]


def _reshape(ctx, attrs, args):
    ((t, _),) = args
    return [(ctx.call([t], shape=[ctx.B] + list(attrs["shape"]))[0], True)]


def _expand(ctx, attrs, args):
    ((t, _),) = args
    shape = list(attrs["shape"])
    return [(ctx.call([_pad(t, len(shape))], shape=[ctx.B] + shape)[0], True)]


def _permute(ctx, attrs, args):
    ((t, _),) = args
    r = t.dim() - 1
    return [(ctx.call([t], perm=[0] + [_nd(p, r) + 1 for p in attrs["perm"]])[0], True)]


def _in_shape(ctx, attrs):
    return [ctx.B] + list(attrs["in_shape"])


def _squeeze(ctx, attrs, args):
    ((t, _),) = args
    r = t.dim() - 1
    dims = [_nd(d, r) + 1 for d in attrs["dims"]]
    if not dims and r > 0:
        dims = [i + 1 for i, s in enumerate(t.shape[1:]) if s == 1]
    return [(ctx.call([t], dims=dims, in_shape=_in_shape(ctx, attrs))[0], True)]


def _dim_shift(rank_of_out=False, key="dim"):
    def rule(ctx, attrs, args):
        t = args[0][0]
        r = t.dim() - 1 + (1 if rank_of_out else 0)
        kw = {key: _nd(attrs[key], max(r, 1)) + 1}
        if "in_shape" in attrs:
            kw["in_shape"] = _in_shape(ctx, attrs)
        ins = [_bat(ctx, x, b) for x, b in args]
        return _finish(ctx, ctx.call(ins, **kw))

    return rule


def _as_strided(ctx, attrs, args):
    """A view (or, scatter: zeros of in_shape with src written into the view) of each sample's
    contiguous layout: the batch is one more stride of the sample's size."""
    ((t, _),) = args
    n = _numel(attrs["in_shape"])
    kw = {
        "shape": [ctx.B] + list(attrs["shape"]),
        "strides": [n] + list(attrs["strides"]),
        "in_shape": _in_shape(ctx, attrs),
    }
    return _finish(ctx, ctx.call([t], **kw))


def _cat(ctx, attrs, args):
    r = max(_srank(t, b) for t, b in args)
    ins = [_bat(ctx, t, b) for t, b in args]
    return _finish(ctx, ctx.call(ins, dim=_nd(attrs["dim"], r) + 1))


def _flip(ctx, attrs, args):
    ((t, _),) = args
    r = t.dim() - 1
    return [(ctx.call([t], dims=[_nd(d, r) + 1 for d in attrs["dims"]])[0], True)]


def _pad_op(ctx, attrs, args):
    ((t, _),) = args
    return [
        (ctx.call([t], pads=[0, 0] + list(attrs["pads"]), in_shape=_in_shape(ctx, attrs))[0], True)
    ]


def _reduce(ctx, attrs, args):
    t = args[0][0]
    r = t.dim() - 1
    dims = list(attrs["dims"])
    if not dims and r == 0:  # a scalar sample: reduce a dim of size 1
        args = [(x.reshape(-1, 1), True) if b else (x, b) for x, b in args]
        t, r, dims = args[0][0], 1, [0]
    elif not dims:
        dims = list(range(r))
    kw = {"dims": [_nd(d, r) + 1 for d in dims]}
    ins = [_bat(ctx, x, b) for x, b in args]
    return _finish(ctx, ctx.call(ins, **kw))


def _index_scatter(ctx, attrs, args):
    ins = [_bat(ctx, x, b) for x, b in args]
    shape = list(attrs["shape"])
    kw = {"dim": _nd(attrs["dim"], len(shape)) + 1, "shape": [ctx.B] + shape}
    return _finish(ctx, ctx.call(ins, **kw))


def _index_gather(ctx, attrs, args):
    ins = [_bat(ctx, x, b) for x, b in args]
    r = ins[0].dim() - 1
    return _finish(ctx, ctx.call(ins, dim=_nd(attrs["dim"], r) + 1))


def _softmax(ctx, attrs, args):
    ins = [_bat(ctx, x, b) for x, b in args]
    r = ins[0].dim() - 1
    return _finish(ctx, ctx.call(ins, dim=_nd(attrs["dim"], max(r, 1)) + 1))


def _index_select(ctx, attrs, args):
    (x, xb), (idx, ib) = args
    if ib or not xb:
        raise _Cant()
    r = x.dim() - 1
    return _finish(ctx, ctx.call([x, idx], dim=_nd(attrs["dim"], max(r, 1)) + 1))


def _index_add(ctx, attrs, args):
    (x, xb), (idx, ib), (src, sb) = args
    if ib:
        raise _Cant()
    r = max(x.dim() - (1 if xb else 0), 1)
    ins = [_bat(ctx, x, xb), idx, _bat(ctx, src, sb)]
    return _finish(ctx, ctx.call(ins, dim=_nd(attrs["dim"], r) + 1))


def _fold(ctx, args, full_rank, data):
    """Data inputs (positions `data`) folded into one leading dim: [B, N, ...] -> [B*N, ...], or
    with a sample without its N ([C, H, W]), the batch becomes N. Returns (inputs, folded)."""
    ins = []
    folded = False
    for i, (t, b) in enumerate(args):
        if i not in data:
            if b:
                raise _Cant()
            ins.append(t)
            continue
        t = _bat(ctx, t, b)
        if t.dim() - 1 == full_rank:
            t = t.reshape((-1,) + tuple(t.shape[2:]))
            folded = True
        ins.append(t)
    return ins, folded


def _folded_shape(ctx, shape, folded):
    shape = list(shape)
    return [ctx.B * shape[0]] + shape[1:] if folded else [ctx.B] + shape


def _pool(rank):
    def rule(ctx, attrs, args):
        ins, folded = _fold(ctx, args, rank, range(len(args)))
        kw = {}
        if "input_shape" in attrs:
            kw["input_shape"] = _folded_shape(ctx, attrs["input_shape"], folded)
        return _finish(ctx, ctx.call(ins, **kw))

    return rule


def _group_conv_layout(ctx, t):
    """[B, N, C, *] -> [N, B*C, *] (conv groups, batch_norm's channels, rnn_seq's N)."""
    t = t.movedim(0, 1)
    return t.reshape((t.shape[0], -1) + tuple(t.shape[3:]))


def _ungroup(ctx, y):
    """[N, B*C, *] -> [B, N, C, *]: _group_conv_layout undone."""
    return y.reshape((y.shape[0], ctx.B, -1) + tuple(y.shape[2:])).movedim(1, 0)


def _conv(ctx, attrs, args):
    x, xb = args[0]
    w, wb = args[1]
    bias = args[2] if len(args) > 2 else None
    if not wb and not (bias and bias[1]):
        ins, _ = _fold(ctx, args, w.dim(), (0,))
        return _finish(ctx, ctx.call(ins))
    # per-sample weights: the batch becomes groups (x [N, B*C, *], w [B*K, C/g, *])
    x = _bat(ctx, x, xb)
    if x.dim() - 1 != w.dim() - (1 if wb else 0):
        raise _Cant()
    w = _bat(ctx, w, wb)
    ins = [_group_conv_layout(ctx, x), w.reshape((-1,) + tuple(w.shape[2:]))]
    if bias is not None:
        ins.append(_bat(ctx, *bias).reshape(-1))
    y = ctx.call(ins, groups=attrs["groups"] * ctx.B)[0]
    return _finish(ctx, [_ungroup(ctx, y)])


def _conv_grad_input(ctx, attrs, args):
    (dy, dyb), (w, wb) = args
    shape = list(attrs["input_shape"])
    if not wb:
        ins, _ = _fold(ctx, args, len(shape), (0,))
        return _finish(ctx, ctx.call(ins, input_shape=[ctx.B * shape[0]] + shape[1:]))
    dy = _bat(ctx, dy, dyb)
    ins = [_group_conv_layout(ctx, dy), w.reshape((-1,) + tuple(w.shape[2:]))]
    kw = {
        "groups": attrs["groups"] * ctx.B,
        "input_shape": [shape[0], ctx.B * shape[1]] + shape[2:],
    }
    return _finish(ctx, [_ungroup(ctx, ctx.call(ins, **kw)[0])])


def _conv_grad_weight(ctx, attrs, args):
    (dy, dyb), (x, xb) = args
    shape = list(attrs["weight_shape"])
    ins = [_group_conv_layout(ctx, _bat(ctx, dy, dyb)), _group_conv_layout(ctx, _bat(ctx, x, xb))]
    kw = {"groups": attrs["groups"] * ctx.B, "weight_shape": [ctx.B * shape[0]] + shape[1:]}
    return _finish(ctx, ctx.call(ins, **kw))


def _matmul(ctx, attrs, args):
    """matmul (a, b[, bias]) = alpha * a @ b + beta * bias, in one GEMM where possible: a batched
    against an unbatched 2-D b folds the batch into a's rows; an unbatched 2-D a against a batched
    b [B, k, m] multiplies b's columns side by side ([k, B*m]); a contraction of size 1 (outer
    products, as in a per-sample weight gradient) is a broadcast multiply; the rest is the op's
    own broadcasting over batch dims."""
    (a, ab), (b, bb) = args[:2]
    bias = args[2] if len(args) > 2 else None
    alpha, beta = attrs["alpha"], attrs["beta"]
    y = None
    if ab and not bb and b.dim() == 2:
        if bias is not None and not bias[1] and bias[0].dim() <= 1:
            y = ctx.call([a.reshape(-1, a.shape[-1]), b, bias[0]])[0]
            return _finish(ctx, [y])
        y = ctx.call([a.reshape(-1, a.shape[-1]), b])[0]
    elif bb and not ab and a.dim() == 2 and b.dim() == 3:
        k, m = b.shape[1], b.shape[2]
        y = ctx.call([a, b.movedim(0, 1).reshape(k, ctx.B * m)])[0]
        y = y.reshape(a.shape[0], ctx.B, m).movedim(1, 0)
    elif ab and bb and a.shape[-1] == 1 and a.dim() == b.dim():
        y = a * b if alpha == 1.0 else a * b * alpha
    if y is None:
        r = max(_srank(t, bt) for t, bt in args[:2])
        return _finish(ctx, ctx.call([_pad(t, r) if bt else t for t, bt in args]))
    y = y.reshape((ctx.B,) + tuple(ctx.out_metas[0][0]))
    if bias is not None:
        c, cb = bias
        c = _pad(c, y.dim() - 1) if cb else c
        y = y + (c if beta == 1.0 else c * beta)
    return _finish(ctx, [y])


# ---- linear algebra -----------------------------------------------------------------------------
_SOLVE_LIKE = {"linalg_solve", "linalg_solve_ex", "linalg_solve_triangular"}


def _linalg(ctx, attrs, args):
    """The LAPACK ops take [..., m, n] batches: the vmap batch is one more leading dim (an
    unbatched operand expanded). solve with A unbatched and B batched solves every sample's
    right-hand sides at once: B [batch, ..., n, k] -> [..., n, batch * k]."""
    if ctx.name in _SOLVE_LIKE and not args[0][1] and args[1][1]:
        (a, _), (b, _) = args
        if b.dim() - 1 == a.dim():
            n, k = b.shape[-2], b.shape[-1]
            bb = b.movedim(0, -2).reshape(tuple(b.shape[1:-2]) + (n, ctx.B * k))
            outs = ctx.call([a, bb])
            y = outs[0].reshape(tuple(b.shape[1:-2]) + (n, ctx.B, k)).movedim(-2, 0)
            if len(outs) == 1:
                return _finish(ctx, [y])
    return _finish(ctx, ctx.call([_bat(ctx, t, b) for t, b in args]))


# ---- complex tensors ----------------------------------------------------------------------------
# The complex ops compose real ops over view_as_real (ops/complex.cc), so vmap records those plus
# the few complex ops below; all of them take the batch as one more leading dim.
def _complex_view(ctx, attrs, args):
    """view_as_real / view_as_complex: views that add / drop the trailing pair dim (a strided
    batch the complex view cannot take is copied first)."""
    ((t, _),) = args
    try:
        return _finish(ctx, ctx.call([t]))
    except Exception:  # noqa: BLE001  (view_as_complex of a non-unit-stride pair dim)
        return _finish(ctx, ctx.call([t.contiguous()]))


def _complex_parts(ctx, attrs, args):
    """complex(real, imag): two real operands of the output's shape (no broadcasting)."""
    shape = (ctx.B,) + tuple(ctx.out_metas[0][0])
    return _finish(ctx, ctx.call([_bat(ctx, t, b).expand(shape) for t, b in args]))


def _fft(ctx, attrs, args):
    """fft_c2c / fft_r2c / fft_c2r over the sample's dims `dim`: each shifted past the batch."""
    ((t, _),) = args
    return _finish(ctx, ctx.call([t], dim=[d + 1 for d in attrs["dim"]]))


def _complex_bmm(ctx, attrs, args):
    """complex_bmm (a [S, m, k], b [S, k, n], op_a, op_b): the vmap batch folded into S; an
    unbatched b with S = 1 (a @ W) multiplies every sample's rows in one GEMM."""
    (a, ab), (b, bb) = args
    if ab and not bb and b.shape[0] == 1 and attrs["op_a"] == 0:
        y = ctx.call([a.reshape(1, -1, a.shape[-1]), b])[0]
        return _finish(ctx, [y])
    a, b = _bat(ctx, a, ab), _bat(ctx, b, bb)
    y = ctx.call([a.reshape((-1,) + tuple(a.shape[2:])), b.reshape((-1,) + tuple(b.shape[2:]))])
    return _finish(ctx, y)


# ---- advanced indexing --------------------------------------------------------------------------
def _bshape(shapes):
    """The broadcast of shapes (numpy's rule)."""
    r = max((len(s) for s in shapes), default=0)
    out = [1] * r
    for s in shapes:
        for i, n in enumerate(s):
            j = r - len(s) + i
            if n != 1:
                out[j] = n
    return tuple(out)


def _batch_indices(ctx, idx):
    """Index tensors (some batched) as full contiguous [B] + I tensors (the raw ops read them
    contiguous), the batch itself the first index (arange(B)): indexing a tensor whose batch
    dim sits where the indices start."""
    sample = [tuple(t.shape[1:]) if b else tuple(t.shape) for t, b in idx]
    shape = (ctx.B,) + _bshape(sample)
    r = len(shape) - 1
    ref = idx[0][0]
    ar = flow.arange(ctx.B, dtype=ref.dtype, device=ref.device).reshape((ctx.B,) + (1,) * r)
    full = [ar] + [_pad(t, r) if b else t for t, b in idx]
    return [i.expand(shape).contiguous() for i in full]


def _indexed_shape(attrs, x_shape, idx):
    """The sample shape x[:dim] + I + x[dim+k:] that index reads and index_put writes."""
    dim = attrs["dim"]
    sample = [tuple(t.shape[1:]) if b else tuple(t.shape) for t, b in idx]
    return tuple(x_shape[:dim]) + _bshape(sample) + tuple(x_shape[dim + len(idx) :])


def _index(ctx, attrs, args):
    """x[..., i0, i1, ...] at dim: unbatched indices shift dim; batched ones read x with the
    batch moved to dim and arange(B) as one more index (functorch's rule)."""
    (x, xb), idx = args[0], args[1:]
    dim = attrs["dim"]
    x = _bat(ctx, x, xb)
    if not any(b for _, b in idx):
        return _finish(ctx, ctx.call([x] + [t for t, _ in idx], dim=dim + 1))
    y = ctx.call([x.movedim(0, dim).contiguous()] + _batch_indices(ctx, idx), dim=dim)[0]
    return _finish(ctx, [y.movedim(dim, 0)])


def _index_put(ctx, attrs, args):
    """index_put (x, values, indices...): as _index, values expanded to the written region."""
    (x, xb), (v, vb), idx = args[0], args[1], args[2:]
    dim = attrs["dim"]
    x = _bat(ctx, x, xb)
    region = _indexed_shape(attrs, tuple(x.shape[1:]), idx)
    v = (_pad(v, len(region)) if vb else v).expand((ctx.B,) + region).contiguous()
    if not any(b for _, b in idx):
        return _finish(ctx, ctx.call([x, v] + [t for t, _ in idx], dim=dim + 1))
    ins = [x.movedim(0, dim).contiguous(), v.movedim(0, dim).contiguous()]
    ins += _batch_indices(ctx, idx)
    return _finish(ctx, [ctx.call(ins, dim=dim)[0].movedim(dim, 0)])


def _copy_into(ctx, attrs, args):
    ((t, b),) = args
    return _finish(ctx, ctx.call([_bat(ctx, t, b)], shape=[ctx.B] + list(attrs["shape"])))


_DYNAMIC = {
    "masked_select": "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We "
    "cannot support this because for each batch this would return a differently shaped Tensor. "
    "Please voice your support in https://github.com/pytorch/functorch/issues/256",
    "nonzero": "vmap: We do not support batching operators that can output dynamic shape. "
    "Attempted to vmap over aten::nonzero. Please voice your support in "
    "https://github.com/pytorch/functorch/issues/256",
    "getitem": "vmap: We do not support batching operators that can support dynamic shape. "
    "Attempting to batch over indexing with a boolean mask.",
}


class DynamicShapeError(RuntimeError):
    pass


def _dynamic_guard(fn, name):
    """fn raising torch's dynamic-shape error where the tensor its output's shape depends on
    (masked_select's mask, nonzero's input, a boolean index) is recorded (lazy): it is computed
    from the vmapped inputs, so each sample would get its own shape. Calls from the library's
    own modules pass through."""

    def guarded(*a, **kw):
        if sys._getframe(1).f_globals.get("__name__", "").startswith("oneflow_like."):
            return fn(*a, **kw)  # the library's own use: its op records (or fails) as before
        if name == "masked_select":
            dep = [kw.get("mask", a[1] if len(a) > 1 else None)]
        elif name == "nonzero":
            dep = [kw.get("input", a[0] if a else None)]
        else:
            key = a[1] if len(a) > 1 else None
            keys = key if isinstance(key, tuple) else (key,)
            dep = [k for k in keys if isinstance(k, flow.Tensor) and k.dtype == flow.bool]
        if any(isinstance(x, flow.Tensor) and _is_lazy(x) for x in dep):
            raise DynamicShapeError(_DYNAMIC[name])
        return fn(*a, **kw)

    return guarded


def _is_lazy(t):
    return bool(getattr(t, "is_lazy", False))


# ---- losses -------------------------------------------------------------------------------------


def _nll_parts(ctx, attrs, logp, target, weight):
    """(logp, target) folded to [B*N, C, *] / [B*N, *] (a sample's own N folded in), and the
    class weights (unbatched: per-sample weights run per sample)."""
    if weight is not None and weight[1]:
        raise _Cant()
    lp, tg = _bat(ctx, *logp), _bat(ctx, *target)
    if lp.dim() - 1 >= 2:
        lp = lp.reshape((-1,) + tuple(lp.shape[2:]))
        tg = tg.reshape((-1,) + tuple(tg.shape[2:]))
    return lp, tg, ([] if weight is None else [weight[0]])


def _nll_denominator(ctx, attrs, target, weight):
    """Per sample, what reduction='mean' divides by: the weights of the non-ignored targets
    (their count without weights), as torch's nll_loss and label-smoothed cross_entropy."""
    tg = _bat(ctx, *target).reshape(ctx.B, -1)
    valid = flow.ne(tg, attrs["ignore_index"])
    if weight is None:
        return valid.sum(1)
    w = weight[0]
    picked = w[flow.where(valid, tg, flow.zeros_like(tg))]
    return (picked * valid.to(w.dtype)).sum(1)


def _nll_loss(ctx, attrs, args):
    """nll_loss (logp, target[, weight]): the op's per-element losses (weights and label
    smoothing included) summed per sample, divided by the sample's denominator for 'mean'."""
    weight = args[2] if len(args) > 2 else None
    lp, tg, w = _nll_parts(ctx, attrs, args[0], args[1], weight)
    loss = ctx.call([lp, tg] + w, reduction=0)[0].reshape(ctx.B, -1)
    red = attrs["reduction"]
    if red == 0:
        return _finish(ctx, [loss])
    total = loss.sum(1)
    if red == 2:
        return _finish(ctx, [total])
    return _finish(ctx, [total / _nll_denominator(ctx, attrs, args[1], weight).to(total.dtype)])


def _nll_loss_grad(ctx, attrs, args):
    (gy, gyb) = args[0]
    weight = args[3] if len(args) > 3 else None
    lp, tg, w = _nll_parts(ctx, attrs, args[1], args[2], weight)
    red = attrs["reduction"]
    per = tg.numel() // ctx.B
    if red == 0:
        g = _bat(ctx, gy, gyb).reshape(-1)
    else:
        g = _bat(ctx, gy, gyb).reshape(ctx.B, 1)
        if red == 1:
            den = _nll_denominator(ctx, attrs, args[2], weight)
            g = g / den.to(g.dtype).reshape(ctx.B, 1)
        g = g.expand(ctx.B, per).reshape(-1)
    g = g.reshape(tuple(tg.shape))
    return _finish(ctx, ctx.call([g, lp, tg] + w, reduction=0))


def _embedding(ctx, attrs, args):
    (w, wb), (idx, ib) = args
    if not wb:
        return _finish(ctx, ctx.call([w, idx]))
    V = w.shape[1]
    idx = _bat(ctx, idx, ib)
    off = (
        flow.arange(ctx.B, dtype=idx.dtype, device=idx.device).reshape(
            (ctx.B,) + (1,) * (idx.dim() - 1)
        )
        * V
    )
    return _finish(ctx, ctx.call([w.reshape((-1,) + tuple(w.shape[2:])), idx + off]))


def _embedding_grad(ctx, attrs, args):
    (gy, gyb), (idx, ib) = args
    if attrs["padding_idx"] >= 0:
        raise _Cant()
    V = attrs["num_rows"]
    idx = _bat(ctx, idx, ib)
    off = (
        flow.arange(ctx.B, dtype=idx.dtype, device=idx.device).reshape(
            (ctx.B,) + (1,) * (idx.dim() - 1)
        )
        * V
    )
    g = ctx.call([_bat(ctx, gy, gyb), idx + off], num_rows=ctx.B * V)[0]
    return _finish(ctx, [g])


def _row_norm(ctx, attrs, args):
    """layer_norm / group_norm / rms_norm forward: the batch only adds rows."""
    (x, xb) = args[0]
    if not xb or any(b for _, b in args[1:]):
        raise _Cant()
    return _finish(ctx, ctx.call([x] + [t for t, _ in args[1:]]))


def _row_norm_grad(ctx, attrs, args):
    """layer_norm_grad / group_norm_grad (dy, x, mean, rstd[, weight]) -> dx[, dw][, db]: dx from
    the op over all rows; the affine gradients, which the op sums over every row, per sample
    (sum over each sample's rows of dy * xhat and dy at affine index (r % groups) * cpg + j /
    inner)."""
    if len(args) > 4 and args[4][1]:
        raise _Cant()
    dy, x, mean, rstd = (_bat(ctx, t, b) for t, b in args[:4])
    outs = ctx.call([dy, x, mean, rstd] + [t for t, _ in args[4:]])
    res = _finish(ctx, outs[:1])
    if len(outs) == 1:
        return res
    G, cpg, inner = attrs["groups"], attrs["channels_per_group"], attrs["inner"]
    dy = dy.reshape(ctx.B, -1, G, cpg, inner)
    xhat = (x.reshape(ctx.B, -1, G, cpg * inner) - mean.reshape(ctx.B, -1, G, 1)) * rstd.reshape(
        ctx.B, -1, G, 1
    )
    grads = []
    if attrs["has_weight"]:
        grads.append((dy * xhat.reshape(dy.shape)).sum((1, 4)))
    if attrs["has_bias"]:
        grads.append(dy.sum((1, 4)))
    return res + _finish(ctx.with_metas(ctx.out_metas[1:]), grads)


def _batch_norm(ctx, attrs, args):
    """batch_norm (x, weight, bias, running_mean, running_var). Eval: [B, N, C, *] runs as
    [B*N, C, *] (the statistics are per channel), its statistics outputs stay unbatched.
    Training: each sample has its own batch statistics, so the batch joins the channels:
    [N, B*C, *], the per-channel inputs repeated per sample; the statistics come out [B, C]."""
    (x, xb) = args[0]
    if not attrs["training"]:
        if not xb or x.dim() < 3 or any(b for _, b in args[1:]):
            raise _Cant()
        outs = ctx.call([x.reshape((-1,) + tuple(x.shape[2:]))] + [t for t, _ in args[1:]])
        res = _finish(ctx, outs[:1])
        for o, (shape, _) in zip(outs[1:], ctx.out_metas[1:]):
            if tuple(o.shape) != tuple(shape):
                raise _Cant()
            res.append((o, False))
        return res
    x = _bat(ctx, x, xb)
    outs = ctx.call([_group_conv_layout(ctx, x)] + [_per_channel(ctx, t, b) for t, b in args[1:]])
    return _finish(ctx, [_ungroup(ctx, outs[0])] + outs[1:])


def _per_channel(ctx, t, b):
    """A per-channel vector [C] (or batched [B, C]) as [B*C]."""
    return _bat(ctx, t, b).reshape(-1)


def _batch_norm_grad(ctx, attrs, args):
    """batch_norm_grad (dy, x, weight, mean, invstd) -> (dx, dweight, dbias) in the channel
    layout of training-mode batch_norm (eval too): the affine gradients come out per sample."""
    dy, x = (_bat(ctx, t, b) for t, b in args[:2])
    ins = [_group_conv_layout(ctx, dy), _group_conv_layout(ctx, x)]
    ins += [_per_channel(ctx, t, b) for t, b in args[2:]]
    outs = ctx.call(ins)
    return _finish(ctx, [_ungroup(ctx, outs[0])] + outs[1:])


_BN_RUNNING_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap"
)


# ---- recurrent networks, attention --------------------------------------------------------------
def _rows(ctx, t, b):
    """A batched [B, N, F] (or [B, F]) operand of a row-wise op as [B*N, F]."""
    t = _bat(ctx, t, b)
    return t.reshape(-1, t.shape[-1])


def _cell(ctx, attrs, args):
    """The fused LSTM / GRU cells and their backward ops work row by row: the batch adds rows."""
    return _finish(ctx, ctx.call([_rows(ctx, t, b) for t, b in args]))


def _seq_layout(ctx, t, b):
    """A sample [T, N, F] (x, dy) or [L*D, N, H] (states) with the batch folded into N:
    [T, B*N, F] (_ungroup undoes it)."""
    return _group_conv_layout(ctx, _bat(ctx, t, b))


def _rnn_seq_check(ctx, attrs):
    if attrs["batch_sizes"]:
        raise _Cant()  # packed sequences: per sample
    if attrs["dropout"] and attrs["train"] and attrs["num_layers"] > 1:
        if ctx.randomness != "different":
            raise _Cant()  # one seed: the same masks for every sample, as the loop


def _rnn_seq(ctx, attrs, args):
    """rnn_seq (x [T, N, I], hx, [cx,] weights...): the batch is the network's own batch dim,
    folded into N (weights unbatched; per-sample weights run per sample)."""
    _rnn_seq_check(ctx, attrs)
    n_state = 2 if attrs["mode"] == "LSTM" else 1
    if any(b for _, b in args[1 + n_state :]):
        raise _Cant()
    ins = [_seq_layout(ctx, t, b) for t, b in args[: 1 + n_state]]
    outs = ctx.call(ins + [t for t, _ in args[1 + n_state :]])
    return _finish(ctx, [_ungroup(ctx, o) for o in outs])


def _rnn_seq_grad(ctx, attrs, args):
    """rnn_seq_grad (x, hx, [cx,] weights..., dy, dhy, [dcy]) -> (dx, dhx, [dcx], dweights...),
    the batch folded into N. The op sums the weight gradients over its batch: where they are used
    (per-sample gradients) every gradient comes from _rnn_per_sample_grads instead."""
    _rnn_seq_check(ctx, attrs)
    n_state = 2 if attrs["mode"] == "LSTM" else 1
    n_w = len(args) - 2 * (1 + n_state)
    fwd, grads = args[: 1 + n_state + n_w], args[1 + n_state + n_w :]
    if any(b for _, b in fwd[1 + n_state :]):
        raise _Cant()  # per-sample weights
    states = [_seq_layout(ctx, t, b) for t, b in fwd[: 1 + n_state]]
    weights = [t for t, _ in fwd[1 + n_state :]]
    dys = [_seq_layout(ctx, t, b) for t, b in grads]
    if any(v in ctx.used for v in ctx.outs[1 + n_state :]):
        if attrs["dropout"] and attrs["train"] and attrs["num_layers"] > 1:
            raise _Cant()  # the rerun cannot draw the op's dropout masks
        outs = _rnn_per_sample_grads(ctx, attrs, states, weights, dys)
        res = [_ungroup(ctx, o) for o in outs[: 1 + n_state]]
        return _finish(ctx, res + outs[1 + n_state :])
    outs = ctx.call(states + weights + dys)
    res = [_ungroup(ctx, o) for o in outs[: 1 + n_state]]
    res += [o.unsqueeze(0).expand((ctx.B,) + tuple(o.shape)) for o in outs[1 + n_state :]]
    return _finish(ctx, res)


def _per_sample_outer(ctx, dz, z):
    """Each sample's sum over steps and rows of dz^T z: dz [T, B*N, G], z [T, B*N, F] ->
    [B, G, F] (one batched GEMM)."""
    T, G, Fz = dz.shape[0], dz.shape[-1], z.shape[-1]
    dz = dz.reshape(T, ctx.B, -1, G).permute(1, 3, 0, 2).reshape(ctx.B, G, -1)
    z = z.reshape(T, ctx.B, -1, Fz).permute(1, 0, 2, 3).reshape(ctx.B, -1, Fz)
    return flow.matmul(dz, z)


def _per_sample_sum(ctx, dz):
    return dz.reshape(dz.shape[0], ctx.B, -1, dz.shape[-1]).sum((0, 2))


def _rnn_per_sample_grads(ctx, attrs, states, weights, dys):
    """Every gradient of rnn_seq, the weights' per sample: the network rerun on the folded batch
    (shared weights: one GEMM per layer and direction for the inputs, one per step for the
    recurrence, the fused cells) and differentiated by the autograd engine down to its gate
    pre-activations, whose products with each sample's inputs and previous states give the
    weight gradients (batched GEMMs over the samples). Returns (dx, dhx, [dcx]) folded, then the
    weight gradients [B, ...] in the op's order."""
    mode, L = attrs["mode"], attrs["num_layers"]
    D = 2 if attrs["bidirectional"] else 1
    has_bias, proj = attrs["has_bias"], attrs["proj_size"]
    per = (4 if has_bias else 2) + (1 if proj else 0)
    leaves = [t.detach().requires_grad_(True) for t in states]
    x, hx = leaves[0], leaves[1]
    cx = leaves[2] if mode == "LSTM" else None
    T = x.shape[0]
    record = []  # per (layer, direction): (layer input, xw, [gh], [h_prev], [h unprojected], [h])
    with flow.enable_grad():
        layer_in = x
        hs, cs = [], []
        for layer in range(L):
            outs = []
            for d in range(D):
                k = layer * D + d
                w = weights[k * per : (k + 1) * per]
                xw = flow.matmul(layer_in, w[0].t())
                if has_bias:
                    xw = xw + w[2]
                h, c = hx[k], (cx[k] if cx is not None else None)
                rec = (layer_in, xw, [], [], [], [])
                steps = [None] * T
                for s in range(T):
                    t = T - 1 - s if d else s
                    gh = flow.matmul(h, w[1].t())
                    if has_bias:
                        gh = gh + w[3]
                    rec[2].append(gh)
                    rec[3].append(h)
                    h, c, pre = _rnn_step(mode, xw[t], gh, h, c, w[-1] if proj else None)
                    rec[4].append(pre)
                    rec[5].append(h)
                    steps[t] = h
                record.append(rec)
                outs.append(flow.stack(steps, 0))
                hs.append(h)
                cs.append(c)
            layer_in = outs[0] if D == 1 else flow.cat(outs, -1)
        results = [layer_in, flow.stack(hs, 0)] + ([flow.stack(cs, 0)] if cx is not None else [])
        wrt = list(leaves)
        for rec in record:
            wrt += [rec[1]] + rec[2] + (rec[5] if proj else [])
        gs = flow.autograd.grad(results, wrt, dys, allow_unused=True)
    gs = [flow.zeros_like(w) if g is None else g for g, w in zip(gs, wrt)]
    out = gs[: len(leaves)]
    i = len(leaves)
    for layer_in, _, _, h_prev, h_pre, _ in record:
        dxw, dgh = gs[i], flow.stack(gs[i + 1 : i + 1 + T], 0)  # dgh in the steps' order
        i += 1 + T
        out.append(_per_sample_outer(ctx, dxw, layer_in))
        out.append(_per_sample_outer(ctx, dgh, flow.stack(h_prev, 0)))
        if has_bias:
            out += [_per_sample_sum(ctx, dxw), _per_sample_sum(ctx, dgh)]
        if proj:
            dh = flow.stack(gs[i : i + T], 0)
            i += T
            out.append(_per_sample_outer(ctx, dh, flow.stack(h_pre, 0)))
    return [o.detach() for o in out]


def _rnn_step(mode, xw, gh, h, c, w_hr):
    """One step on folded [B*N, *] rows with the fused cells: (h', c' or None, h' before the
    projection)."""
    if mode == "LSTM":
        hn, cn = _C._fused_lstm_cell(xw + gh, c)
        return (hn if w_hr is None else flow.matmul(hn, w_hr.t())), cn, hn
    if mode == "GRU":
        hn = _C._fused_gru_cell(xw, gh, h)
        return hn, None, hn
    pre = xw + gh
    hn = flow.tanh(pre) if mode == "RNN_TANH" else flow.relu(pre)
    return hn, None, hn


def _sdpa(ctx, attrs, args):
    """The fused attention op and its backward take [..., L, E] batches: the batch is one more
    leading dim. With dropout, one seed gives every sample its own masks ('different'); 'same'
    runs per sample (the loop's masks)."""
    if attrs["dropout_p"] and ctx.randomness != "different":
        raise _Cant()
    return _finish(ctx, ctx.call([_bat(ctx, t, b) for t, b in args]))


def _random_fresh(ctx, attrs, args):
    if ctx.randomness != "different":
        return [(o, False) for o in ctx.call([])]
    return _finish(ctx, ctx.call([], shape=[ctx.B] + list(attrs["shape"])))


def _random_of_input(ctx, attrs, args):
    """dropout / bernoulli: "different" draws over the whole batch (independent per sample);
    "same" gives every sample one draw (the recorded seed, per sample)."""
    ((x, b),) = args
    if ctx.randomness == "different":
        return _finish(ctx, ctx.call([_bat(ctx, x, b)]))
    if not b:
        return [(o, False) for o in ctx.call([x])]
    return _per_sample(ctx, args, warn=False)


def _build_rules():
    rules = {}
    for table in ("_binary_table", "_ternary_table"):
        for row in getattr(_C, table)():
            rules[row["name"]] = _elementwise
    for row in _C._unary_table():
        rules[row["name"]] = _unary
    for n in ("masked_fill", "contiguous", "to_device"):
        rules[n] = _elementwise
    for n in ("reduce_eq_mask", "norm_backward"):
        rules[n] = _all_batched
    for n in ("cast", "one_hot"):
        rules[n] = _one_input
    rules.update(
        reshape=_reshape,
        expand=_expand,
        permute=_permute,
        squeeze=_squeeze,
        unsqueeze=_dim_shift(rank_of_out=True),
        slice=_dim_shift(),
        select=_dim_shift(),
        cat=_cat,
        as_strided=_as_strided,
        as_strided_scatter=_as_strided,
        scatter=_index_gather,
        flip=_flip,
        tril=_one_input,
        pad=_pad_op,
        reduce_index_scatter=_index_scatter,
        reduce_index_gather=_index_gather,
        index_select=_index_select,
        index_add=_index_add,
        gather=_index_gather,
        matmul=_matmul,
        conv2d=_conv,
        conv3d=_conv,
        conv2d_grad_input=_conv_grad_input,
        conv3d_grad_input=_conv_grad_input,
        conv2d_grad_weight=_conv_grad_weight,
        conv3d_grad_weight=_conv_grad_weight,
        nll_loss=_nll_loss,
        nll_loss_grad=_nll_loss_grad,
        embedding=_embedding,
        embedding_grad=_embedding_grad,
        layer_norm=_row_norm,
        group_norm=_row_norm,
        rms_norm=_row_norm,
        layer_norm_grad=_row_norm_grad,
        group_norm_grad=_row_norm_grad,
        batch_norm=_batch_norm,
        batch_norm_grad=_batch_norm_grad,
        index=_index,
        index_put=_index_put,
        copy_=_copy_into,
        lstm_cell_fused=_cell,
        gru_cell_fused=_cell,
        lstm_cell_fused_grad=_cell,
        gru_cell_fused_grad=_cell,
        rnn_seq=_rnn_seq,
        rnn_seq_grad=_rnn_seq_grad,
        _scaled_dot_product_flash_attention=_sdpa,
        _scaled_dot_product_flash_attention_backward=_sdpa,
        uniform=_random_fresh,
        normal=_random_fresh,
        randint=_random_fresh,
        dropout=_random_of_input,
        bernoulli=_random_of_input,
    )
    for n in ("sum", "prod", "amax", "amin", "max_dim", "min_dim", "var", "std", "norm"):
        rules[n] = _reduce
    rules["logsumexp"] = _reduce
    for row in _C._linalg_table()["ops"]:
        rules[row["name"]] = _linalg
    rules.update(
        linalg_eig=_linalg,
        linalg_eig_backward=_all_batched,
        view_as_real=_complex_view,
        view_as_complex=_complex_view,
        complex=_complex_parts,
        fft_c2c=_fft,
        fft_r2c=_fft,
        fft_c2r=_fft,
        complex_bmm=_complex_bmm,
    )
    for n in ("argmax", "argmin", "nanmedian_dim"):
        rules[n] = _reduce
    for n in ("softmax", "log_softmax", "softmax_grad", "log_softmax_grad"):
        rules[n] = _softmax
    for n in ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "sort", "topk"):
        rules[n] = _softmax
    for n in ("cumprod_grad", "logcumsumexp_grad"):
        rules[n] = _softmax
    for n in ("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"):
        rules[n] = rules[n + "_grad"] = _pool(4)
    for n in ("max_pool3d", "avg_pool3d", "adaptive_avg_pool3d"):
        rules[n] = rules[n + "_grad"] = _pool(5)
    return rules


_RULES = None


def _per_sample(ctx, args, warn=True, name=None):
    if warn and name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule "
            f"for {name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation.",
            UserWarning,
            stacklevel=4,
        )
    cols = None
    for i in range(ctx.B):
        outs = ctx.call([t.select(0, i) if b else t for t, b in args])
        if cols is None:
            cols = [[] for _ in outs]
        for c, o in zip(cols, outs):
            c.append(o)
    return [(flow.stack(c), True) for c in cols]


_INPLACE_ERROR = (
    "vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
    "over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators "
    "instead of {op}. If said operator is being called inside the PyTorch framework, please "
    "file a bug report instead."
)


# The eigen / singular vector phase checks of eigh/eig/svd backward (torch's) read values, so a
# recording keeps them as recorded values (max |Im diag(V^H gV)| per sample) with their messages,
# extra trace outputs that run checks after the replay. One list per recording in progress: a
# recording nested in another hands the checks recorded before it to the enclosing one.
_PHASE_CHECKS = []


def _record(func, leaves, dims, spec, kwargs, unflatten):
    """Records func on one sample: (trace, output spec, phase check messages), or why it could
    not (a string)."""
    pending = _C._take_phase_checks()  # recorded by an enclosing recording (or stale)
    if _PHASE_CHECKS:
        _PHASE_CHECKS[-1].extend(pending)
    _PHASE_CHECKS.append([])
    try:
        rec = _record_checked(func, leaves, dims, spec, kwargs, unflatten)
    finally:
        mine = _PHASE_CHECKS.pop() + list(_C._take_phase_checks())
    if isinstance(rec, str):
        return rec
    trace, out_leaves, out_spec = rec
    trace.set_outputs(out_leaves + [t for _, t in mine])
    return trace, out_spec, tuple(m for m, _ in mine)


def _check_phases(messages, values):
    """Raises torch's phase error where a sample's recorded max |Im diag| exceeds 1e-2."""
    for msg, (t, _) in zip(messages, values):
        if bool(flow.logical_not(t <= 1e-2).any()):
            raise RuntimeError(msg)


def _record_checked(func, leaves, dims, spec, kwargs, unflatten):
    from oneflow_like.func import _flatten

    trace = _C._Trace(eager_replay=True)
    # the examples are taken before recording starts (inside, select would be a recorded op)
    examples = [
        x.select(d, 0) if isinstance(x, flow.Tensor) and d is not None else x
        for x, d in zip(leaves, dims)
    ]
    patches = _dynamic_patches()
    try:
        for obj, attr, guarded in patches:
            setattr(obj, attr, guarded)
        with trace:
            lazy = []
            for x, ex in zip(leaves, examples):
                if not isinstance(x, flow.Tensor):
                    lazy.append(x)
                    continue
                lx = trace.add_input(ex)
                if x.requires_grad:
                    lx.requires_grad_(True)
                    if ex is not x:
                        lx = lx.view_as(lx)  # a view of the batch, as the loop's slice is
                lazy.append(lx)
            out = func(*unflatten(lazy, spec), **kwargs)
            out_leaves, out_spec = _flatten(out)
            if not all(isinstance(o, flow.Tensor) for o in out_leaves):
                return "an output is not a Tensor"
    except DynamicShapeError:
        raise
    except Exception as e:  # noqa: BLE001  (any failure to record: the loop runs the function)
        return f"{type(e).__name__}: {e}"
    finally:
        for obj, attr, guarded in patches:
            setattr(obj, attr, guarded.original)
    return trace, out_leaves, out_spec


def _dynamic_patches():
    """(object, attribute, guarded function) for the ops whose output shape depends on values:
    while vmap records, they raise torch's error on a recorded tensor."""
    out = []
    for obj, attr, name in (
        (flow, "masked_select", "masked_select"),
        (flow.Tensor, "masked_select", "masked_select"),
        (flow, "nonzero", "nonzero"),
        (flow.Tensor, "nonzero", "nonzero"),
        (flow, "argwhere", "nonzero"),
        (flow.Tensor, "argwhere", "nonzero"),
        (flow.Tensor, "__getitem__", "getitem"),
    ):
        fn = getattr(obj, attr, None)
        if fn is None:
            continue
        g = _dynamic_guard(fn, name)
        g.original = fn
        out.append((obj, attr, g))
    return out


# ---- the trace cache ----------------------------------------------------------------------------
# vmap's recorded traces keyed on what the recording depended on, as torch.compile's guards: the
# function (its code, and by identity what its closure and the globals it names hold, the
# parameters and buffers of modules among them), in_dims, the input structure, every tensor
# input's shape, dtype, device and requires_grad, the other inputs' values, and grad mode. A
# trace with random ops (their seeds are recorded) or recorded inside another trace is not kept.
_CACHE = {}
_CACHE_SIZE = 64
cache_stats = {"hits": 0, "misses": 0}


def _obj_key(x, keep, depth=0):
    """What the recording read of x: values of scalars, identity (kept alive with the entry, so
    the id stays x's) of other objects; a tensor's identity with its shape, dtype and
    requires_grad; a module's identity with every tensor and scalar attribute of it and its
    submodules; a function's code, closure and globals (_func_key)."""
    if x is None or isinstance(x, (bool, int, float, str, bytes, complex)):
        return (type(x).__name__, x)
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_obj_key(v, keep, depth) for v in x)
    keep.append(x)
    if isinstance(x, flow.Tensor):
        return ("t", id(x), tuple(x.shape), str(x.dtype), x.requires_grad)
    if isinstance(x, flow.nn.Module):
        parts = ["m", id(x)]
        for m in x.modules():
            parts.append(id(m))
            for k, v in sorted(vars(m).items()):
                if k in ("_parameters", "_buffers"):
                    v = [(n, t) for n, t in v.items()]
                    parts.append((k,) + tuple((n, _obj_key(t, keep)) for n, t in v))
                elif isinstance(v, (flow.Tensor, bool, int, float, str)) or v is None:
                    parts.append((k, _obj_key(v, keep)))
        return tuple(parts)
    if callable(x) and depth < 4 and not isinstance(x, type):
        return _func_key(x, keep, depth + 1)
    return ("o", id(x))


def _func_key(f, keep, depth=0):
    code = getattr(f, "__code__", None)
    if code is None:
        inner = getattr(f, "__func__", None)
        if inner is not None:  # a bound method: its function and its object
            return ("bm", _func_key(inner, keep, depth), _obj_key(f.__self__, keep, depth))
        if isinstance(f, flow.nn.Module):
            return _obj_key(f, keep, depth)
        keep.append(f)
        return ("o", id(f))
    keep.append(f)
    cells = tuple(_obj_key(c.cell_contents, keep, depth) for c in (f.__closure__ or ()))
    g = getattr(f, "__globals__", {})
    names = tuple(
        (n, _obj_key(g[n], keep, depth + 1))
        for n in code.co_names
        if n in g and depth < 3 and not isinstance(g[n], type(flow))
    )
    return ("f", id(code), cells, names, _obj_key(f.__defaults__, keep, depth))


def _cache_key(func, leaves, dims, spec, kwargs, randomness):
    """(key, the objects it names by identity), or None where the call cannot be cached."""
    keep = []
    try:
        parts = [_func_key(func, keep), tuple(dims), repr(spec), randomness]
        parts += [
            flow.is_grad_enabled(),
            flow.is_autocast_enabled(),
            flow.is_autocast_cpu_enabled(),
        ]
        parts += [str(flow.get_autocast_gpu_dtype()), str(flow.get_autocast_cpu_dtype())]
        for x in leaves:
            if isinstance(x, flow.Tensor):
                if _is_lazy(x):
                    return None  # recorded inside another trace: its inputs are that trace's
                parts.append((tuple(x.shape), str(x.dtype), str(x.device), x.requires_grad))
            else:
                parts.append(_obj_key(x, keep))
        parts.append(tuple(sorted((k, _obj_key(v, keep)) for k, v in kwargs.items())))
        key = tuple(parts)
        hash(key)
        return key, keep
    except Exception:  # noqa: BLE001  (something unhashable, an odd object: no caching)
        return None


def _cacheable(trace):
    for name, attrs, _, _ in trace.ops():
        if name in _RANDOM or name in _RANDOM_INPLACE or name == "randperm":
            return False
        if attrs.get("dropout_p") or (attrs.get("dropout") and attrs.get("train")):
            return False
    return True


def _cached_record(func, leaves, dims, spec, kwargs, randomness, unflatten):
    key = _cache_key(func, leaves, dims, spec, kwargs, randomness) if cache_enabled else None
    if key is not None and key[0] in _CACHE:
        cache_stats["hits"] += 1
        _CACHE[key[0]] = _CACHE.pop(key[0])  # most recently used last
        return _CACHE[key[0]][0]
    cache_stats["misses"] += 1
    rec = _record(func, leaves, dims, spec, kwargs, unflatten)
    if not isinstance(rec, str):
        rec = rec + ({},)  # (trace, output spec, phase checks, its plan: filled by the first run)
    if key is not None and (isinstance(rec, str) or _cacheable(rec[0])):
        _CACHE[key[0]] = (rec, key[1])
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
    return rec


cache_enabled = True  # False: every vmap call records again (the benchmark's reference)


def run(func, leaves, dims, spec, kwargs, size, randomness, out_dims, fn):
    """The batched call of vmap; None when the function must run per sample (last_run says why).
    Raises what vmap raises (randomness, in-place into an unbatched tensor)."""
    global _RULES
    from oneflow_like.func import _broadcast_dims, _unflatten

    if _RULES is None:
        _RULES = _build_rules()
    start_state = flow.get_rng_state()
    rec = _cached_record(func, leaves, dims, spec, kwargs, randomness, _unflatten)
    if isinstance(rec, str):
        flow.set_rng_state(start_state)
        last_run.clear()
        last_run.update(path="loop", reason=rec, fallback_ops=[])
        return None
    trace, out_spec, checks, plan = rec
    if not plan:
        plan.update(_plan(trace, dims, leaves))
    ops, flags, values, names = plan["ops"], plan["flags"], plan["values"], plan["names"]
    if randomness == "error" and names & (_RANDOM | _RANDOM_INPLACE):
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use the "
            "'same' or 'different' randomness flags on vmap or perform the randomness operation "
            "out of vmap"
        )
    if randomness == "different" and names & (_RANDOM_INPLACE | {"randperm"}):
        # no rule draws these per sample: the loop does (one generator draw per sample)
        flow.set_rng_state(start_state)
        last_run.clear()
        last_run.update(path="loop", reason="random op drawn per sample", fallback_ops=[])
        return None
    if plan["running_stats"]:
        raise RuntimeError(_BN_RUNNING_STATS)
    if plan["inplace_input"]:
        flow.set_rng_state(start_state)
        last_run.clear()
        last_run.update(path="loop", reason=plan["inplace_input"], fallback_ops=[])
        return None
    ctx = _Ctx(trace, size, randomness)
    ctx.used = plan["used"]
    env = {}
    tensor_leaves = [(x, d) for x, d in zip(leaves, dims) if isinstance(x, flow.Tensor)]
    captured = plan["captured"]
    for v, (kind, _, _, idx) in enumerate(values):
        if kind == "input":
            x, d = tensor_leaves[idx]
            env[v] = (x.movedim(d, 0), True) if d is not None else (x, False)
        elif kind == "captured":
            env[v] = (captured[idx], False)
    fallbacks = []
    guards = dict(zip(plan["outputs"][len(plan["outputs"]) - len(checks) :], checks))
    for i, ((op, attrs, ins, outs), (inplace, diff, needs)) in enumerate(zip(ops, flags)):
        args = [env[v] for v in ins]
        if any(t.requires_grad for t, _ in args):
            # inputs that did not require grad when recorded (detached, under no_grad) are
            # detached here too
            args = [
                (t.detach() if t.requires_grad and not (diff and n) else t, b)
                for (t, b), n in zip(args, needs)
            ]
        ctx.index, ctx.name, ctx.outs = i, op, outs
        ctx.out_metas = [(values[v][1], values[v][2]) for v in outs]
        batched = any(b for _, b in args)
        if inplace and batched and ins and not args[0][1]:
            raise RuntimeError(_INPLACE_ERROR.format(op=op))
        if not batched and not (op in _RANDOM and randomness == "different"):
            res = [(o, False) for o in ctx.call([t for t, _ in args])]
        else:
            rule = _RULES.get(op)
            res = None
            if rule is not None:
                try:
                    res = rule(ctx, attrs, args)
                except Exception:  # noqa: BLE001  (_Cant, or a case the rule gets wrong: the
                    res = None  # per-sample run below gives the answer or the op's own error)
                if res is not None and not _shapes_ok(ctx, res):
                    res = None
            if res is None:
                fallbacks.append(op)
                res = _per_sample(ctx, args, name=op)
        for v, r in zip(outs, res):
            env[v] = r
            if v in guards:  # checked where recorded, before the ops after it run (torch's order)
                _check_phases([guards[v]], [r])
    out_vals = [env[v] for v in plan["outputs"]]
    if checks:
        out_vals = out_vals[: -len(checks)]
    odims = _broadcast_dims(
        out_dims, _unflatten([t for t, _ in out_vals], out_spec), fn, "out_dims"
    )
    final = []
    for (t, b), od in zip(out_vals, odims):
        if od is None:
            if b:
                raise ValueError(out_dim_none_error(func))
            final.append(t)
        elif b:
            final.append(t.movedim(0, od))
        else:
            s = t.unsqueeze(od)
            shape = list(s.shape)
            shape[_nd(od, t.dim() + 1)] = size
            final.append(s.expand(shape).contiguous())
    last_run.clear()
    last_run.update(path="batched", reason="", fallback_ops=fallbacks)
    return _unflatten(final, out_spec)


def out_dim_none_error(func):
    name = getattr(func, "__name__", type(func).__name__)
    return f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"


def _plan(trace, dims, leaves):
    """What run reads of a trace, computed once per cached trace (the key fixes dims): its ops,
    flags, values, op names, captured tensors, outputs, the values some op reads, whether
    training batch_norm would update unbatched running statistics, and why the function must
    run the loop (an in-place write into an input or a captured tensor), if it must."""
    ops, flags, values = trace.ops(), trace.op_flags(), trace.values()
    outputs = trace.output_values()
    producer = {v: i for i, op in enumerate(ops) for v in op[3]}
    inplace_input = ""
    for (op, _, ins, _), (inplace, _, _) in zip(ops, flags):
        if not inplace:
            continue
        tv = ins[0] if ins else None
        if tv is None or values[tv][0] != "op" or ops[producer[tv]][0] in _VIEWS:
            inplace_input = f"in-place {op} into an input"
            break
    return {
        "ops": ops,
        "flags": flags,
        "values": values,
        "names": {op[0] for op in ops},
        "captured": trace.captured(),
        "outputs": outputs,
        "used": {v for op in ops for v in op[2]} | set(outputs),
        "running_stats": _updates_running_stats(ops, flags, values, dims, leaves),
        "inplace_input": inplace_input,
    }


def _updates_running_stats(ops, flags, values, dims, leaves):
    """Whether training-mode batch_norm on a batched input updates in place, from the batch
    statistics, running statistics that are unbatched (captured buffers, or inputs not mapped
    over): torch raises then."""
    tensor_dims = [d for x, d in zip(leaves, dims) if isinstance(x, flow.Tensor)]
    batched = {
        v
        for v, (kind, _, _, idx) in enumerate(values)
        if kind == "input" and tensor_dims[idx] is not None
    }
    stats = set()
    for (op, attrs, ins, outs), (inplace, _, _) in zip(ops, flags):
        if inplace and ins and ins[0] not in batched and any(v in stats for v in ins[1:]):
            return True
        if any(v in batched for v in ins):
            batched.update(outs)
            if op == "batch_norm" and attrs["training"]:
                stats.update(outs[1:])
    return False


def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def _shapes_ok(ctx, res):
    if len(res) != len(ctx.out_metas):
        return False
    for (t, b), (shape, dtype) in zip(res, ctx.out_metas):
        want = ((ctx.B,) if b else ()) + tuple(shape)
        if tuple(t.shape) != want or _dtype_name(t.dtype) != dtype:
            return False
    return True
