"""oneflow_like.utils: data loading (utils.data) and DLPack exchange (utils.dlpack)."""
from oneflow_like.utils import data, dlpack

__all__ = ["data", "dlpack"]
