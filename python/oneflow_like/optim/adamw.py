"""torch.optim.adamw: AdamW at torch's module path (defined with Adam in optim/adam.py)."""
from oneflow_like.optim.adam import AdamW

__all__ = ["AdamW"]
