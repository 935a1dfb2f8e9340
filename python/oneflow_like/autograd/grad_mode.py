"""torch.autograd.grad_mode: the gradient-mode switches at torch's module path."""
from oneflow_like.autograd import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]
