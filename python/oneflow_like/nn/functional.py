"""oneflow_like.nn.functional: the torch.nn.functional API.

Every function calls its C++ primitive directly: `_C.nn_functional.<name>` for the nn ops
(conv, pooling, norms, losses, attention, dropout, embedding) and `_C.<name>` for the
activations, which are also top-level ops (flow.relu). A primitive missing from the extension
is an AttributeError at import time, not a silent fallback. Only ops with no primitive of their
own (l1_loss, flatten, adaptive pooling to 1x1) are compositions here. nn/PRIMITIVES.md lists
what the pure-Python front end calls.
"""
import math

import numpy as np

from oneflow_like import _C
from oneflow_like.autograd import no_grad
from oneflow_like.nn import attention as _attention

_nnf = _C.nn_functional


def _reduction(fn, size_average, reduce, reduction):
    """PyTorch's legacy size_average/reduce flags folded into `reduction`, which is checked."""
    if size_average is not None or reduce is not None:
        if reduce is not None and not reduce:
            reduction = "none"
        else:
            reduction = "sum" if size_average is not None and not size_average else "mean"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"[{fn}] reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return reduction


def _reduce(x, reduction, fn="loss"):
    if reduction == "mean":
        return x.mean()
    if reduction == "sum":
        return x.sum()
    if reduction == "none":
        return x
    raise ValueError(f"[{fn}] reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


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


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -_C.softplus(-input, 1.0, 20.0)


def _maybe_inplace(input, out, inplace):
    if not inplace:
        return out
    input.copy_(out)
    return input


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)) = alpha elu(x / alpha)."""
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _maybe_inplace(input, _C.elu(input / alpha, 1.0, False) * alpha, inplace)


def hardsigmoid(input, inplace=False):
    return _maybe_inplace(input, _C.hardsigmoid(input), inplace)


def hardswish(input, inplace=False):
    return _maybe_inplace(input, _C.hardswish(input), inplace)


def mish(input, inplace=False):
    return _maybe_inplace(input, _C.mish(input), inplace)


def softsign(input):
    return _C.softsign(input)


def tanhshrink(input):
    return _C.tanhshrink(input)


def hardshrink(input, lambd=0.5):
    return _C.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _C.softshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    out = _C.where(input > threshold, input, value)
    return _maybe_inplace(input, out, inplace)


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves (a, b) of input along dim."""
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size {n}")
    a, b = input.chunk(2, dim)
    return a * _C.sigmoid(b)


def _get_softmax_dim(name, ndim, stacklevel):
    """torch's legacy choice when softmax & co. get no dim: 0 for 0-, 1- and 3-d inputs, else 1
    (with its deprecation warning)."""
    import warnings

    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return softmax(-input, dim, dtype=dtype)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x); weight has 1 or C (dim 1) entries."""
    if weight.dim() != 1 or (
        weight.numel() != 1 and (input.dim() < 2 or weight.numel() != input.shape[1])
    ):
        raise RuntimeError(
            f"prelu: weight of shape {tuple(weight.shape)} must have 1 element or one per "
            f"channel of the input {tuple(input.shape)}"
        )
    w = weight
    if weight.numel() != 1:
        w = weight.reshape([-1] + [1] * (input.dim() - 2))
    return _C.where(input > 0, input, input * w)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: a slope drawn from U(lower, upper) per element in training, the
    mean slope otherwise."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = _C.rand(*input.shape, dtype=input.dtype, device=input.device) * (upper - lower) + lower
    return _maybe_inplace(input, _C.where(input >= 0, input, input * slope), inplace)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    norm = input.norm(p, dim, keepdim=True).clamp(min=eps)
    return input / norm


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _nnf.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _nnf.log_softmax(input, dim)


# ---- linear, conv, pooling ---------------------------------------------------------------------


def linear(input, weight, bias=None):
    return _C.linear(input, weight, bias)


def _same_padding(input, weight, stride, dilation, n, op):
    """padding='same': the input (padded one extra on the right where the total is odd, as
    PyTorch does) and the symmetric padding that keeps each spatial size."""
    if any(v != 1 for v in _tuple(stride, n, "stride")):
        raise ValueError(f"[{op}] padding='same' is not supported for strided convolutions")
    d = _tuple(dilation, n, "dilation")
    total = [d[i] * (weight.shape[2 + i] - 1) for i in range(n)]
    extra = []
    for i in reversed(range(n)):  # F.pad order: last dim first
        extra += [0, total[i] % 2]
    if any(extra):
        input = pad(input, extra)
    return input, [t // 2 for t in total]


def _conv(n, input, weight, bias, stride, padding, dilation, groups):
    if isinstance(padding, str) and padding == "same":
        input, padding = _same_padding(input, weight, stride, dilation, n, f"conv{n}d")
    fn = (_nnf.conv1d, _nnf.conv2d, _nnf.conv3d)[n - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


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


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    return _nnf.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    return _nnf.avg_pool3d(
        input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def adaptive_avg_pool3d(input, output_size):
    return _nnf.adaptive_avg_pool3d(input, output_size)


def adaptive_avg_pool2d(input, output_size):
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if size == (1, 1):  # global average pooling: a plain mean, common enough to special-case
        return input.mean((-2, -1), keepdim=True)
    return _nnf.adaptive_avg_pool2d(input, output_size)


# ---- normalization -----------------------------------------------------------------------------


def _float_params(input, *params):
    """Whether a normalization runs in float32 for input: PyTorch's CPU kernels take a bfloat16
    or float16 input with float32 weight, bias and running statistics (what a model under
    torch.autocast(device_type="cpu") feeds its norm layers), compute in float32 and return the
    input's dtype. Any other dtype mismatch stays an error of the op."""
    if input.dtype not in (_C.dtype.bfloat16, _C.dtype.float16):
        return False
    defined = [p for p in params if p is not None]
    return bool(defined) and all(p.dtype == _C.dtype.float32 for p in defined)


def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    if _float_params(input, running_mean, running_var, weight, bias):
        out = _nnf.batch_norm(
            input.float(), running_mean, running_var, weight, bias, training, momentum, eps
        )
        return out.to(input.dtype)
    return _nnf.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    # A bf16/f16 input with float32 parameters is the C++ entry's: the native mixed-type kernel
    # for bf16 on the CPU, else computed in float32 and cast back.
    return _nnf.layer_norm(input, tuple(normalized_shape), weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    if _float_params(input, weight):
        return _nnf.rms_norm(input.float(), tuple(normalized_shape), weight, eps).to(input.dtype)
    return _nnf.rms_norm(input, tuple(normalized_shape), weight, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if _float_params(input, weight, bias):
        return _nnf.group_norm(input.float(), num_groups, weight, bias, eps).to(input.dtype)
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
    """Rows of weight at input. max_norm renormalises, in place, the looked-up rows whose
    norm_type-norm exceeds it (as PyTorch); scale_grad_by_freq divides each row's gradient by how
    often its index occurs in input. sparse=True: weight.grad is a sparse COO tensor holding
    the looked-up rows (oneflow_like.sparse; weight must be an nn.Parameter)."""
    if max_norm is not None:
        with no_grad():
            rows = input.reshape(-1).unique()
            w = weight.index_select(0, rows)
            norms = w.norm(norm_type, 1, keepdim=True)
            scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), _C.ones_like(norms))
            weight[rows] = w * scale
    if sparse:
        from oneflow_like.sparse import _embedding

        out = _embedding(input, weight, padding_idx)
    else:
        out = _nnf.embedding(input, weight, padding_idx)
    if scale_grad_by_freq and weight.requires_grad:
        counts = input.reshape(-1).bincount(minlength=weight.shape[0]).to(out.dtype)
        inv = (1.0 / counts.clamp(min=1)).index_select(0, input.reshape(-1)).reshape(input.shape)
        detached = out.detach()
        out = detached + (out - detached) * inv.unsqueeze(-1)  # same values, gradient / count
    return out


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Sums, means or maxima of bags of embedding rows: a 2-D input is one bag per row; a 1-D
    input is cut into bags at `offsets`. padding_idx entries are left out of their bag."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}')"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets has to be None if input is 2D")
        B, L = input.shape
        idx = input
        valid = _C.ones(B, L, dtype=_C.bool, device=input.device)
        psw = per_sample_weights
    elif input.dim() == 1:
        if offsets is None or offsets.dim() != 1:
            raise ValueError("embedding_bag: offsets has to be a 1D tensor for a 1D input")
        off = [int(v) for v in offsets.tolist()]
        n = input.shape[0]
        if off and off[0] != 0:
            raise ValueError(f"embedding_bag: offsets[0] has to be 0, got {off[0]}")
        bounds = off + ([] if include_last_offset else [n])
        B = len(bounds) - 1
        lens = [bounds[i + 1] - bounds[i] for i in range(B)]
        if any(v < 0 for v in lens) or (bounds and bounds[-1] > n):
            raise ValueError(f"embedding_bag: offsets {off} do not cut an input of {n} indices")
        L = max(lens + [1])
        steps = np.arange(L)
        lens_np = np.asarray(lens, dtype=np.int64).reshape(-1, 1)
        mask = steps < lens_np  # (B, L): which slots of each bag hold an index
        pos = np.where(mask, np.asarray(bounds[:-1], dtype=np.int64).reshape(-1, 1) + steps, 0)
        pos_t = _C.tensor(pos, device=input.device)
        idx = (
            input.index_select(0, pos_t.reshape(-1)).reshape(B, L)
            if n
            else _C.zeros(B, L, dtype=_C.int64, device=input.device)
        )
        valid = _C.tensor(mask, device=input.device)
        psw = None
        if per_sample_weights is not None:
            psw = per_sample_weights.index_select(0, pos_t.reshape(-1)).reshape(B, L)
    else:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D, got {input.dim()}D")
    if padding_idx is not None:
        valid = valid & (idx != (padding_idx % weight.shape[0]))
    rows = embedding(idx, weight, None, max_norm, norm_type, scale_grad_by_freq, sparse)
    m = valid.unsqueeze(-1).to(rows.dtype)
    if mode == "max":
        neg = _C.full_like(rows, float("-inf"))
        out = _C.where(valid.unsqueeze(-1), rows, neg).amax(1)
        return _C.where(valid.any(1, keepdim=True), out, _C.zeros_like(out))  # empty bags: 0
    if psw is not None:
        rows = rows * psw.unsqueeze(-1)
    out = (rows * m).sum(1)
    if mode == "mean":
        out = out / m.sum(1).clamp(min=1)
    return out


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
# Each takes PyTorch's arguments (the legacy size_average/reduce flags too) and reduces with
# `reduction`. Losses with a kernel call it; the rest are compositions of differentiable ops, so
# autograd gives their gradients.


def _same_size(fn, input, target):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"[{fn}] target size {tuple(target.shape)} must be the same as the input size "
            f"{tuple(input.shape)}"
        )


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
    """Class indices (N,) / (N, d1, ...) or class probabilities (same shape as input) as target."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(
            f"[cross_entropy] label_smoothing must be in [0, 1], got {label_smoothing}"
        )
    return _nnf.cross_entropy(
        input,
        target,
        weight=weight,
        ignore_index=ignore_index,
        reduction=_reduction("cross_entropy", size_average, reduce, reduction),
        label_smoothing=label_smoothing,
    )


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    return _nnf.nll_loss(
        input,
        target,
        weight=weight,
        ignore_index=ignore_index,
        reduction=_reduction("nll_loss", size_average, reduce, reduction),
    )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _nnf.mse_loss(
        input, target, reduction=_reduction("mse_loss", size_average, reduce, reduction)
    )


def _autocast_args(op_name, input, target):
    """(input, target) as autocast's lists want them for a loss composed here (f32 under
    autocast, as PyTorch's <op_name> kernel is listed); unchanged outside autocast."""
    return _C._autocast_args(op_name, [input, target])


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction("l1_loss", size_average, reduce, reduction)
    input, target = _autocast_args("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta (l1 when beta = 0)."""
    reduction = _reduction("smooth_l1_loss", size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"[smooth_l1_loss] beta must be >= 0, got {beta}")
    input, target = _autocast_args("smooth_l1_loss", input, target)
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    return _reduce(_C.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta)."""
    reduction = _reduction("huber_loss", None, None, reduction)
    if delta <= 0:
        raise ValueError(f"[huber_loss] delta must be > 0, got {delta}")
    input, target = _autocast_args("huber_loss", input, target)
    d = (input - target).abs()
    return _reduce(_C.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """-w (y log x + (1 - y) log(1 - x)), each log clamped at -100 as PyTorch does."""
    reduction = _reduction("binary_cross_entropy", size_average, reduce, reduction)
    _same_size("binary_cross_entropy", input, target)
    input, target = _autocast_args("binary_cross_entropy", input, target)
    log_x = input.log().clamp(min=-100.0)
    log_1mx = (1.0 - input).log().clamp(min=-100.0)
    loss = -(target * log_x + (1.0 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    _same_size("binary_cross_entropy_with_logits", input, target)
    return _nnf.binary_cross_entropy_with_logits(
        input,
        target,
        weight=weight,
        reduction=_reduction("binary_cross_entropy_with_logits", size_average, reduce, reduction),
        pos_weight=pos_weight,
    )


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise target * (log target - input) (input holds log-probabilities; with log_target
    the target does too). reduction="batchmean" divides the sum by the batch size."""
    if reduction == "batchmean":
        red = "sum"
    else:
        red = _reduction("kl_div", size_average, reduce, reduction)
    input, target = _autocast_args("kl_div", input, target)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = _C.where(positive, target, 1.0)  # 0 log 0 = 0, with a finite gradient
        loss = target * safe.log() - target * input
    out = _reduce(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """exp(input) - target * input (log_input) or input - target * log(input + eps); full adds
    Stirling's term target log target - target + 0.5 log(2 pi target) where target > 1."""
    reduction = _reduction("poisson_nll_loss", size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = _C.where(target > 1, target, 1.0)
        stirling = safe * safe.log() - safe + 0.5 * (2.0 * math.pi * safe).log()
        loss = loss + _C.where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi if full); var is clamped at eps
    with the gradient passing through the clamp, as in PyTorch. var may have one dimension less
    than input, or a last dimension of 1 (one variance shared by the last dimension)."""
    reduction = _reduction("gaussian_nll_loss", None, None, reduction)
    in_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape != in_shape:
        if in_shape[:-1] == var_shape:
            var = var.unsqueeze(-1)
        elif not (in_shape[:-1] == var_shape[:-1] and var_shape[-1:] == (1,)):
            raise ValueError(
                f"[gaussian_nll_loss] var is of incorrect size {var_shape} for input {in_shape}"
            )
    if var.numel() and float(var.detach().amin()) < 0:
        raise ValueError("[gaussian_nll_loss] var has negative entry/entries")
    with no_grad():
        lift = var.clamp(min=eps) - var  # 0 where var >= eps: the clamp leaves no gradient trace
    var = var + lift
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction("margin_ranking_loss", size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise ValueError(
            f"[margin_ranking_loss] all inputs must have the same number of dimensions, got "
            f"{tuple(input1.shape)}, {tuple(input2.shape)} and target {tuple(target.shape)}"
        )
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0.0), reduction)


def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """input where target == 1, max(0, margin - input) where target == -1."""
    reduction = _reduction("hinge_embedding_loss", size_average, reduce, reduction)
    at_margin = _C.where(target != 1, (margin - input).clamp(min=0.0), 0.0)
    at_self = _C.where(target != -1, input, 0.0)
    return _reduce(at_margin + at_self, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input))."""
    reduction = _reduction("soft_margin_loss", size_average, reduce, reduction)
    return _reduce(_C.softplus(-target * input, 1.0, 20.0), reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """-mean over classes of y log sigmoid(x) + (1 - y) log sigmoid(-x), per sample."""
    reduction = _reduction("multilabel_soft_margin_loss", size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.mean(input.dim() - 1), reduction)


def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """Per sample: sum over i != y of max(0, margin - x[y] + x[i])^p / C (times weight[y])."""
    reduction = _reduction("multi_margin_loss", size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError(f"[multi_margin_loss] only p == 1 and p == 2 are supported, got {p}")
    squeeze = input.dim() == 1
    if squeeze:
        input, target = input.unsqueeze(0), target.reshape(1)
    if input.dim() != 2 or target.dim() != 1 or target.shape[0] != input.shape[0]:
        raise ValueError(
            f"[multi_margin_loss] expects input (N, C) or (C,) and target (N,), got "
            f"{tuple(input.shape)} and {tuple(target.shape)}"
        )
    c = input.shape[1]
    idx = target.reshape(-1, 1)
    x_y = _C.gather(input, 1, idx)
    z = (margin - x_y + input).clamp(min=0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * _C.gather(weight.reshape(1, -1).expand(input.shape[0], c), 1, idx)
    not_target = _C.one_hot(target, c).logical_not().to(input.dtype)
    loss = (z * not_target).sum(1) / c
    return _reduce(loss.reshape(()) if squeeze and reduction == "none" else loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample: sum over target classes j and non-target classes i of
    max(0, 1 - (x[j] - x[i])) / C. target holds class indices, ended by the first -1."""
    reduction = _reduction("multilabel_margin_loss", size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape) or input.dim() not in (1, 2):
        raise ValueError(
            f"[multilabel_margin_loss] expects input and target of the same shape (C,) or (N, C), "
            f"got {tuple(input.shape)} and {tuple(target.shape)}"
        )
    squeeze = input.dim() == 1
    x = input.reshape(1, -1) if squeeze else input
    labels = target.reshape(1, -1).numpy() if squeeze else target.numpy()  # data: read on host
    n, c = labels.shape
    is_target = np.zeros((n, c), dtype=bool)
    for row, lab in zip(is_target, labels):
        for j in lab:
            if j < 0:
                break
            if j >= c:
                raise ValueError(
                    f"[multilabel_margin_loss] target class {j} is out of range [0, {c})"
                )
            row[j] = True
    pairs = _C.from_numpy(is_target[:, :, None] & ~is_target[:, None, :]).to(x.device)
    hinge = (1.0 - x.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0.0)  # [n, j, i]
    loss = (hinge * pairs.to(x.dtype)).sum((1, 2)) / c
    return _reduce(loss.reshape(()) if squeeze and reduction == "none" else loss, reduction)


def cosine_embedding_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    reduction = _reduction("cosine_embedding_loss", size_average, reduce, reduction)
    eps = 1e-12
    d = input1.dim() - 1
    dot = (input1 * input2).sum(d)
    cos = dot / ((input1 * input1).sum(d) + eps).mul((input2 * input2).sum(d) + eps).sqrt()
    pos = _C.where(target == 1, 1.0 - cos, 0.0)
    neg = _C.where(target == -1, (cos - margin).clamp(min=0.0), 0.0)
    return _reduce(pos + neg, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    return _C.norm(x1 - x2 + eps, p, -1, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 . x2 / max(||x1|| ||x2||, eps) along dim."""
    dot = (x1 * x2).sum(dim)
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    return dot / (n1 * n2).clamp(min=eps * eps).sqrt()


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """max(d(a, p) - d(a, n) + margin, 0) with d the p-norm pairwise distance; swap uses
    min(d(a, n), d(p, n))."""
    reduction = _reduction("triplet_margin_loss", size_average, reduce, reduction)
    if not anchor.dim() == positive.dim() == negative.dim():
        raise ValueError(
            f"[triplet_margin_loss] anchor, positive and negative must have the same number of "
            f"dimensions, got {tuple(anchor.shape)}, {tuple(positive.shape)}, "
            f"{tuple(negative.shape)}"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp(min=0.0), reduction)


def triplet_margin_with_distance_loss(
    anchor,
    positive,
    negative,
    *,
    distance_function=None,
    margin=1.0,
    swap=False,
    reduction="mean",
):
    """triplet_margin_loss with any distance (pairwise_distance by default)."""
    reduction = _reduction("triplet_margin_with_distance_loss", None, None, reduction)
    if margin <= 0:
        raise ValueError(f"[triplet_margin_with_distance_loss] margin must be > 0, got {margin}")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, dist(positive, negative))
    return _reduce((d_pos - d_neg + margin).clamp(min=0.0), reduction)


# ---- attention ---------------------------------------------------------------------------------


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
):
    """softmax(q k^T * scale + mask) v; a bool attn_mask is True where attention is allowed;
    attn_mask may be an nn.attention.bias.CausalBias. enable_gqa: key/value may have fewer heads
    (dim -3) than query, a divisor of its count. The backend (the fused op or the math
    composite) follows nn.attention.sdpa_kernel's state (see nn/attention)."""
    backend = _attention._choose(query, key, value)
    if isinstance(attn_mask, _attention.bias.CausalBias):
        if is_causal:
            raise ValueError(
                "[scaled_dot_product_attention] CausalBias should not be used with causal=True"
            )
        attn_mask._check(query, key)
        attn_mask = attn_mask.materialize(query.device)
    return _C._scaled_dot_product_attention_routed(
        query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, backend
    )


# ---- transposed convolution, resampling, pixel shuffle ----------------------------------------
# Composites of ordinary ops (gradients, graphs and devices come with them): a transposed
# convolution is a stride-1 convolution of the zero-interleaved input with the flipped,
# channel-swapped weights; interpolation gathers rows per spatial dim (index_select) and blends.


def _tuple(v, n, name):
    t = tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
    if len(t) != n:
        raise ValueError(f"{name} must be an int or {n} ints, got {v}")
    return t


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n):
    op = f"conv_transpose{n}d"
    if input.dim() != n + 2 or weight.dim() != n + 2:
        raise RuntimeError(
            f"[{op}] expected a {n + 2}-D input and weight, got input {tuple(input.shape)} and "
            f"weight {tuple(weight.shape)}"
        )
    s, p = _tuple(stride, n, "stride"), _tuple(padding, n, "padding")
    op_, d = _tuple(output_padding, n, "output_padding"), _tuple(dilation, n, "dilation")
    cin, cout_g, k = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    if input.shape[1] != cin or cin % groups:
        raise RuntimeError(
            f"[{op}] input has {input.shape[1]} channels, weight {tuple(weight.shape)} expects "
            f"{cin} (divisible by groups={groups})"
        )
    for i in range(n):
        if op_[i] >= max(s[i], d[i]):
            raise RuntimeError(
                f"[{op}] output_padding {op_} must be smaller than stride {s} or dilation {d}"
            )
    x = input
    for i in range(n):  # insert stride - 1 zeros between input elements along each spatial dim
        if s[i] > 1:
            dim = 2 + i
            L = x.shape[dim]
            x = _interleave(x, dim, s[i]).narrow(dim, 0, (L - 1) * s[i] + 1)
    pads = []
    for i in reversed(range(n)):  # F.pad order: last dim first
        lo = d[i] * (k[i] - 1) - p[i]
        pads += [lo, lo + op_[i]]
    if any(v < 0 for v in pads):  # padding larger than the kernel reach: crop
        sl = [slice(None), slice(None)]
        for i in range(n):
            lo, hi = pads[2 * (n - 1 - i)], pads[2 * (n - 1 - i) + 1]
            sl.append(slice(-lo if lo < 0 else 0, x.shape[2 + i] + hi if hi < 0 else None))
        x = x[tuple(sl)]
        pads = [max(v, 0) for v in pads]
    if any(pads):
        x = pad(x, pads)
    w = weight.reshape([groups, cin // groups, cout_g] + list(k)).transpose(1, 2)
    w = w.reshape([groups * cout_g, cin // groups] + list(k)).flip(list(range(2, n + 2)))
    conv = (conv1d, conv2d, conv3d)[n - 1]
    return conv(x, w, bias, 1, 0, d, groups)


def _interleave(x, dim, s):
    """x with s - 1 zeros after every element along dim (length L * s)."""
    moved = x.transpose(dim, -1)
    z = _C.zeros(*(list(moved.shape) + [s - 1]), dtype=x.dtype, device=x.device)
    y = _C.cat([moved.unsqueeze(-1), z], -1).reshape(list(moved.shape[:-1]) + [moved.shape[-1] * s])
    return y.transpose(dim, -1)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1
    )


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2
    )


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    return _conv_transpose(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 3
    )


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension ({c}) to be divisible by the "
            f"square of upscale_factor ({r * r})"
        )
    x = input.reshape(lead + [c // (r * r), r, r, h, w])
    m = len(lead)
    x = x.permute(list(range(m)) + [m, m + 3, m + 1, m + 4, m + 2])
    return x.reshape(lead + [c // (r * r), h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height ({h}) and width ({w}) to be divisible by "
            f"downscale_factor ({r})"
        )
    m = len(lead)
    x = input.reshape(lead + [c, h // r, r, w // r, r])
    x = x.permute(list(range(m)) + [m, m + 2, m + 4, m + 1, m + 3])
    return x.reshape(lead + [c * r * r, h // r, w // r])


_INTERP_DIMS = {
    "nearest": None,
    "nearest-exact": None,
    "linear": 1,
    "bilinear": 2,
    "bicubic": 2,
    "trilinear": 3,
    "area": None,
}


def _antialias_weights(L, O, scale, align_corners, mode):
    """(O, L) resampling matrix of antialiased bilinear/bicubic interpolation (PyTorch's and
    PIL's separable filter): output i averages the inputs within `support` of its centre,
    the filter (triangle, or cubic with A = -0.5) stretched by the downscale factor, weights
    normalized to 1."""
    if align_corners:
        scale = (L - 1) / (O - 1) if O > 1 else 0.0
    taps = 2 if mode == "bilinear" else 4
    stretch = scale if scale >= 1.0 else 1.0
    support = taps / 2 * stretch
    x = np.arange(L, dtype=np.float64)
    center = scale * (np.arange(O, dtype=np.float64) + 0.5)
    lo = np.maximum((center - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((center + support + 0.5).astype(np.int64), L)
    d = np.abs((x[None, :] - center[:, None] + 0.5) / stretch)
    if mode == "bilinear":
        w = np.maximum(0.0, 1.0 - d)
    else:
        a = -0.5
        w = np.where(
            d < 1,
            ((a + 2) * d - (a + 3)) * d * d + 1,
            np.where(d < 2, (((d - 5) * d + 8) * d - 4) * a, 0.0),
        )
    w = np.where((x[None, :] >= lo[:, None]) & (x[None, :] < hi[:, None]), w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total != 0)


def _cubic_weights(t, A=-0.75):
    """Keys' cubic convolution weights (A = -0.75, PyTorch's) of the 4 taps at offsets -1..2 for
    fractional positions t (NumPy)."""

    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """F.interpolate for modes nearest, nearest-exact, linear (3-D input), bilinear and bicubic
    (4-D; antialias=True: PyTorch's separable antialiasing filter, one resampling matrix per
    dim), trilinear (5-D) and area (adaptive average pooling), with PyTorch's source-index rules
    (align_corners, scale_factor used as given unless recompute_scale_factor). Each spatial dim
    is interpolated in turn with index_select and weights, so gradients and every device come
    with the ops."""
    if mode not in _INTERP_DIMS:
        raise NotImplementedError(
            f"interpolate: mode '{mode}' is not supported (nearest, nearest-exact, linear, "
            "bilinear, bicubic, trilinear, area)"
        )
    if antialias and mode not in ("bilinear", "bicubic"):
        raise NotImplementedError(
            "Anti-alias option is only supported for bilinear and bicubic modes"
        )
    n = input.dim() - 2
    want = _INTERP_DIMS[mode]
    if n < 1 or (want is not None and want != n):
        raise ValueError(
            f"interpolate: mode '{mode}' expects a {(want or 1) + 2}-D input, got {input.dim()}-D"
        )
    if (mode.startswith("nearest") or mode == "area") and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: linear | "
            "bilinear | bicubic | trilinear"
        )
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = list(input.shape[2:])
    if size is not None:
        out_sizes = list(_tuple(size, n, "size"))
        scales = [None] * n
    else:
        sf = _tuple(scale_factor, n, "scale_factor")
        out_sizes = [int(math.floor(in_sizes[i] * float(sf[i]))) for i in range(n)]
        scales = [None if recompute_scale_factor else float(v) for v in sf]
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[n - 1]
        return pool(input, out_sizes if n > 1 else out_sizes[0])
    x = input
    for i in range(n):
        dim, L, O = 2 + i, in_sizes[i], out_sizes[i]
        if O <= 0:
            raise ValueError(f"interpolate: output size {out_sizes} must be positive")
        scale = (1.0 / scales[i]) if scales[i] else L / O
        if antialias:
            w = _antialias_weights(L, O, scale, align_corners, mode)
            w = _C.tensor(w, dtype=x.dtype, device=x.device)
            x = (x.transpose(dim, -1) @ w.t()).transpose(dim, -1)
            continue
        pos = np.arange(O, dtype=np.float64)
        if mode == "nearest":
            idx = np.minimum(np.floor(pos * scale).astype(np.int64), L - 1)
            x = x.index_select(dim, _C.tensor(idx, device=x.device))
            continue
        if mode == "nearest-exact":
            idx = np.minimum(np.floor((pos + 0.5) * scale).astype(np.int64), L - 1)
            x = x.index_select(dim, _C.tensor(idx, device=x.device))
            continue
        if align_corners:
            src = pos * ((L - 1) / (O - 1)) if O > 1 else np.zeros(O)
        elif mode == "bicubic":  # the cubic source index is not clamped at 0
            src = (pos + 0.5) * scale - 0.5
        else:
            src = np.maximum((pos + 0.5) * scale - 0.5, 0.0)
        if mode == "bicubic":
            base = np.floor(src).astype(np.int64)
            shape = [O] + [1] * (n - 1 - i)
            acc = None
            for k, wk in zip(range(-1, 3), _cubic_weights(src - base)):
                idx = np.clip(base + k, 0, L - 1)  # taps outside the input read its border
                term = x.index_select(dim, _C.tensor(idx, device=x.device)) * _C.tensor(
                    wk.reshape(shape), dtype=x.dtype, device=x.device
                )
                acc = term if acc is None else acc + term
            x = acc
            continue
        i0 = np.minimum(np.floor(src).astype(np.int64), L - 1)
        i1 = np.minimum(i0 + 1, L - 1)
        lam = (src - i0).reshape([O] + [1] * (n - 1 - i))
        a = x.index_select(dim, _C.tensor(i0, device=x.device))
        b = x.index_select(dim, _C.tensor(i1, device=x.device))
        w = _C.tensor(lam, dtype=x.dtype, device=x.device)
        x = a + (b - a) * w
    return x


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- channel dropout, instance norm, bilinear, unfold/fold ---------------------------------


def _feature_dropout(input, p, training, inplace, n, name):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"{name}: Expected {n + 1}D (unbatched) or {n + 2}D (batched) input, but received "
            f"input of size {tuple(input.shape)}"
        )
    if not training or p == 0:
        return input
    lead = input.dim() - n  # (C,) or (N, C): one draw per channel
    shape = list(input.shape[:lead]) + [1] * n
    keep = (_C.rand(*shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    out = input * keep * (0.0 if p == 1 else 1.0 / (1.0 - p))
    return _maybe_inplace(input, out, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _alpha_dropout(input, p, training, inplace, feature):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError(
            "feature_alpha_dropout: Feature dropout requires at least 2 dimensions in the input "
            f"(N, C, *), but got input of size {tuple(input.shape)}"
        )
    if p == 1:
        return _maybe_inplace(input, input * 0.0, inplace)
    # feature: one draw per (sample, channel), shared by every position of that channel
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2) if feature else list(input.shape)
    keep = (_C.rand(*shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a_neg = -_SELU_ALPHA * _SELU_SCALE  # the value SELU saturates to
    a = 1.0 / math.sqrt((a_neg * a_neg * p + 1) * (1 - p))
    b = -a * a_neg * p
    out = (input * keep + (1 - keep) * a_neg) * a + b
    return _maybe_inplace(input, out, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalising mean and variance."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Normalises each (sample, channel) over its spatial dims; with running stats, updates them
    (unbiased variance, averaged over the batch) when use_input_stats."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm expects a (N, C, *) input, got {tuple(input.shape)}")
    dims = list(range(2, input.dim()))
    bshape = [1, -1] + [1] * len(dims)
    if use_input_stats:
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, unbiased=False, keepdim=True)
        if running_mean is not None or running_var is not None:
            n = 1
            for d in dims:
                n *= input.shape[d]
            with no_grad():
                if running_mean is not None:
                    m = mean.detach().reshape(input.shape[0], -1).mean(0)
                    running_mean.mul_(1 - momentum).add_(m * momentum)
                if running_var is not None:
                    v = var.detach().reshape(input.shape[0], -1).mean(0) * (n / max(n - 1, 1))
                    running_var.mul_(1 - momentum).add_(v * momentum)
    else:
        mean = running_mean.reshape(bshape)
        var = running_var.reshape(bshape)
    out = (input - mean) / _C.sqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(bshape)
    if bias is not None:
        out = out + bias.reshape(bshape)
    return out


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b for A (out, in1, in2)."""
    from oneflow_like._contract import einsum

    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def channel_shuffle(input, groups):
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = list(input.shape[2:])
    return input.reshape([n, groups, c // groups] + rest).transpose(1, 2).reshape([n, c] + rest)


def adaptive_avg_pool1d(input, output_size):
    osz = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, osz)).squeeze(-2)


def _patch_index(C, H, W, kernel_size, dilation, padding, stride):
    """Flat indices into the padded (C, Hp, Wp) image of every (c, ki, kj) row and output column."""
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    dh, dw = _tuple(dilation, 2, "dilation")
    ph, pw = _tuple(padding, 2, "padding")
    sh, sw = _tuple(stride, 2, "stride")
    Hp, Wp = H + 2 * ph, W + 2 * pw
    oh, ow = (Hp - dh * (kh - 1) - 1) // sh + 1, (Wp - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"unfold/fold: the padded input {Hp}x{Wp} is smaller than the dilated kernel "
            f"{dh * (kh - 1) + 1}x{dw * (kw - 1) + 1}"
        )
    c, i, j = np.meshgrid(np.arange(C), np.arange(kh), np.arange(kw), indexing="ij")
    rows = (c * Hp * Wp + i * dh * Wp + j * dw).reshape(-1, 1)
    y, x = np.meshgrid(np.arange(oh) * sh, np.arange(ow) * sw, indexing="ij")
    cols = (y * Wp + x).reshape(1, -1)
    return (rows + cols).reshape(-1), (ph, pw), (Hp, Wp), oh * ow


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C, H, W) -> (N, C kh kw, L) of sliding blocks."""
    if input.dim() != 4:
        raise NotImplementedError(f"unfold: only 4-D inputs are supported, got {input.dim()}-D")
    N, C, H, W = input.shape
    idx, (ph, pw), (Hp, Wp), L = _patch_index(C, H, W, kernel_size, dilation, padding, stride)
    x = pad(input, (pw, pw, ph, ph)) if ph or pw else input
    flat = x.reshape(N, C * Hp * Wp)
    cols = flat.index_select(1, _C.tensor(idx, device=input.device))
    return cols.reshape(N, -1, L)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, the adjoint of unfold: (N, C kh kw, L) -> (N, C, H, W), overlaps summed."""
    oh_, ow_ = _tuple(output_size, 2, "output_size")
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    if input.dim() != 3:
        raise NotImplementedError(
            f"fold: only 3-D (batched) inputs are supported, got {input.dim()}-D"
        )
    N, CK, L = input.shape
    if CK % (kh * kw):
        raise RuntimeError(
            f"fold: expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={CK} and kernel_size={(kh, kw)}"
        )
    C = CK // (kh * kw)
    idx, (ph, pw), (Hp, Wp), L2 = _patch_index(C, oh_, ow_, kernel_size, dilation, padding, stride)
    if L2 != L:
        raise RuntimeError(
            f"fold: expected input's dimension 2 to match the calculated number of sliding blocks "
            f"{L2}, but got input.size(2)={L}"
        )
    out = _C.zeros(N, C * Hp * Wp, dtype=input.dtype, device=input.device)
    out = out.index_add(1, _C.tensor(idx, device=input.device), input.reshape(N, -1))
    out = out.reshape(N, C, Hp, Wp)
    return out[:, :, ph : ph + oh_, pw : pw + ow_] if ph or pw else out


from oneflow_like.nn.functional_more import *  # noqa: E402,F401,F403
from oneflow_like.nn.functional_grid import *  # noqa: E402,F401,F403
from oneflow_like.nn.functional_ctc import *  # noqa: E402,F401,F403
from oneflow_like.nn.functional_compat import *  # noqa: E402,F401,F403  (issue 19)
