"""Mixed precision (torch.amp): autocast regions and the gradient scaler.

Autocast is applied by the runtime's one dispatch point (oneflow_like/framework/autocast.cc):
ops on PyTorch's lower-precision list run in the region's dtype, ops on its float32 list in f32,
the promote list in the widest input type; everything else runs in its inputs' dtype.
"""
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = [
    "autocast",
    "GradScaler",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
]
