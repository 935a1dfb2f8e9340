"""torch.nn.parallel.scatter_gather: split nested inputs across devices and gather nested outputs
back (tensors are split along `dim`; tuples, lists, dicts and namedtuples are walked; other
objects are given to every device)."""
import oneflow_like as flow
from oneflow_like.nn.parallel.comm import _device

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim=0):
    """A list with one entry per device (fewer when a tensor has fewer rows than devices)."""

    def walk(obj):
        if isinstance(obj, flow.Tensor):
            return [p.to(_device(d)) for p, d in zip(obj.chunk(len(target_gpus), dim), target_gpus)]
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(walk, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(walk, obj)))
        if isinstance(obj, list) and obj:
            return [list(i) for i in zip(*map(walk, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(i) for i in zip(*map(walk, obj.items()))]
        return [obj for _ in target_gpus]

    return walk(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter of the positional and keyword arguments, padded to the same count."""
    scattered = scatter(inputs, target_gpus, dim) if inputs else []
    kw = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered) < len(kw):
        scattered.extend(() for _ in range(len(kw) - len(scattered)))
    elif len(kw) < len(scattered):
        kw.extend({} for _ in range(len(scattered) - len(kw)))
    return tuple(scattered), tuple(kw)


def gather(outputs, target_device, dim=0):
    """The per-device outputs joined on target_device: tensors concatenated along dim (0-d
    tensors stacked, as torch's with a warning), containers gathered element-wise."""
    dest = _device(target_device)

    def walk(outs):
        first = outs[0]
        if isinstance(first, flow.Tensor):
            if first.dim() == 0:
                return flow.stack([o.to(dest) for o in outs])
            return flow.cat([o.to(dest) for o in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(o) for o in outs):
                raise ValueError("[gather] all dicts must have the same number of keys")
            return type(first)((k, walk([o[k] for o in outs])) for k in first)
        if _is_namedtuple(first):
            return type(first)._make(map(walk, zip(*outs)))
        return type(first)(map(walk, zip(*outs)))

    return walk(outputs)
