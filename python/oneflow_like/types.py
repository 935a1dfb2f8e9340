"""torch.types: the type aliases annotations use (`from torch.types import Number, Device`)."""
import builtins
from typing import List, Sequence, Tuple, Union

import oneflow_like as flow

Number = Union[builtins.int, builtins.float, builtins.bool]
_int, _float, _bool, _complex = builtins.int, builtins.float, builtins.bool, builtins.complex
_dtype = flow.dtype
_device = flow.device
_size = Union[flow.Size, List[builtins.int], Tuple[builtins.int, ...]]
_layout = type(flow.strided)
Device = Union[flow.device, builtins.str, builtins.int, None]
_TensorOrTensors = Union[flow.Tensor, Sequence[flow.Tensor]]
Storage = flow.UntypedStorage
PySymInt = builtins.int
SymInt = builtins.int

__all__ = ["Number", "Device", "Storage", "SymInt"]
