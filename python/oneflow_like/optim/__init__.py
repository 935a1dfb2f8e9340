"""oneflow_like.optim: optimizers (in-place updates under no_grad) and lr_scheduler."""
from oneflow_like.optim import lr_scheduler
from oneflow_like.optim.adam import Adam, AdamW
from oneflow_like.optim.optimizer import Optimizer
from oneflow_like.optim.rmsprop import RMSprop
from oneflow_like.optim.sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
