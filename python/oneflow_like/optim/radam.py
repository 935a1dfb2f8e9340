"""torch.optim.radam: RAdam at torch's module path (defined with NAdam in optim/nadam.py)."""
from oneflow_like.optim.nadam import RAdam

__all__ = ["RAdam"]
