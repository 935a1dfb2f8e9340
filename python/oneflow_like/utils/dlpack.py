"""oneflow_like.utils.dlpack: torch.utils.dlpack's two functions.

to_dlpack(t) returns a legacy "dltensor" capsule (as torch.utils.dlpack.to_dlpack does);
from_dlpack(x) takes any object with __dlpack__ (NumPy, PyTorch, JAX, ours) or a capsule, and
shares its memory. Both are zero-copy; python/csrc/dlpack_py.cc holds the protocol.
"""
from oneflow_like import _C


def to_dlpack(tensor):
    return tensor.__dlpack__()


from_dlpack = _C.from_dlpack

__all__ = ["to_dlpack", "from_dlpack"]
