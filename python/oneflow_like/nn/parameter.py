"""torch.nn.parameter: Parameter, Buffer and the placeholders of the lazy modules."""
from oneflow_like.nn.modules.lazy import UninitializedBuffer, UninitializedParameter  # noqa: F401
from oneflow_like.nn.modules.module import Buffer, Parameter  # noqa: F401
