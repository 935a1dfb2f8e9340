"""oneflow_like.multiprocessing: Python's multiprocessing, with tensors sent through shared memory.

As torch.multiprocessing does: everything of the standard module is re-exported, and importing
this module registers a reducer with multiprocessing's ForkingPickler, so a flow.Tensor put on a
multiprocessing Queue (or Pipe, or sent to a Pool) travels as a shared-memory block, not as
pickled bytes. The sender copies the tensor's data once into an anonymous memory file
(memfd_create) and passes its descriptor (multiprocessing's DupFd: SCM_RIGHTS over the resource
sharer's socket, so nothing is written to disk and no name can leak); the receiver maps it and
wraps the mapping as a tensor without copying. The memory is returned to the system when the
last tensor (or mapping) using it dies.

`Tensor.share_memory_()` (and `Module.share_memory()`) moves a CPU tensor's storage into such a
block first, as torch does: the tensor keeps its values, shape and strides, and from then on a
send passes that block itself, so the receivers and the sender write the same memory (Hogwild
training: every process updates the one model). `Tensor.is_shared()` says whether it was moved.

Only CPU tensors whose autograd history would be lost are refused, as PyTorch refuses them:
a non-leaf tensor that requires grad raises; send `t.detach()`.
"""
import mmap as _mmap
import multiprocessing as _mp
import os as _os
import weakref as _weakref
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


# Storages in shared memory (share_memory_, or received as shared): the mapping's address ->
# (memfd, bytes). The entry and the descriptor go when the mapping's array (held by the storage)
# dies.
_shared = {}


def _map_shared(fd, nbytes):
    """A uint8 tensor over the whole memfd, registered as shared (takes ownership of fd)."""
    mm = _mmap.mmap(fd, nbytes, flags=_mmap.MAP_SHARED, prot=_mmap.PROT_READ | _mmap.PROT_WRITE)
    arr = _np.frombuffer(mm, dtype=_np.uint8)
    base = arr.ctypes.data
    _shared[base] = (fd, nbytes)
    _weakref.finalize(arr, _release, base, fd)
    return _flow.from_numpy(arr)  # from_numpy keeps the array (and the mapping) alive


def _release(base, fd):
    _shared.pop(base, None)
    try:
        _os.close(fd)
    except OSError:
        pass


def _storage_of(t):
    """(address, bytes) of t's whole storage."""
    v = t._storage_view()
    return v.data_ptr(), v.numel() * v.element_size()


def _typed_view(raw, like):
    """`raw` (the uint8 storage) seen with like's dtype, shape, strides and storage offset."""
    return raw.view(like.dtype).as_strided(tuple(like.shape), like.stride(), like.storage_offset())


def is_shared(self):
    """Whether the tensor's storage is in shared memory (always true on CUDA, as torch)."""
    if self.device.type != "cpu":
        return True
    if self.numel() == 0 and self._storage_numel() == 0:
        return False
    return _storage_of(self)[0] in _shared


def share_memory_(self):
    """Moves the storage into shared memory (no-op if already there, and for CUDA tensors, as
    torch); values, shape, strides and autograd state are kept. Returns self."""
    if self.device.type != "cpu" or is_shared(self):
        return self
    nbytes = _storage_of(self)[1]
    if nbytes == 0:
        return self
    fd = _os.memfd_create("oneflow_like_storage", _os.MFD_CLOEXEC)
    try:
        _os.ftruncate(fd, nbytes)
        raw = _map_shared(fd, nbytes)
    except BaseException:
        _os.close(fd)
        raise
    with _flow.no_grad():
        raw.copy_(self._storage_view().view(_flow.uint8))
        _flow._C.sync()  # the bytes are in place before any other process can map them
        self._rebind_(_typed_view(raw, self), False, False)
    return self


def _rebuild_shared(dupfd, nbytes, dtype_str, shape, stride, offset, requires_grad, is_param):
    fd = _detach_fd(dupfd)
    try:
        raw = _map_shared(fd, nbytes)
    except BaseException:
        _os.close(fd)
        raise
    t = raw.view(getattr(_flow, dtype_str)).as_strided(tuple(shape), tuple(stride), offset)
    return _finish(t, requires_grad, is_param)


def _detach_fd(dupfd):
    try:
        return dupfd.detach()
    except (EOFError, OSError) as e:
        raise RuntimeError(
            "oneflow_like.multiprocessing: the process that sent this tensor exited before "
            f"its shared memory could be received ({e!r})"
        ) from None


def _finish(t, requires_grad, is_param):
    if is_param:
        from oneflow_like.nn import Parameter

        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(dupfd, nbytes, shape, dtype_str, requires_grad, is_param=False):
    if nbytes == 0:
        t = _flow.from_numpy(_np.empty(shape, dtype=_np.dtype(dtype_str)))
    else:
        fd = _detach_fd(dupfd)
        try:
            raw = _map_shared(fd, nbytes)  # received tensors live in shared memory, as torch's
        except BaseException:
            _os.close(fd)
            raise
        dtype = _flow.from_numpy(_np.empty(0, dtype=_np.dtype(dtype_str))).dtype
        t = raw.view(dtype).reshape(shape)
    return _finish(t, requires_grad, is_param)


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
    if is_shared(t):  # pass the block itself: both sides then write the same memory
        _flow._C.sync()
        fd, nbytes = _shared[_storage_of(t)[0]]
        return _rebuild_shared, (
            _reduction.DupFd(fd),
            nbytes,
            str(t.dtype).split(".")[-1],
            tuple(t.shape),
            tuple(t.stride()),
            t.storage_offset(),
            t.requires_grad,
            is_param,
        )
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
    popen = _spawning_popen()
    try:
        _os.ftruncate(fd, nbytes)
        with _mmap.mmap(fd, nbytes, flags=_mmap.MAP_SHARED) as mm:
            _np.frombuffer(mm, dtype=arr.dtype).reshape(arr.shape)[...] = arr
        dupfd = _reduction.DupFd(fd)
    finally:
        if popen is None:
            _os.close(fd)  # a Queue/Pipe send: DupFd holds its own duplicate
        else:
            # A Process argument under spawn/forkserver: the descriptor itself is handed to the
            # child when it starts, after pickling; it stays open while the Process lives.
            _weakref.finalize(popen, _os.close, fd)
    return _rebuild_tensor, (
        dupfd,
        nbytes,
        tuple(arr.shape),
        arr.dtype.str,
        t.requires_grad,
        is_param,
    )


def _spawning_popen():
    from multiprocessing import context

    return context.get_spawning_popen()


def _register():
    from oneflow_like.nn import Parameter

    for cls in (_flow.Tensor, Parameter):
        _reduction.ForkingPickler.register(cls, _reduce_tensor)
    _flow.Tensor.share_memory_ = share_memory_
    _flow.Tensor.is_shared = is_shared


_register()

# torch.multiprocessing.spawn / start_processes (the DDP launch helpers).
from .spawn import (  # noqa: E402,F401
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ += ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException"]
__all__ += ["ProcessExitedException"]
