"""Identity and Linear (y = x W^T + b)."""
import math

import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn import init
from oneflow_like.nn.modules.module import Module, Parameter


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """weight: (out_features, in_features), bias: (out_features,), both U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _make_weight_and_bias(self, (out_features, in_features), bias, device, dtype)

    def reset_parameters(self):
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def _empty(shape, device=None, dtype=None):
    """An uninitialised tensor for a parameter (the default dtype, on the CPU, unless told)."""
    kw = {}
    if dtype is not None:
        kw["dtype"] = dtype
    if device is not None:
        kw["device"] = device
    return flow.empty(*shape, **kw)


def _make_weight_and_bias(module, weight_shape, bias, device, dtype, bias_size=None):
    """Registers weight (weight_shape) and bias (bias_size or weight_shape[0],) or None, then
    resets them."""
    module.weight = Parameter(_empty(weight_shape, device, dtype))
    if bias:
        module.bias = Parameter(_empty((bias_size or weight_shape[0],), device, dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


def _reset_weight_and_bias(weight, bias):
    """torch's default for Linear and Conv: kaiming_uniform(a=sqrt(5)), bias U(+-1/sqrt(fan_in))."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        init.uniform_(bias, -bound, bound)


from oneflow_like.nn.modules._paths import late_names  # noqa: E402

__getattr__ = late_names(__name__)
