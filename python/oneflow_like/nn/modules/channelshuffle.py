"""torch.nn.modules.channelshuffle at torch's module path."""
from oneflow_like.nn.modules.misc import ChannelShuffle

__all__ = ["ChannelShuffle"]
