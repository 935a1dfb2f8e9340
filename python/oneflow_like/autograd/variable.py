"""torch.autograd.variable: the deprecated Variable at torch's module path (Variable(t) returns t,
with requires_grad as asked)."""
from oneflow_like.autograd.anomaly_mode import Variable

__all__ = ["Variable"]
