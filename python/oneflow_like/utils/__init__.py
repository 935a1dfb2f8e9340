"""oneflow_like.utils: data loading (utils.data), DLPack exchange (utils.dlpack) and activation
checkpointing (utils.checkpoint)."""
from oneflow_like.utils import checkpoint, data, dlpack, hooks

__all__ = ["checkpoint", "data", "dlpack"]
