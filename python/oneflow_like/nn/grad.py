"""torch.nn.grad: the gradients of a convolution with respect to its input and its weight, as
functions (conv{1,2,3}d_input / conv{1,2,3}d_weight), computed by our autograd through the same
convolution op (so they equal what loss.backward() gives)."""
import oneflow_like as flow
from oneflow_like.nn import functional as F

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _check(name, n, size, other, grad_output):
    size = tuple(int(s) for s in size)
    if len(size) != n + 2:
        raise ValueError(f"[{name}] expected a size of {n + 2} dims, got {size}")
    if grad_output.dim() != n + 2 or other.dim() != n + 2:
        raise ValueError(
            f"[{name}] expected {n + 2}-d tensors, got {tuple(other.shape)} and grad_output "
            f"{tuple(grad_output.shape)}"
        )
    return size


def _grad_wrt(name, n, which, size, other, grad_output, stride, padding, dilation, groups):
    size = _check(name, n, size, other, grad_output)
    leaf = flow.zeros(size, dtype=grad_output.dtype, device=grad_output.device, requires_grad=True)
    with flow.enable_grad():
        x, w = (leaf, other.detach()) if which == "input" else (other.detach(), leaf)
        out = _CONV[n](x, w, None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise ValueError(
                f"[{name}] grad_output has shape {tuple(grad_output.shape)}, but the "
                f"convolution gives {tuple(out.shape)}"
            )
        (g,) = flow.autograd.grad(out, leaf, grad_output)
    return g


def _make(n, which):
    name = f"conv{n}d_{which}"

    def fn(size, other, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _grad_wrt(
            name, n, which, size, other, grad_output, stride, padding, dilation, groups
        )

    fn.__name__ = fn.__qualname__ = name
    what = "input_size, weight" if which == "input" else "input, weight_size"
    fn.__doc__ = (
        f"torch.nn.grad.{name}({what}, grad_output, stride=1, padding=0, dilation=1, groups=1): "
        f"the gradient of conv{n}d with respect to its {which}."
    )
    return fn


def _swap(fn):
    # the weight variants take (input, weight_size, ...): the known tensor first, as torch's
    def weight_fn(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return fn(weight_size, input, grad_output, stride, padding, dilation, groups)

    weight_fn.__name__ = weight_fn.__qualname__ = fn.__name__
    weight_fn.__doc__ = fn.__doc__
    return weight_fn


conv1d_input, conv2d_input, conv3d_input = (_make(n, "input") for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_swap(_make(n, "weight")) for n in (1, 2, 3))
