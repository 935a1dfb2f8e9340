"""oneflow_like.multiprocessing: Python's multiprocessing, with tensors sent through shared memory.

As torch.multiprocessing does: everything of the standard module is re-exported, and importing
this module registers a reducer with multiprocessing's ForkingPickler, so a flow.Tensor put on a
multiprocessing Queue (or Pipe, or sent to a Pool) travels as a shared-memory block, not as
pickled bytes. The sender copies the tensor's data once into an anonymous memory file
(memfd_create) and passes its descriptor (multiprocessing's DupFd: SCM_RIGHTS over the resource
sharer's socket, so nothing is written to disk and no name can leak); the receiver maps it and
wraps the mapping as a tensor without copying. The memory is returned to the system when the
last tensor (or mapping) using it dies.

Only CPU tensors whose autograd history would be lost are refused, as PyTorch refuses them:
a non-leaf tensor that requires grad raises; send `t.detach()`.
"""
import mmap as _mmap
import multiprocessing as _mp
import os as _os
from multiprocessing import *  # noqa: F401,F403  (the standard API, as torch.multiprocessing)
from multiprocessing import reduction as _reduction

import numpy as _np

import oneflow_like as _flow

__all__ = list(getattr(_mp, "__all__", [])) + ["get_sharing_strategy", "set_sharing_strategy"]

_STRATEGIES = ("file_descriptor",)


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def get_sharing_strategy():
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    if new_strategy not in _STRATEGIES:
        raise ValueError(
            f"oneflow_like.multiprocessing.set_sharing_strategy: unknown strategy "
            f"{new_strategy!r}; supported: {', '.join(_STRATEGIES)}"
        )


def _rebuild_tensor(dupfd, nbytes, shape, dtype_str, requires_grad, is_param=False):
    if nbytes == 0:
        arr = _np.empty(shape, dtype=_np.dtype(dtype_str))
    else:
        try:
            fd = dupfd.detach()
        except (EOFError, OSError) as e:
            raise RuntimeError(
                "oneflow_like.multiprocessing: the process that sent this tensor exited before "
                f"its shared memory could be received ({e!r})"
            ) from None
        try:
            mm = _mmap.mmap(
                fd, nbytes, flags=_mmap.MAP_SHARED, prot=_mmap.PROT_READ | _mmap.PROT_WRITE
            )
        finally:
            _os.close(fd)
        # The array holds the mapping; from_numpy keeps the array alive as long as the tensor.
        arr = _np.frombuffer(mm, dtype=_np.dtype(dtype_str)).reshape(shape)
    t = _flow.from_numpy(arr)
    if is_param:
        from oneflow_like.nn import Parameter

        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "oneflow_like.multiprocessing: cannot send a non-leaf tensor that requires grad "
            "to another process (its autograd graph cannot cross processes); send t.detach()"
        )
    if t.device.type != "cpu":
        raise RuntimeError(
            f"oneflow_like.multiprocessing: only CPU tensors can be shared between processes; "
            f"got a tensor on {t.device} (move it with .cpu() first)"
        )
    from oneflow_like.nn import Parameter

    is_param = isinstance(t, Parameter)
    arr = t.detach().numpy()
    nbytes = int(arr.nbytes)
    if nbytes == 0:
        return _rebuild_tensor, (
            None,
            0,
            tuple(arr.shape),
            arr.dtype.str,
            t.requires_grad,
            is_param,
        )
    fd = _os.memfd_create("oneflow_like_tensor", _os.MFD_CLOEXEC)
    try:
        _os.ftruncate(fd, nbytes)
        with _mmap.mmap(fd, nbytes, flags=_mmap.MAP_SHARED) as mm:
            _np.frombuffer(mm, dtype=arr.dtype).reshape(arr.shape)[...] = arr
        dupfd = _reduction.DupFd(fd)
    finally:
        _os.close(fd)
    return _rebuild_tensor, (
        dupfd,
        nbytes,
        tuple(arr.shape),
        arr.dtype.str,
        t.requires_grad,
        is_param,
    )


def _register():
    from oneflow_like.nn import Parameter

    for cls in (_flow.Tensor, Parameter):
        _reduction.ForkingPickler.register(cls, _reduce_tensor)


_register()
