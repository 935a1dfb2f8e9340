"""The deprecated torch.cpu.amp and torch.cuda.amp namespaces: modules registered under
oneflow_like.cpu(.amp) and oneflow_like.cuda.amp so that both attribute access and imports work."""
import sys
import types

from oneflow_like import _C

from .autocast_mode import cpu_autocast, cuda_autocast
from .grad_scaler import GradScaler


class _CudaGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler: GradScaler("cuda", ...)."""

    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__path__ = []  # a package: `import torch.cpu.amp` resolves through mock_torch too
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


cpu_amp = _module("oneflow_like.cpu.amp", autocast=cpu_autocast, GradScaler=GradScaler)
cpu = _module("oneflow_like.cpu", amp=cpu_amp)
cuda_amp = _module("oneflow_like.cuda.amp", autocast=cuda_autocast, GradScaler=_CudaGradScaler)
_C.cuda.amp = cuda_amp
if not hasattr(_C.cuda, "__path__"):
    _C.cuda.__path__ = []
sys.modules.setdefault("oneflow_like.cuda", _C.cuda)
