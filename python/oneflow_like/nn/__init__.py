"""oneflow_like.nn: layers (Module and friends), nn.functional, nn.init and nn.utils.

nn.Graph (lazy mode) is defined elsewhere and attached to this package by its own module.
"""
from oneflow_like.nn import functional, init, utils
from oneflow_like.nn.modules import *  # noqa: F401,F403
