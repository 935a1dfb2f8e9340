"""Parameter initialisers: all of torch.nn.init, with PyTorch's names, arguments and defaults.
Each fills `tensor` in place under no_grad and returns it. Random draws come from the global
generator (flow.manual_seed) on the tensor's device, or from `generator` (a flow.Generator)
on the host. The deprecated names without the trailing underscore warn and forward."""
import math
import warnings

import numpy as np

import oneflow_like as flow


def _shape(t):
    return tuple(t.shape)


def _fill(tensor, values):
    """Copies `values` (a flow tensor or a NumPy array of tensor's shape) into tensor."""
    with flow.no_grad():
        if isinstance(values, np.ndarray):
            values = flow.from_numpy(np.ascontiguousarray(values))
        tensor.copy_(values.to(tensor.dtype).to(tensor.device))
    return tensor


def _uniform(tensor, generator):
    """Uniform [0, 1) values of tensor's shape, in float64."""
    if generator is not None:
        return flow.from_numpy(generator.numpy_rng.random(_shape(tensor)))
    return flow.rand(*_shape(tensor), dtype=flow.float64, device=tensor.device)


def _normal(tensor, generator):
    """Standard normal values of tensor's shape, in float64."""
    if generator is not None:
        return flow.from_numpy(generator.numpy_rng.standard_normal(_shape(tensor)))
    return flow.randn(*_shape(tensor), dtype=flow.float64, device=tensor.device)


_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for `nonlinearity` (PyTorch's table)."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"[calculate_gain] negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"[calculate_gain] Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    shape = _shape(tensor)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions, "
            f"got shape {shape}"
        )
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, _uniform(tensor, generator) * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, _normal(tensor, generator) * std + mean)


def _erfinv(z):
    """erfinv of a float64 tensor in (-1, 1): Winitzki's closed form, then two Newton steps on
    erf(y) = z (each doubles the correct digits: float64 accuracy after three)."""
    k = 0.147
    ln = (1.0 - z * z).log()
    first = 2.0 / (math.pi * k) + ln / 2.0
    y = z.sign() * ((first * first - ln / k).sqrt() - first).sqrt()
    for _ in range(3):
        y = y - (flow.erf(y) - z) / (2.0 / math.sqrt(math.pi) * (-y * y).exp())
    return y


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) truncated to [a, b], by the inverse CDF of a uniform draw between the
    bounds' CDF values (exact, no rejection)."""
    if not a < b:
        raise ValueError(f"[trunc_normal_] expects a < b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )

    def cdf(x):
        return (1.0 + math.erf((x - mean) / std / math.sqrt(2.0))) / 2.0

    lo, hi = cdf(a), cdf(b)
    u = _uniform(tensor, generator) * (2 * hi - 2 * lo) + (2 * lo - 1)
    eps = np.finfo(np.float64).eps
    x = _erfinv(u.clamp(-1 + eps, 1 - eps)) * (std * math.sqrt(2.0)) + mean
    return _fill(tensor, x.clamp(a, b))


def constant_(tensor, val):
    with flow.no_grad():
        tensor.fill_(val)
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    """The identity matrix (a 2-D tensor)."""
    if tensor.dim() != 2:
        raise ValueError(f"[eye_] Only tensors with 2 dimensions are supported, got {tensor.dim()}")
    return _fill(tensor, np.eye(*_shape(tensor)))


def dirac_(tensor, groups=1):
    """The Dirac delta for {3, 4, 5}-D convolution weights: each of `groups` groups of output
    channels passes its input channels through unchanged (the centre tap is 1)."""
    shape = _shape(tensor)
    if len(shape) not in (3, 4, 5):
        raise ValueError(
            f"[dirac_] Only tensors with 3, 4, or 5 dimensions are supported, got {len(shape)}"
        )
    if shape[0] % groups != 0:
        raise ValueError(f"[dirac_] dim 0 ({shape[0]}) must be divisible by groups ({groups})")
    out_per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, shape[1])):
            values[(g * out_per_group + d, d) + centre] = 1.0
    return _fill(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in _shape(tensor):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in _shape(tensor):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal draw (sign-fixed so it
    is uniformly distributed), viewed as tensor's shape (dims after the first flattened). The
    QR is flow.linalg.qr in float64 on the CPU."""
    if tensor.dim() < 2:
        raise ValueError(
            f"[orthogonal_] Only tensors with 2 or more dimensions are supported, got {tensor.dim()}"
        )
    if tensor.numel() == 0:
        return tensor
    rows = _shape(tensor)[0]
    cols = tensor.numel() // rows
    flat = flow.tensor(_normal(tensor, generator).numpy().reshape(rows, cols), dtype=flow.float64)
    if rows < cols:
        flat = flat.t()
    with flow.no_grad():
        q, r = flow.linalg.qr(flat)
        q = q * flow.diagonal(r).sign()
    if rows < cols:
        q = q.t()
    return _fill(tensor, (gain * q).numpy().reshape(_shape(tensor)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D matrix with normal(0, std) entries and, in each column, ceil(sparsity * rows)
    entries set to zero at random rows."""
    if tensor.dim() != 2:
        raise ValueError(
            f"[sparse_] Only tensors with 2 dimensions are supported, got {tensor.dim()}"
        )
    rows, cols = _shape(tensor)
    num_zeros = int(math.ceil(sparsity * rows))
    values = _normal(tensor, generator).numpy() * std
    rng = generator.numpy_rng if generator is not None else None
    for c in range(cols):
        if rng is not None:
            order = rng.permutation(rows)
        else:
            order = flow.randperm(rows).numpy()
        values[order[:num_zeros], c] = 0.0
    return _fill(tensor, values)


def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    old.__name__ = new.__name__[:-1]
    old.__doc__ = f"Deprecated: use {new.__name__}."
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
