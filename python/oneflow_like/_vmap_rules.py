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
tensors): vmap then runs its per-sample loop.
"""
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

    def with_metas(self, metas):
        c = _Ctx(self.trace, self.B, self.randomness)
        c.index, c.name, c.out_metas = self.index, self.name, metas
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
    """[B, N, C, *] -> [N, B*C, *]."""
    t = t.movedim(0, 1)
    return t.reshape((t.shape[0], -1) + tuple(t.shape[3:]))


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
    y = y.reshape((y.shape[0], ctx.B, -1) + tuple(y.shape[2:])).movedim(1, 0)
    return _finish(ctx, [y])


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
    gx = ctx.call(ins, **kw)[0]
    gx = gx.reshape((gx.shape[0], ctx.B, -1) + tuple(gx.shape[2:])).movedim(1, 0)
    return _finish(ctx, [gx])


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


def _nll_parts(ctx, attrs, logp, target):
    """(logp, target) folded to [B*N, C, *] / [B*N, *] and whether a sample had its own N."""
    if attrs["label_smoothing"] != 0.0 or attrs["has_weight"]:
        raise _Cant()
    lp, tg = _bat(ctx, *logp), _bat(ctx, *target)
    has_n = lp.dim() - 1 >= 2
    if has_n:
        lp = lp.reshape((-1,) + tuple(lp.shape[2:]))
        tg = tg.reshape((-1,) + tuple(tg.shape[2:]))
    return lp, tg


def _nll_count(ctx, attrs, target):
    tg = _bat(ctx, *target)
    valid = flow.ne(tg, attrs["ignore_index"]).reshape(ctx.B, -1)
    return valid.sum(1)


def _nll_loss(ctx, attrs, args):
    lp, tg = _nll_parts(ctx, attrs, args[0], args[1])
    loss = ctx.call([lp, tg], reduction=0)[0].reshape(ctx.B, -1)
    red = attrs["reduction"]
    if red == 0:
        return _finish(ctx, [loss])
    total = loss.sum(1)
    if red == 2:
        return _finish(ctx, [total])
    return _finish(ctx, [total / _nll_count(ctx, attrs, args[1]).to(total.dtype)])


def _nll_loss_grad(ctx, attrs, args):
    (gy, gyb) = args[0]
    lp, tg = _nll_parts(ctx, attrs, args[1], args[2])
    red = attrs["reduction"]
    per = tg.numel() // ctx.B
    if red == 0:
        g = _bat(ctx, gy, gyb).reshape(-1)
    else:
        g = _bat(ctx, gy, gyb).reshape(ctx.B, 1)
        if red == 1:
            g = g / _nll_count(ctx, attrs, args[2]).to(g.dtype).reshape(ctx.B, 1)
        g = g.expand(ctx.B, per).reshape(-1)
    g = g.reshape(tuple(tg.shape))
    return _finish(ctx, ctx.call([g, lp, tg], reduction=0))


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
    """batch_norm in eval: [B, N, C, *] runs as [B*N, C, *] (the running statistics are per
    channel); its statistics outputs stay unbatched."""
    (x, xb) = args[0]
    if attrs["training"] or not xb or x.dim() < 3 or any(b for _, b in args[1:]):
        raise _Cant()
    outs = ctx.call([x.reshape((-1,) + tuple(x.shape[2:]))] + [t for t, _ in args[1:]])
    res = _finish(ctx, outs[:1])
    for o, (shape, _) in zip(outs[1:], ctx.out_metas[1:]):
        if tuple(o.shape) != tuple(shape):
            raise _Cant()
        res.append((o, False))
    return res


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
        uniform=_random_fresh,
        normal=_random_fresh,
        randint=_random_fresh,
        dropout=_random_of_input,
        bernoulli=_random_of_input,
    )
    for n in ("sum", "prod", "amax", "amin", "max_dim", "min_dim", "var", "std", "norm"):
        rules[n] = _reduce
    rules["logsumexp"] = _reduce
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


def _record(func, leaves, dims, spec, kwargs, unflatten):
    """Records func on one sample: (trace, output spec), or why it could not (a string)."""
    from oneflow_like.func import _flatten

    trace = _C._Trace()
    # the examples are taken before recording starts (inside, select would be a recorded op)
    examples = [
        x.select(d, 0) if isinstance(x, flow.Tensor) and d is not None else x
        for x, d in zip(leaves, dims)
    ]
    try:
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
            trace.set_outputs(out_leaves)
    except Exception as e:  # noqa: BLE001  (any failure to record: the loop runs the function)
        return f"{type(e).__name__}: {e}"
    return trace, out_spec


def run(func, leaves, dims, spec, kwargs, size, randomness, out_dims, fn):
    """The batched call of vmap; None when the function must run per sample (last_run says why).
    Raises what vmap raises (randomness, in-place into an unbatched tensor)."""
    global _RULES
    from oneflow_like.func import _broadcast_dims, _unflatten

    if _RULES is None:
        _RULES = _build_rules()
    start_state = flow.get_rng_state()
    rec = _record(func, leaves, dims, spec, kwargs, _unflatten)
    if isinstance(rec, str):
        flow.set_rng_state(start_state)
        last_run.clear()
        last_run.update(path="loop", reason=rec, fallback_ops=[])
        return None
    trace, out_spec = rec
    ops, flags, values = trace.ops(), trace.op_flags(), trace.values()
    names = {op[0] for op in ops}
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
    producer = {}
    for i, (_, _, _, outs) in enumerate(ops):
        for v in outs:
            producer[v] = i
    for i, ((op, _, ins, _), (inplace, _, _)) in enumerate(zip(ops, flags)):
        if not inplace:
            continue
        tv = ins[0] if ins else None
        if tv is None or values[tv][0] != "op" or ops[producer[tv]][0] in _VIEWS:
            flow.set_rng_state(start_state)
            last_run.clear()
            last_run.update(path="loop", reason=f"in-place {op} into an input", fallback_ops=[])
            return None
    ctx = _Ctx(trace, size, randomness)
    env = {}
    tensor_leaves = [(x, d) for x, d in zip(leaves, dims) if isinstance(x, flow.Tensor)]
    captured = trace.captured()
    for v, (kind, _, _, idx) in enumerate(values):
        if kind == "input":
            x, d = tensor_leaves[idx]
            env[v] = (x.movedim(d, 0), True) if d is not None else (x, False)
        elif kind == "captured":
            env[v] = (captured[idx], False)
    fallbacks = []
    for i, ((op, attrs, ins, outs), (inplace, diff, needs)) in enumerate(zip(ops, flags)):
        args = [env[v] for v in ins]
        if any(t.requires_grad for t, _ in args):
            # inputs that did not require grad when recorded (detached, under no_grad) are
            # detached here too
            args = [
                (t.detach() if t.requires_grad and not (diff and n) else t, b)
                for (t, b), n in zip(args, needs)
            ]
        ctx.index, ctx.name = i, op
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
    out_vals = [env[v] for v in trace.output_values()]
    odims = _broadcast_dims(
        out_dims, _unflatten([t for t, _ in out_vals], out_spec), fn, "out_dims"
    )
    final = []
    for (t, b), od in zip(out_vals, odims):
        if od is None:
            final.append(t.select(0, 0) if b else t)
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
