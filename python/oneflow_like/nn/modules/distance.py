"""torch.nn.modules.distance at torch's module path."""
from oneflow_like.nn.modules.misc import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
