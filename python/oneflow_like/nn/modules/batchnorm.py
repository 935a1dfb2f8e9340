"""torch.nn.modules.batchnorm: the batch-norm classes, where torch's module path puts them
(libraries import `_BatchNorm` from here for isinstance checks)."""
from oneflow_like.nn.modules.lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from oneflow_like.nn.modules.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    SyncBatchNorm,
    _BatchNorm,
)

_NormBase = _BatchNorm  # torch's common base of the batch norms

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]
