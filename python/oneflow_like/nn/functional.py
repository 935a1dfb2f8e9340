"""oneflow_like.nn.functional: the torch.nn.functional API.

Each name resolves to the C++ primitive of the same torch name when `_C` has one (looked up once,
lazily, in `_C.nn.functional`, `_C.nn_functional`, `_C.functional`, `_C`, then the top-level
package). Where no primitive exists, a short composition of other primitives is used when it is
cheap (linear, softmax, layer_norm, losses, attention); heavy math (conv, pooling, batch_norm,
embedding) raises MissingPrimitive instead of a slow Python fallback. nn/PRIMITIVES.md lists
every primitive relied on here.
"""
import math

import oneflow_like as flow

_MISSING = object()
_cache = {}


class MissingPrimitive(NotImplementedError):
    """Raised when an op this module needs is not in oneflow_like._C."""


def _namespaces():
    c = getattr(flow, "_C", None)
    spaces = []
    if c is not None:
        nn = getattr(c, "nn", None)
        spaces += [
            getattr(nn, "functional", None),
            getattr(c, "nn_functional", None),
            getattr(c, "functional", None),
            c,
        ]
    else:
        spaces += [None, None, None, None]
    spaces.append(flow)
    return spaces


def _prim(name, top_level=True):
    """The primitive called `name`, or None; never one of this module's own Python functions.

    top_level=False skips `_C` and the package itself, for ops whose torch top-level signature
    differs from the torch.nn.functional one (embedding, batch_norm).
    """
    fn = _cache.get(name, _MISSING)
    if fn is _MISSING:
        fn = None
        spaces = _namespaces()
        for space in spaces if top_level else spaces[:3]:
            cand = getattr(space, name, None) if space is not None else None
            if cand is not None and getattr(cand, "__module__", None) != __name__:
                fn = cand
                break
        _cache[name] = fn
    return fn


def _need(name, top_level=True):
    fn = _prim(name, top_level)
    if fn is None:
        raise MissingPrimitive(
            f"[{name}] primitive missing from oneflow_like._C (see nn/PRIMITIVES.md)"
        )
    return fn


def _missing_primitives(*names):
    """The names not available, for tests that need them: "matmul" (flow.matmul), "Tensor.sqrt"
    (a Tensor method), "F.conv2d" (a primitive, not a composition); "a|b" means either."""

    def have(n):
        if n.startswith("Tensor."):
            return hasattr(flow.Tensor, n[7:])
        if n.startswith("F."):
            return _prim(n[2:]) is not None
        return hasattr(flow, n)

    return [n for n in names if not any(have(alt) for alt in n.split("|"))]


def _reduce(x, reduction):
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    if reduction == "none":
        return x
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


# ---- activations -------------------------------------------------------------------------------


def relu(input, inplace=False):
    return _need("relu")(input)


def gelu(input, approximate="none"):
    fn = _need("gelu")
    return fn(input) if approximate == "none" else fn(input, approximate=approximate)


def silu(input, inplace=False):
    fn = _prim("silu")
    return fn(input) if fn is not None else input * sigmoid(input)


def sigmoid(input):
    return _need("sigmoid")(input)


def tanh(input):
    return _need("tanh")(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    fn = _prim("leaky_relu")
    if fn is not None:
        return fn(input, negative_slope)
    return flow.where(input > 0, input, input * negative_slope)


def softmax(input, dim=-1, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    fn = _prim("softmax")
    if fn is not None:
        return fn(input, dim)
    e = (input - input.amax(dim, keepdim=True).detach()).exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax(input, dim=-1, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    fn = _prim("log_softmax")
    if fn is not None:
        return fn(input, dim)
    return input - input.logsumexp(dim, keepdim=True)


# ---- linear, conv, pooling ---------------------------------------------------------------------


def linear(input, weight, bias=None):
    fn = _prim("linear")
    if fn is not None:
        return fn(input, weight, bias)
    out = flow.matmul(input, weight.t())
    return out if bias is None else out + bias


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _need("conv1d")(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _need("conv2d")(input, weight, bias, stride, padding, dilation, groups)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return _need("max_pool1d")(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return _need("max_pool2d")(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _need("avg_pool1d")(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    return _need("avg_pool2d")(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def adaptive_avg_pool2d(input, output_size):
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if size == (1, 1):  # global average pooling: a plain mean, common enough to special-case
        return input.mean((-2, -1), keepdim=True)
    return _need("adaptive_avg_pool2d")(input, output_size)


# ---- normalization -----------------------------------------------------------------------------


def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    fn = _need("batch_norm", top_level=False)
    return fn(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    fn = _prim("layer_norm")
    if fn is not None:
        return fn(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    xc = input - mean
    out = xc * ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    fn = _prim("group_norm")
    if fn is not None:
        return fn(input, num_groups, weight, bias, eps)
    n, c = input.shape[0], input.shape[1]
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    out = (xc * ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()).reshape(input.shape)
    affine_shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(affine_shape)
    return out if bias is None else out + bias.reshape(affine_shape)


# ---- sparse, dropout, shape --------------------------------------------------------------------


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "[embedding] max_norm, scale_grad_by_freq and sparse are not supported"
        )
    fn = _prim("embedding", top_level=False)
    if fn is not None:
        return fn(input, weight, padding_idx)
    out = weight[input]  # a gather through advanced indexing
    if padding_idx is None:
        return out
    keep = (input != padding_idx).unsqueeze(-1).to(out.dtype)  # no gradient into the padding row
    return out * keep + out.detach() * (1.0 - keep)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    fn = _prim("dropout")
    if fn is not None:
        return fn(input, p, training)
    if p == 1.0:
        return input * 0.0
    keep = (flow.rand(*input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    return input * keep * (1.0 / (1.0 - p))


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def pad(input, pad, mode="constant", value=0.0):
    return _need("pad")(input, pad, mode, value)


def one_hot(tensor, num_classes=-1):
    return _need("one_hot")(tensor, num_classes)


# ---- losses ------------------------------------------------------------------------------------


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    fn = _prim("cross_entropy")
    if fn is not None:
        if weight is None and reduction == "mean":
            return fn(input, target, ignore_index=ignore_index, label_smoothing=label_smoothing)
        return fn(
            input,
            target,
            weight=weight,
            ignore_index=ignore_index,
            reduction=reduction,
            label_smoothing=label_smoothing,
        )
    return _composed_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def _composed_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    # log_softmax + nll_loss (+ the mean of -log p for label smoothing), classes on dim 1.
    logp = log_softmax(input, 1)
    if target.dtype in _float_dtypes():  # class probabilities
        loss = -(logp * target).sum(1)
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    c = input.shape[1]
    smooth = -logp.mean(1) if weight is None else -(logp * _class_view(weight, logp)).sum(1) / c
    valid = (target != ignore_index).to(logp.dtype)
    smooth = smooth * valid
    if reduction == "mean":
        smooth = smooth.sum() / valid.sum()
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1.0 - label_smoothing) + smooth * label_smoothing


def _class_view(weight, like):
    return weight.reshape((1, -1) + (1,) * (like.dim() - 2))


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    fn = _prim("nll_loss")
    if fn is not None:
        return fn(input, target, weight=weight, ignore_index=ignore_index, reduction=reduction)
    valid = target != ignore_index
    safe = flow.where(valid, target, flow.zeros_like(target))
    picked = -input.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight[safe]
    loss = picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    fn = _prim("mse_loss")
    if fn is not None:
        return fn(input, target, reduction=reduction)
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce((input - target).abs(), reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    fn = _prim("binary_cross_entropy_with_logits")
    if fn is not None:
        return fn(input, target, weight=weight, reduction=reduction, pos_weight=pos_weight)
    # Stable form: (1 - y) x + (1 + (pw - 1) y) * softplus(-x), softplus(-x) = relu(-x) + log1p(exp(-|x|))
    sp = relu(-input) + (-input.abs()).exp().log1p()
    if pos_weight is None:
        loss = (1.0 - target) * input + sp
    else:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---- attention ---------------------------------------------------------------------------------


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None
):
    """softmax(q k^T * scale + mask) v; a bool attn_mask is True where attention is allowed."""
    fn = _prim("scaled_dot_product_attention")
    if fn is not None:
        if scale is None:
            return fn(query, key, value, attn_mask, dropout_p, is_causal)
        return fn(query, key, value, attn_mask, dropout_p, is_causal, scale=scale)
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = flow.matmul(query * scale, key.transpose(-2, -1))
    if is_causal:
        causal = flow.ones(L, S, dtype=flow.bool, device=query.device).tril()
        scores = scores.masked_fill(causal.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == flow.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return flow.matmul(attn, value)


def _float_dtypes():
    return tuple(
        getattr(flow, n) for n in ("float16", "bfloat16", "float32", "float64") if hasattr(flow, n)
    )


def __getattr__(name):
    """Any other torch.nn.functional name: the primitive of that name, if `_C` has one."""
    if name.startswith("__"):
        raise AttributeError(name)
    fn = _prim(name)
    if fn is None:
        raise AttributeError(
            f"module 'oneflow_like.nn.functional' has no attribute {name!r} "
            f"(no primitive of that name in oneflow_like._C)"
        )
    return fn
