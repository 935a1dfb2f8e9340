"""oneflow_like.optim: optimizers (in-place updates under no_grad) and lr_scheduler."""
from oneflow_like.optim import lr_scheduler, swa_utils
from oneflow_like.optim.adadelta import Adadelta
from oneflow_like.optim.adafactor import Adafactor
from oneflow_like.optim.adagrad import Adagrad
from oneflow_like.optim.adam import Adam, AdamW
from oneflow_like.optim.adamax import Adamax
from oneflow_like.optim.asgd import ASGD
from oneflow_like.optim.lbfgs import LBFGS
from oneflow_like.optim.nadam import NAdam, RAdam
from oneflow_like.optim.optimizer import Optimizer
from oneflow_like.optim.rmsprop import RMSprop
from oneflow_like.optim.rprop import Rprop
from oneflow_like.optim.sgd import SGD
from oneflow_like.optim.sparse_adam import SparseAdam

__all__ = [
    "ASGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SGD",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
]
