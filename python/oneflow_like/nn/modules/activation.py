"""Activation modules: thin wrappers over nn.functional."""
from oneflow_like.nn import functional as F
from oneflow_like.nn.modules.module import Module


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, input):
        return F.silu(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class _Elementwise(Module):
    """An activation F.<_fn>(input, *attrs) whose constructor arguments are `_args` (name,
    default) in PyTorch's order; extra_repr lists them."""

    _fn = None
    _args = ()

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = [n for n, _ in self._args]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} arguments")
        values = dict(self._args)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument '{k}'")
            values[k] = v
        missing = [k for k, v in values.items() if v is _REQUIRED]
        if missing:
            raise TypeError(f"{type(self).__name__} missing required arguments: {missing}")
        for k, v in values.items():
            setattr(self, k, v)

    def forward(self, input):
        kw = {n: getattr(self, n) for n, _ in self._args}
        return getattr(F, self._fn)(input, **kw)

    def extra_repr(self):
        return ", ".join(f"{n}={getattr(self, n)}" for n, _ in self._args if n != "inplace")


def _activation(name, fn, args=()):
    return type(name, (_Elementwise,), {"_fn": fn, "_args": tuple(args), "__module__": __name__})


_INPLACE = ("inplace", False)
_REQUIRED = object()  # an argument without a default
ELU = _activation("ELU", "elu", [("alpha", 1.0), _INPLACE])
CELU = _activation("CELU", "celu", [("alpha", 1.0), _INPLACE])
SELU = _activation("SELU", "selu", [_INPLACE])
GLU = _activation("GLU", "glu", [("dim", -1)])
Hardshrink = _activation("Hardshrink", "hardshrink", [("lambd", 0.5)])
Softshrink = _activation("Softshrink", "softshrink", [("lambd", 0.5)])
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid", [_INPLACE])
Hardswish = _activation("Hardswish", "hardswish", [_INPLACE])
Hardtanh = _activation("Hardtanh", "hardtanh", [("min_val", -1.0), ("max_val", 1.0), _INPLACE])
ReLU6 = _activation("ReLU6", "relu6", [_INPLACE])
LogSigmoid = _activation("LogSigmoid", "logsigmoid")
Mish = _activation("Mish", "mish", [_INPLACE])
Softplus = _activation("Softplus", "softplus", [("beta", 1.0), ("threshold", 20.0)])
Softsign = _activation("Softsign", "softsign")
Tanhshrink = _activation("Tanhshrink", "tanhshrink")
Threshold = _activation(
    "Threshold", "threshold", [("threshold", _REQUIRED), ("value", _REQUIRED), _INPLACE]
)
Softmin = _activation("Softmin", "softmin", [("dim", None)])


class Softmax2d(Module):
    """Softmax over the channels of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected a 3-D or 4-D input, got {input.dim()}-D")
        return F.softmax(input, -3)


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}"


class PReLU(Module):
    """max(0, x) + a min(0, x) with a learnable a (num_parameters = 1 or the channel count)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        import oneflow_like as flow
        from oneflow_like.nn.modules.module import Parameter

        super().__init__()
        self.num_parameters = num_parameters
        kw = {k: v for k, v in (("device", device), ("dtype", dtype)) if v is not None}
        self.weight = Parameter(flow.full((num_parameters,), float(init), **kw))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


from oneflow_like.nn.modules._paths import late_names  # noqa: E402

__getattr__ = late_names(__name__)
