"""oneflow_like.nn: layers (Module and friends), nn.functional, nn.init and nn.utils.

nn.Graph (lazy mode) lives in nn/graph.py.
"""
from oneflow_like.nn import functional, init, utils
from oneflow_like.nn.modules import *  # noqa: F401,F403
from oneflow_like.nn.graph import Graph  # noqa: E402,F401
from oneflow_like.nn import parallel  # noqa: E402
from oneflow_like.nn import parameter  # noqa: E402,F401
from oneflow_like.nn.parallel import DataParallel  # noqa: E402,F401
from oneflow_like.nn.modules.compat import *  # noqa: E402,F401,F403  (issue 19)
from oneflow_like.nn.modules.lazy import (
    UninitializedBuffer,
    UninitializedParameter,
)  # noqa: E402,F401
