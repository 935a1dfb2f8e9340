"""Padding layers (torch.nn names): Constant/Zero/Reflection/Replication/CircularPad{1,2,3}d."""
from oneflow_like.nn import functional as F
from oneflow_like.nn.modules.module import Module


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        n = 2 * self._n
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * n
        if len(self.padding) != n:
            raise ValueError(
                f"{type(self).__name__}: padding must be an int or {n} ints, got {padding}"
            )
        self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


def _pad_class(name, n, mode, zero=False):
    cls = type(name, (_PadNd,), {"_n": n, "_mode": mode, "__module__": __name__})
    if zero:
        cls.__init__ = lambda self, padding: _PadNd.__init__(self, padding, 0.0)
    return cls


ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant")
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant")
ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant", zero=True)
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", zero=True)
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant", zero=True)
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate")
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate")
CircularPad1d = _pad_class("CircularPad1d", 1, "circular")
CircularPad2d = _pad_class("CircularPad2d", 2, "circular")
CircularPad3d = _pad_class("CircularPad3d", 3, "circular")
