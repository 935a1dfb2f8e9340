"""torch.autograd.forward_ad: dual tensors (primal + tangent) and their forward-mode derivatives.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        p, t = forward_ad.unpack_dual(y)   # t = J_f(primal) @ tangent

How tangents are computed: lazily, at unpack_dual, from the ordinary backward graph the ops on
the dual tensors recorded, by the double-vjp identity J t = d/du <u^T J, t> (as flow.func.jvp):
one create_graph backward from the tensor to the level's dual tensors with a zero cotangent u,
then one backward of <g, t> to u. No per-op forward rule is needed, so every op works whose
gradient formula is itself differentiable (the ops double backward supports: elementwise,
matmul / linear, reductions, activations, conv, softmax, normalizations, views, indexing, ...).
Costs: each unpack_dual runs two backward passes over the graph between the duals and the tensor.

Differences from torch, which propagates tangents op by op:
- a dual tensor requires grad (it is how the graph to it is recorded), and so do the results
  of ops on it; ops run under no_grad (or on detached tensors) do not carry the tangent;
- unpack_dual's primal is the tensor detached (no tangent, no backward history);
- an op whose gradient formula is not differentiable raises at unpack_dual a RuntimeError that
  starts "[forward_ad.unpack_dual]" and names the op's backward that failed.
Only one level at a time, as torch ("Nested forward mode AD is not supported at the moment").
"""
import collections

from .. import _C

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])


class _Level:
    def __init__(self, idx):
        self.idx = idx
        self.duals = []  # (dual tensor, tangent), in make_dual order


_current = None  # the active level (one at a time)


def enter_dual_level():
    """Enters a new forward-AD level and returns its index."""
    global _current
    if _current is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current = _Level(0)
    return _current.idx


def exit_dual_level(*, level=None):
    """Exits the current level; the dual tensors made in it lose their tangents."""
    global _current
    if _current is None or (level is not None and level != _current.idx):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _current.duals.clear()
    _current = None


def _level(level):
    if _current is None or (level is not None and level != _current.idx):
        return None
    return _current


def make_dual(tensor, tangent, *, level=None):
    """A tensor with `tensor`'s values (a view of it) whose forward derivative is `tangent`."""
    lv = _level(level)
    if lv is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not isinstance(tensor, _C.Tensor) or not isinstance(tangent, _C.Tensor):
        raise TypeError(
            f"make_dual: expected Tensors, got {type(tensor).__name__} and "
            f"{type(tangent).__name__}"
        )
    if not tensor.dtype.is_floating_point:
        raise RuntimeError(
            f"make_dual: expected the primal to be floating point, got {tensor.dtype}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tangent.device != tensor.device:
        raise RuntimeError(
            f"make_dual: the tangent is on {tangent.device}, its primal on {tensor.device}"
        )
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    with _enable_grad():
        dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach()
        if not dual.requires_grad:
            dual.requires_grad_(True)
    lv.duals.append((dual, tangent))
    return dual


class _enable_grad:
    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C.set_grad_enabled(True)

    def __exit__(self, *exc):
        _C.set_grad_enabled(self.prev)
        return False


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor`: tangent is None when it does not depend on a dual tensor of
    the level (or no level is active)."""
    lv = _level(level)
    if not isinstance(tensor, _C.Tensor):
        raise TypeError(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    if lv is None or not lv.duals or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    duals = [d for d, _ in lv.duals]
    tangents = [t for _, t in lv.duals]
    what = f"the tangent of a {tuple(tensor.shape)} {tensor.dtype} tensor"
    with _enable_grad():
        u = _C.zeros_like(tensor).requires_grad_(True)
        try:
            gs = _C._autograd_grad([tensor], duals, [u], True, True, True)
        except (RuntimeError, ValueError, TypeError) as e:
            raise RuntimeError(f"[forward_ad.unpack_dual] {what}: backward failed: {e}") from e
        pairs = [(g, t) for g, t in zip(gs, tangents) if g is not None]
        if not pairs:
            return UnpackedDualTensor(tensor.detach(), None)
        differentiable = [(g, t) for g, t in pairs if g.requires_grad]
        if len(differentiable) != len(pairs):
            raise RuntimeError(
                f"[forward_ad.unpack_dual] {what}: the gradient formula of an op between it and "
                "the dual tensors is not differentiable, so its forward derivative cannot be "
                "computed by double backward"
            )
        create = any(t.requires_grad for _, t in pairs)
        try:
            (jv,) = _C._autograd_grad(
                [g for g, _ in pairs], [u], [t for _, t in pairs], True, create, True
            )
        except (RuntimeError, ValueError, TypeError) as e:
            raise RuntimeError(
                f"[forward_ad.unpack_dual] {what}: double backward failed: {e}"
            ) from e
    if jv is None:
        jv = _C.zeros_like(tensor)
    if not create:
        jv = jv.detach()
    return UnpackedDualTensor(tensor.detach(), jv)


class dual_level:
    """Context manager for a forward-AD level: dual tensors made inside lose their tangents when
    it exits."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False
