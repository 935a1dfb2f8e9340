"""oneflow_like.nn.functional: the torch.nn.functional API.

Every function calls its C++ primitive directly: `_C.nn_functional.<name>` for the nn ops
(conv, pooling, norms, losses, attention, dropout, embedding) and `_C.<name>` for the
activations, which are also top-level ops (flow.relu). A primitive missing from the extension
is an AttributeError at import time, not a silent fallback. Only ops with no primitive of their
own (l1_loss, flatten, adaptive pooling to 1x1) are compositions here. nn/PRIMITIVES.md lists
what the pure-Python front end calls.
"""
from oneflow_like import _C

_nnf = _C.nn_functional


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
    return input.relu_() if inplace else _C.relu(input)


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return _C.silu(input)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _C.softplus(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):
    return _C.elu(input, alpha, inplace)


def selu(input, inplace=False):
    return _C.selu(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _C.hardtanh(input, min_val, max_val, inplace)


def relu6(input, inplace=False):
    return _C.relu6(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _C.leaky_relu(input, negative_slope, inplace)


def softmax(input, dim=-1, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return _nnf.softmax(input, dim)


def log_softmax(input, dim=-1, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return _nnf.log_softmax(input, dim)


# ---- linear, conv, pooling ---------------------------------------------------------------------


def linear(input, weight, bias=None):
    return _C.linear(input, weight, bias)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _nnf.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _nnf.conv2d(input, weight, bias, stride, padding, dilation, groups)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return _nnf.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _nnf.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _nnf.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    return _nnf.avg_pool2d(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def adaptive_avg_pool2d(input, output_size):
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if size == (1, 1):  # global average pooling: a plain mean, common enough to special-case
        return input.mean((-2, -1), keepdim=True)
    return _nnf.adaptive_avg_pool2d(input, output_size)


# ---- normalization -----------------------------------------------------------------------------


def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    return _nnf.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _nnf.layer_norm(input, tuple(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _nnf.group_norm(input, num_groups, weight, bias, eps)


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
    return _nnf.embedding(input, weight, padding_idx)


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    return _nnf.dropout(input, p, training)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def pad(input, pad, mode="constant", value=0.0):
    return _C.pad(input, pad, mode, value)


def one_hot(tensor, num_classes=-1):
    return _C.one_hot(tensor, num_classes)


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
    return _nnf.cross_entropy(
        input,
        target,
        weight=weight,
        ignore_index=ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    return _nnf.nll_loss(
        input, target, weight=weight, ignore_index=ignore_index, reduction=reduction
    )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nnf.mse_loss(input, target, reduction=reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _reduce((input - target).abs(), reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    return _nnf.binary_cross_entropy_with_logits(
        input, target, weight=weight, reduction=reduction, pos_weight=pos_weight
    )


# ---- attention ---------------------------------------------------------------------------------


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None
):
    """softmax(q k^T * scale + mask) v; a bool attn_mask is True where attention is allowed."""
    return _nnf.scaled_dot_product_attention(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale
    )
