"""The in-place metadata methods of torch.Tensor: t_, transpose_, swapaxes_, swapdims_,
squeeze_, unsqueeze_, as_strided_, resize_, resize_as_, set_, and the `.data` setter (detach_ is
_compat_names.py's, in the runtime).

Each computes the out-of-place view (or a new tensor for a growing resize_) and makes this tensor
object take its storage, shape, strides, offset and dtype (`Tensor._rebind_`, python/csrc), as
torch changes the TensorImpl in place: every reference to the tensor sees the change, and
instructions already issued keep the views they were given. torch's rules, checked first:
- a leaf that requires grad cannot be changed in place while grad mode is on;
- the view ops record their gradient (a non-leaf then has the view op's grad_fn) and bump the
  version counter, so a saved copy of the old layout raises in backward;
- resize_ refuses tensors that require grad, keeps the storage when it holds enough elements
  (the storage read as contiguous from the offset; elements beyond the old ones are
  unspecified, as in torch), and otherwise moves to a larger storage, keeping the old elements
  in order;
- `x.data = y` shares y's storage (no copy), keeps x's autograd identity (a parameter keeps its
  .grad and stays a leaf) and may change the shape, dtype or device.
"""
import math

from oneflow_like import _C

Tensor = _C.Tensor

_KEEP, _TAKE = False, True  # Tensor._rebind_'s take_grad_fn


def _check_leaf(self, op):
    if self.requires_grad and self.is_leaf and _C.is_grad_enabled():
        raise RuntimeError(
            f"[{op}] a leaf Variable that requires grad is being used in an in-place operation"
        )


def _take_view(self, op, make):
    """Rebinds self to the view `make(self)`; with autograd on, self takes the view's history."""
    _check_leaf(self, op)
    view = make(self)
    self._rebind_(view, _TAKE if view.requires_grad and not view.is_leaf else _KEEP, True)
    return self


def _sizes(op, sizes):
    if (
        len(sizes) == 1
        and isinstance(sizes[0], (tuple, list))
        or (len(sizes) == 1 and hasattr(sizes[0], "__iter__"))
    ):
        sizes = tuple(sizes[0])
    out = tuple(int(s) for s in sizes)
    if any(s < 0 for s in out):
        raise RuntimeError(f"[{op}] sizes must be non-negative: got {list(out)}")
    return out


def _contiguous_strides(sizes):
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def t_(self):
    return _take_view(self, "t_", lambda x: x.t())


def transpose_(self, dim0, dim1):
    return _take_view(self, "transpose_", lambda x: x.transpose(dim0, dim1))


def swapaxes_(self, axis0, axis1):
    return _take_view(self, "swapaxes_", lambda x: x.transpose(axis0, axis1))


def swapdims_(self, dim0, dim1):
    return _take_view(self, "swapdims_", lambda x: x.transpose(dim0, dim1))


def squeeze_(self, dim=None):
    return _take_view(self, "squeeze_", lambda x: x.squeeze() if dim is None else x.squeeze(dim))


def unsqueeze_(self, dim):
    return _take_view(self, "unsqueeze_", lambda x: x.unsqueeze(dim))


def as_strided_(self, size, stride, storage_offset=None):
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return _take_view(self, "as_strided_", lambda x: x.as_strided(size, stride, offset))


def resize_(self, *sizes, memory_format=None):
    """torch.Tensor.resize_: the new shape read as contiguous from the storage offset."""
    sizes = _sizes("resize_", sizes)
    if self.requires_grad:
        raise RuntimeError("[resize_] cannot resize variables that require grad")
    if tuple(self.shape) == sizes:
        return self
    numel = math.prod(sizes)
    offset = self.storage_offset()
    strides = _contiguous_strides(sizes)
    room = self._storage_numel() - offset
    if numel <= room:
        view = self._storage_view().as_strided(sizes, strides, offset)
    else:
        from oneflow_like import empty

        grown = empty(numel, dtype=self.dtype, device=self.device)
        keep = min(room, numel)
        if keep > 0:
            grown[:keep] = self._storage_view()[offset : offset + keep]
        view = grown.view(sizes)
    self._rebind_(view, _KEEP, True)
    return self


def resize_as_(self, other, memory_format=None):
    return resize_(self, tuple(other.shape))


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """torch.Tensor.set_: with no source an empty tensor; with a tensor its storage and view; with
    size (and stride, default contiguous) a view of the source's storage at storage_offset; with
    a storage (flow.UntypedStorage/TypedStorage) its memory, whole or the view asked for."""
    from oneflow_like import storage

    _check_leaf(self, "set_")
    if source is None:
        from oneflow_like import empty

        view = empty(0, dtype=self.dtype, device=self.device)
    elif isinstance(source, (storage.UntypedStorage, storage.TypedStorage)):
        # a storage: its memory as elements of this tensor's dtype, then the view asked for
        whole = storage._storage_elements(source, self.dtype)
        if size is None:
            view = whole
        else:
            size = tuple(int(s) for s in size)
            stride = _contiguous_strides(size) if stride is None else stride
            view = whole.as_strided(size, tuple(stride), storage_offset)
    elif not isinstance(source, Tensor):
        raise TypeError(f"[set_] source must be a tensor or a storage: got {type(source).__name__}")
    elif size is None:
        view = source.detach()
    else:
        size = tuple(int(s) for s in size)
        stride = _contiguous_strides(size) if stride is None else stride
        view = source._storage_view().as_strided(size, tuple(stride), storage_offset)
    if view.dtype != self.dtype:
        raise RuntimeError(
            f"[set_] expected a source of dtype {self.dtype} (this tensor's): got {view.dtype}"
        )
    self._rebind_(view, _KEEP, True)
    return self


def _set_data(self, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"[data] expected a Tensor: got {type(value).__name__}")
    self._rebind_(value.detach(), _KEEP, False)


for _name in (
    "t_",
    "transpose_",
    "swapaxes_",
    "swapdims_",
    "squeeze_",
    "unsqueeze_",
    "as_strided_",
    "resize_",
    "resize_as_",
    "set_",
):
    setattr(Tensor, _name, globals()[_name])
Tensor.data = property(lambda self: self.detach(), _set_data)
