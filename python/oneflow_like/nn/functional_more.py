"""nn.functional members composed from other functional ops (autograd, every device and nn.Graph
tracing come with them): the in-place activations, lp_pool1d/2d, max_poolNd_with_indices,
max_unpool1d/2d/3d, adaptive_max_pool1d/2d/3d, local_response_norm, pdist and gumbel_softmax. Re-exported by nn.functional."""
import itertools

import numpy as np

import oneflow_like as flow
from oneflow_like.nn import functional as F


# ---- in-place activations (torch.nn.functional.<name>_) --------------------------------------


def _into(input, fn, *args):
    """fn(input, *args) written into input. fn runs on input + 0 (a new tensor whose backward
    needs nothing saved): the backward of fn may need the values
    that the write replaces."""
    input.copy_(fn(input + 0.0, *args))
    return input


def relu_(input):
    return F.relu(input, inplace=True)


def elu_(input, alpha=1.0):
    return _into(input, F.elu, alpha)


def celu_(input, alpha=1.0):
    return _into(input, F.celu, alpha)


def selu_(input):
    return _into(input, F.selu)


def leaky_relu_(input, negative_slope=0.01):
    return _into(input, F.leaky_relu, negative_slope)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _into(input, F.hardtanh, min_val, max_val)


def threshold_(input, threshold, value):
    return _into(input, F.threshold, threshold, value)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _into(input, F.rrelu, lower, upper, training)


# ---- pooling and normalization -----------------------------------------------------------------


def _lp_from_mean(mean_pow, window, norm_type):
    """(window * mean(x^p))^(1/p), with the negative means of odd p clamped to 0 as torch."""
    return (mean_pow.sign() * F.relu(mean_pow.abs()) * window) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window: (sum over the window of x^p)^(1/p)."""
    k = kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size
    mean = F.avg_pool1d(input**norm_type, k, stride, 0, ceil_mode)
    return _lp_from_mean(mean, k, norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each 2-d window: (sum over the window of x^p)^(1/p)."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    mean = F.avg_pool2d(input**norm_type, (kh, kw), stride, 0, ceil_mode)
    return _lp_from_mean(mean, kh * kw, norm_type)


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    """max_pool1d and the flat index of each maximum (as a 2-d pool over a height of 1)."""
    k, p, d = _tuple(kernel_size, 1)[0], _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    s = k if stride is None or stride == [] else _tuple(stride, 1)[0]
    out, idx = F.max_pool2d(
        input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices=True
    )
    return out.squeeze(-2), idx.squeeze(-2)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    return F.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=True
):
    return F.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n):
    """Scatters input into zeros at `indices` (flat over the last n dims, as max_poolNd's
    return_indices gives them)."""
    k, p = _tuple(kernel_size, n), _tuple(padding, n)
    s = k if stride is None else _tuple(stride, n)
    lead = tuple(input.shape[: input.dim() - n])
    if output_size is None:
        size = tuple((i - 1) * st - 2 * pd + kk for i, st, pd, kk in zip(input.shape[-n:], s, p, k))
    else:
        size = tuple(output_size)[-n:]
        if len(tuple(output_size)) not in (n, n + len(lead)):
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + len(lead)} elements, "
                f"but it has a length of '{len(tuple(output_size))}'"
            )
    total = int(np.prod(size))
    flat_in = input.reshape(*lead, -1)
    out = flow.zeros(*lead, total, dtype=input.dtype, device=input.device)
    out = out.scatter(len(lead), indices.reshape(*lead, -1), flat_in)
    return out.reshape(*lead, *size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: maxima back at their positions, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: maxima back at their positions, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: maxima back at their positions, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _adaptive_max_pool(input, output_size, return_indices, n):
    """Output cell i of each pooled dim takes input [floor(i I / O), ceil((i + 1) I / O)); the
    index is flat over the input's last n dims (first maximum on ties)."""
    in_sizes = tuple(input.shape[-n:])
    out = _tuple(output_size, n)
    out = tuple(i if o is None else int(o) for o, i in zip(out, in_sizes))
    if input.dim() not in (n + 1, n + 2):
        raise ValueError(
            f"adaptive_max_pool{n}d(): Expected {n + 1}D or {n + 2}D tensor, but got "
            f"{tuple(input.shape)}"
        )
    bounds = [
        [(i * size // o, -(-(i + 1) * size // o)) for i in range(o)]
        for o, size in zip(out, in_sizes)
    ]
    strides = [int(np.prod(in_sizes[d + 1 :])) for d in range(n)]
    lead = tuple(input.shape[:-n])
    values, indices = [], []
    for cell in itertools.product(*bounds):
        window = input[(Ellipsis,) + tuple(slice(s, e) for s, e in cell)]
        v, local = window.reshape(*lead, -1).max(-1)
        values.append(v)
        if return_indices:
            flat, rest = 0, local
            widths = [e - s for s, e in cell]
            for d in range(n - 1, -1, -1):  # unravel the window index, re-ravel in the input
                flat = flat + (rest % widths[d] + cell[d][0]) * strides[d]
                rest = rest // widths[d]
            indices.append(flat)
    result = flow.stack(values, -1).reshape(*lead, *out)
    if not return_indices:
        return result
    return result, flow.stack(indices, -1).reshape(*lead, *out)


def _adaptive_max_pool_fn(n, with_indices):
    def fn(input, output_size, return_indices=with_indices):
        return _adaptive_max_pool(input, output_size, return_indices or with_indices, n)

    fn.__name__ = fn.__qualname__ = f"adaptive_max_pool{n}d" + (
        "_with_indices" if with_indices else ""
    )
    fn.__doc__ = f"Max over adaptive windows of the last {n} dims (and their flat indices)."
    return fn


adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = (
    _adaptive_max_pool_fn(n, False) for n in (1, 2, 3)
)
(
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices,
) = (_adaptive_max_pool_fn(n, True) for n in (1, 2, 3))


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over the `size` channels around each one)^beta; the
    window is zero-padded, size // 2 channels before and (size - 1) // 2 after."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    n, c = input.shape[0], input.shape[1]
    sq = (input * input).reshape(n, 1, c, -1)  # channels as the pooled height
    sq = F.pad(sq, (0, 0, size // 2, (size - 1) // 2))
    mean = F.avg_pool2d(sq, (size, 1), stride=1).reshape(tuple(input.shape))
    return input / (mean * alpha + k) ** beta


def pdist(input, p=2):
    """The p-norm distances between the rows of an (N, M) input, pairs i < j in row-major order
    (N (N - 1) / 2 values)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    dev = input.device
    diff = input[flow.tensor(i, device=dev)] - input[flow.tensor(j, device=dev)]
    if p == 0:
        return (diff != 0).to(input.dtype).sum(1)
    return flow.norm(diff, p, 1)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); hard: the one-hot of its argmax in the
    forward pass and the soft sample's gradient in the backward pass (straight-through)."""
    u = flow.rand(*logits.shape, dtype=logits.dtype, device=logits.device)
    gumbels = -(-(1.0 - u).log()).log()  # -log(Exp(1)), 1 - u in (0, 1]
    y_soft = F.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim)
    n = logits.shape[dim]
    y_hard = F.one_hot(index, n).to(logits.dtype).movedim(-1, dim % logits.dim())
    return y_hard - y_soft.detach() + y_soft


__all__ = [
    "relu_",
    "elu_",
    "celu_",
    "selu_",
    "leaky_relu_",
    "hardtanh_",
    "threshold_",
    "rrelu_",
    "lp_pool1d",
    "lp_pool2d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "local_response_norm",
    "pdist",
    "gumbel_softmax",
]
