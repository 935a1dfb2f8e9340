"""torch.nn.modules.fold at torch's module path."""
from oneflow_like.nn.modules.misc import Fold, Unfold

__all__ = ["Fold", "Unfold"]
