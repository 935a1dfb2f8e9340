"""Helpers shared by the distributions (torch.distributions.utils): broadcasting parameters,
probabilities <-> logits, clamping and lazily computed properties."""
import math
import numbers

import oneflow_like as flow

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def _is_tensor(x):
    return isinstance(x, flow.Tensor)


def broadcast_all(*values):
    """Broadcasts tensors and Python numbers to one shape. Numbers become tensors of the
    tensors' dtype and device (the default dtype when every value is a number)."""
    if not all(_is_tensor(v) or isinstance(v, numbers.Number) for v in values):
        raise ValueError(
            "broadcast_all: input arguments must be a Tensor or a Python number, got "
            + ", ".join(type(v).__name__ for v in values)
        )
    tensors = [v for v in values if _is_tensor(v)]
    if tensors:
        dtype, device = tensors[0].dtype, tensors[0].device
        if not dtype.is_floating_point:
            floats = [t.dtype for t in tensors if t.dtype.is_floating_point]
            dtype = floats[0] if floats else flow.get_default_dtype()
    else:
        dtype, device = flow.get_default_dtype(), None
    values = [
        v if _is_tensor(v) else flow.tensor(float(v), dtype=dtype, device=device) for v in values
    ]
    shape = flow.broadcast_shapes(*[v.shape for v in values])
    return tuple(v if tuple(v.shape) == tuple(shape) else v.expand(shape) for v in values)


def _as_value(value, like):
    """`value` as a tensor of `like`'s dtype (a Python number becomes one)."""
    if _is_tensor(value):
        return value if value.dtype == like.dtype else value.to(like.dtype)
    return flow.tensor(float(value), dtype=like.dtype, device=like.device)


def _standard_normal(shape, dtype, device):
    return flow.randn(flow.Size(shape), dtype=dtype, device=device)


def _uniform_open(shape, like):
    """Uniform draws in (0, 1): the closed end 0 is replaced by the smallest normal number."""
    u = flow.rand(flow.Size(shape), dtype=like.dtype, device=like.device)
    return u.clamp(min=flow.finfo(like.dtype).tiny)


def _sum_rightmost(value, dim):
    """Sums the rightmost `dim` dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Logits -> probabilities: sigmoid for a binary event, softmax over the last dim otherwise."""
    if is_binary:
        return flow.sigmoid(logits)
    return flow.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamps probabilities into [eps, 1 - eps] of their dtype."""
    eps = flow.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities -> logits: log(p) - log1p(-p) for a binary event, log p otherwise."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return flow.log(ps_clamped) - flow.log1p(-ps_clamped)
    return flow.log(ps_clamped)


class lazy_property:
    """A property computed on first access and cached on the instance (with gradients on)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with flow.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: both a lazy_property and a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal `diag`) of the trailing matrices, row by row."""
    n = mat.shape[-1]
    rows, cols = flow.tril_indices(n, n, offset=diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    """Inverse of tril_matrix_to_vec."""
    n = (
        -(1 + 2 * diag)
        + math.sqrt((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))
    ) / 2
    eps = flow.finfo(vec.dtype).eps
    if not round(n) - n < eps:
        raise ValueError(
            f"vec_to_tril_matrix: the last dim {vec.shape[-1]} is not a triangular number of "
            f"entries for diag={diag}"
        )
    n = round(n.item()) if _is_tensor(n) else round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    rows, cols = flow.tril_indices(n, n, offset=diag)
    idx = rows * n + cols
    flat = mat.reshape(tuple(vec.shape[:-1]) + (n * n,))
    flat = flat.scatter(-1, idx.expand(tuple(vec.shape[:-1]) + (idx.shape[0],)), vec)
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))


def _one_of(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


class _BinaryProbsLogits:
    """Mixin for distributions of a binary event given by `probs` or `logits` (exactly one):
    the other is computed on first use."""

    def _init_probs_or_logits(self, probs, logits, total_count=None):
        """Stores the given parameter (broadcast with total_count when there is one) and
        returns the batch shape."""
        _one_of(type(self).__name__, probs, logits)
        given = probs if probs is not None else logits
        if total_count is None:
            (value,) = broadcast_all(given)
        else:
            total_count, value = broadcast_all(total_count, given)
            self.total_count = total_count.type_as(value)
        setattr(self, "probs" if probs is not None else "logits", value)
        self._param = value
        if total_count is None and isinstance(given, numbers.Number):
            return ()
        return value.shape

    def _expand_binary(self, cls, batch_shape, _instance, **attrs):
        names = ("total_count", "probs", "logits")
        new = self._expand_params(cls, batch_shape, _instance, names, **attrs)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape
