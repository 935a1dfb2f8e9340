"""torch.nn.modules.pixelshuffle at torch's module path."""
from oneflow_like.nn.modules.upsampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
