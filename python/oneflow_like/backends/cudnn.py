"""flow.backends.cudnn (torch.backends.cudnn): PyTorch's cuDNN flags.

enabled, benchmark, benchmark_limit and deterministic are read and written as in PyTorch
(`flow.backends.cudnn.benchmark = True`) and kept here. Our cuDNN convolutions take the
heuristics' first deterministic algorithm per shape and never time several, so benchmark=True
changes no result and runs are already as deterministic=True asks (kernels/cuda/conv.cc).
allow_tf32 is the runtime's one TF32 switch (flow.cuda.set_allow_tf32), shared with
backends.cuda.matmul.allow_tf32: setting either sets both. It is off by default.
"""
import sys
import types

import oneflow_like as flow

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False


def is_available():
    return flow.cuda.is_available()


def version():
    """The loaded cuDNN's version as an int (91900 = 9.19.0), as torch; None where no CUDA device
    (hence no cuDNN) is usable."""
    if not flow.cuda.is_available():
        return None
    return flow._C.cuda._build_info()["cudnn_runtime"] or None


def is_acceptable(tensor):
    return enabled and is_available() and tensor.device.type == "cuda"


class _CudnnModule(types.ModuleType):
    @property
    def allow_tf32(self):
        from oneflow_like.backends import cuda

        return cuda.matmul.allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        from oneflow_like.backends import cuda

        cuda.matmul.allow_tf32 = value


sys.modules[__name__].__class__ = _CudnnModule
