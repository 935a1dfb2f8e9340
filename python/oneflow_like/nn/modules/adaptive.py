"""torch.nn.modules.adaptive at torch's module path."""
from oneflow_like.nn.modules.compat import AdaptiveLogSoftmaxWithLoss, _ASMoutput

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
