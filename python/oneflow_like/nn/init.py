"""Parameter initialisers (torch.nn.init names). Each fills `tensor` in place under no_grad by
copying a freshly drawn tensor of the same shape, dtype and device, and returns it."""
import math

import oneflow_like as flow


def _shape(t):
    return tuple(t.shape)


def _draw_into(tensor, draw):
    with flow.no_grad():
        tensor.copy_(draw(*_shape(tensor), dtype=tensor.dtype, device=tensor.device))
    return tensor


def calculate_gain(nonlinearity, param=None):
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    )
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    shape = _shape(tensor)
    if len(shape) < 2:
        raise ValueError(
            "fan in and fan out can not be computed for a tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode} not supported, use 'fan_in' or 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0):
    return _draw_into(tensor, lambda *s, **kw: flow.rand(*s, **kw) * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0):
    return _draw_into(tensor, lambda *s, **kw: flow.randn(*s, **kw) * std + mean)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    # Rejection-free: clamp is not a truncated normal, so redraw out-of-range values a few times.
    def draw(*s, **kw):
        x = flow.randn(*s, **kw) * std + mean
        for _ in range(8):
            bad = (x < a) | (x > b)
            x = flow.where(bad, flow.randn(*s, **kw) * std + mean, x)
        return x.clamp(a, b)

    return _draw_into(tensor, draw)


def constant_(tensor, val):
    with flow.no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)
