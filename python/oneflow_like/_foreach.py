"""torch._foreach_*: the multi-tensor ops EMA helpers and hand-written optimizers call
(`torch._foreach_mul_(ema, decay)`, `torch._foreach_lerp_(ema, params, 1 - decay)`, ...).

Each applies the single-tensor op to every tensor of the list, with the other operand a scalar,
a list of scalars, a list of tensors or one tensor, as PyTorch 2.x accepts; the in-place forms
(`_foreach_add_`) return None, the others a list. They are loops over our ops (each op is one VM
instruction; there is no fused multi-tensor kernel), so they give torch's values and
differentiate like the ops they loop over.
"""
import oneflow_like as flow

_UNARY = (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 "
    "neg reciprocal round sigmoid sign sin sinh sqrt tan tanh trunc"
).split()
# binary ops: name -> (takes alpha)
_BINARY = {
    "add": True,
    "sub": True,
    "mul": False,
    "div": False,
    "pow": False,
    "maximum": False,
    "minimum": False,
    "clamp_min": False,
    "clamp_max": False,
}


def _tensors(name, xs):
    xs = list(xs)
    for i, x in enumerate(xs):
        if not isinstance(x, flow.Tensor):
            raise TypeError(
                f"[_foreach_{name}] expected a list of tensors: entry {i} is " f"{type(x).__name__}"
            )
    return xs


def _others(name, xs, other):
    """The second operand for each tensor: a list (same length) is zipped, anything else
    (a scalar or one tensor) is used for every tensor."""
    if isinstance(other, (list, tuple)):
        if len(other) != len(xs):
            raise RuntimeError(
                f"[_foreach_{name}] Tensor lists must have the same number of tensors, got "
                f"{len(xs)} and {len(other)}"
            )
        return list(other)
    return [other] * len(xs)


def _binary_call(base, x, o, alpha):
    if base in ("clamp_min", "clamp_max"):
        if isinstance(o, flow.Tensor):
            return (flow.maximum if base == "clamp_min" else flow.minimum)(x, o)
        return x.clamp(min=o) if base == "clamp_min" else x.clamp(max=o)
    if base in ("maximum", "minimum") and not isinstance(o, flow.Tensor):
        return x.clamp(min=o) if base == "maximum" else x.clamp(max=o)
    if alpha is not None:
        return getattr(flow, base)(x, o, alpha=alpha)
    return getattr(flow, base)(x, o)


def _write(xs, results):
    for x, r in zip(xs, results):
        x.copy_(r)


def _make_binary(base, has_alpha):
    def out_of_place(self, other, **kwargs):
        if set(kwargs) - ({"alpha"} if has_alpha else set()):
            raise TypeError(f"[_foreach_{base}] got unexpected keyword arguments {sorted(kwargs)}")
        xs = _tensors(base, self)
        a = kwargs.get("alpha", 1) if has_alpha else None
        return [_binary_call(base, x, o, a) for x, o in zip(xs, _others(base, xs, other))]

    def in_place(self, other, **kwargs):
        xs = _tensors(base + "_", self)
        _write(xs, out_of_place(xs, other, **kwargs))

    return out_of_place, in_place


def _make_unary(base):
    def out_of_place(self):
        return [getattr(flow, base)(x) for x in _tensors(base, self)]

    def in_place(self):
        xs = _tensors(base + "_", self)
        _write(xs, out_of_place(xs))

    return out_of_place, in_place


def _make_pointwise(base):
    """addcmul / addcdiv: self + value * t1 (*|/) t2, value a scalar, scalars or a tensor."""

    def out_of_place(self, tensor1, tensor2, value=1):
        xs = _tensors(base, self)
        t1, t2 = _others(base, xs, tensor1), _others(base, xs, tensor2)
        if isinstance(value, flow.Tensor) and value.dim() == 1:
            value = [float(v) for v in value.tolist()]
        vs = _others(base, xs, value)
        op = flow.mul if base == "addcmul" else flow.div
        return [x + v * op(a, b) for x, a, b, v in zip(xs, t1, t2, vs)]

    def in_place(self, tensor1, tensor2, value=1):
        xs = _tensors(base + "_", self)
        _write(xs, out_of_place(xs, tensor1, tensor2, value))

    return out_of_place, in_place


def _foreach_lerp(self, tensors1, weight):
    xs = _tensors("lerp", self)
    ends = _others("lerp", xs, tensors1)
    ws = _others("lerp", xs, weight)
    return [x + w * (e - x) for x, e, w in zip(xs, ends, ws)]


def _foreach_lerp_(self, tensors1, weight):
    xs = _tensors("lerp_", self)
    _write(xs, _foreach_lerp(xs, tensors1, weight))


def _foreach_norm(self, ord=2, dtype=None):
    xs = _tensors("norm", self)
    return [flow.linalg.vector_norm(x, ord=ord, dtype=dtype) for x in xs]


def _foreach_zero_(self):
    for x in _tensors("zero_", self):
        x.zero_()


def _foreach_copy_(self, src, non_blocking=False):
    xs = _tensors("copy_", self)
    for x, s in zip(xs, _others("copy_", xs, src)):
        x.copy_(s)


_namespace = {
    "_foreach_lerp": _foreach_lerp,
    "_foreach_lerp_": _foreach_lerp_,
    "_foreach_norm": _foreach_norm,
    "_foreach_zero_": _foreach_zero_,
    "_foreach_copy_": _foreach_copy_,
}
for _name, _alpha in _BINARY.items():
    _namespace[f"_foreach_{_name}"], _namespace[f"_foreach_{_name}_"] = _make_binary(_name, _alpha)
for _name in _UNARY:
    _namespace[f"_foreach_{_name}"], _namespace[f"_foreach_{_name}_"] = _make_unary(_name)
for _name in ("addcmul", "addcdiv"):
    _namespace[f"_foreach_{_name}"], _namespace[f"_foreach_{_name}_"] = _make_pointwise(_name)
for _name, _fn in _namespace.items():
    _fn.__name__ = _name
    _fn.__qualname__ = _name
globals().update(_namespace)
__all__ = sorted(_namespace)
