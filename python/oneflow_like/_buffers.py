"""torch.frombuffer and torch.empty_strided."""
import numpy as np

import oneflow_like as flow
from oneflow_like import _C

_NUMPY = {
    "bool": np.bool_,
    "uint8": np.uint8,
    "int8": np.int8,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
}


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """torch.frombuffer: a 1-D tensor over an object of the buffer protocol, sharing its memory
    (writes through the tensor change the buffer). `count` elements (-1: to the end) from byte
    `offset`."""
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"[frombuffer] dtype must be a flow.dtype, got {type(dtype).__name__}")
    name = str(dtype).split(".")[-1]
    if name not in _NUMPY:
        raise TypeError(f"[frombuffer] dtype {dtype} has no NumPy counterpart")
    view = memoryview(buffer)
    length = view.nbytes
    itemsize = np.dtype(_NUMPY[name]).itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0 and (length - offset) % itemsize != 0:
        raise ValueError(
            f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
            f"multiple of element size ({itemsize})"
        )
    if count > 0 and offset + count * itemsize > length:
        raise ValueError(
            f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    arr = np.frombuffer(buffer, dtype=_NUMPY[name], count=count, offset=offset)
    if not arr.flags.writeable:
        import warnings

        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor.",
            UserWarning,
            stacklevel=2,
        )
        arr.flags.writeable = False
    t = flow.from_numpy(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """torch.empty_strided: an uninitialised tensor of `size` laid out with `stride` (in
    elements) over a storage just large enough for it."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"[empty_strided] mismatch in length of strides and shape: {len(size)} sizes, "
            f"{len(stride)} strides"
        )
    if any(s < 0 for s in size):
        raise RuntimeError(f"[empty_strided] negative dimension in size {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"[empty_strided] negative stride in {list(stride)}")
    storage = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    base = flow.empty(storage, dtype=dtype, device=device)
    t = flow.as_strided(base, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t
