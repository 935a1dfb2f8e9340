"""The nn layers, one file per family."""
from oneflow_like.nn.modules.module import Module, ModuleDict, ModuleList, Parameter, Sequential
from oneflow_like.nn.modules.linear import Identity, Linear
from oneflow_like.nn.modules.conv import Conv1d, Conv2d
from oneflow_like.nn.modules.pooling import (
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from oneflow_like.nn.modules.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from oneflow_like.nn.modules.activation import (
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from oneflow_like.nn.modules.sparse import Embedding
from oneflow_like.nn.modules.dropout import Dropout
from oneflow_like.nn.modules.flatten import Flatten, Unflatten
from oneflow_like.nn.modules.loss import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from oneflow_like.nn.modules.transformer import (
    MultiheadAttention,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "AdaptiveAvgPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv1d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "GroupNorm",
    "Identity",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool1d",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiheadAttention",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "Unflatten",
]
