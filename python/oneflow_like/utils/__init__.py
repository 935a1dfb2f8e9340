"""oneflow_like.utils: data loading (utils.data)."""
from oneflow_like.utils import data

__all__ = ["data"]
