"""torch.nn.parallel.comm: copies of tensors across devices (broadcast, reduce_add, scatter,
gather), made with differentiable .to() copies. A device is an int (CUDA ordinal), a string or a
flow.device; -1 or "cpu" is the CPU."""
import oneflow_like as flow

__all__ = [
    "broadcast",
    "broadcast_coalesced",
    "reduce_add",
    "reduce_add_coalesced",
    "scatter",
    "gather",
]


def _device(d):
    if isinstance(d, flow.device):
        return d
    if isinstance(d, int):
        return flow.device("cpu") if d < 0 else flow.device(f"cuda:{d}")
    return flow.device(d)


def broadcast(tensor, devices=None, *, out=None):
    """tensor copied to each of `devices` (or into each tensor of `out`)."""
    if (devices is None) == (out is None):
        raise RuntimeError("[broadcast] exactly one of devices and out must be given")
    if out is not None:
        for o in out:
            o.copy_(tensor)
        return tuple(out)
    return tuple(tensor.to(_device(d)) for d in devices)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """Each tensor of `tensors` copied to each device: one tuple of copies per device."""
    return [tuple(t.to(_device(d)) for t in tensors) for d in devices]


def reduce_add(inputs, destination=None):
    """The sum of same-shaped tensors from several devices, on `destination` (default: the
    first input's device)."""
    if not inputs:
        raise RuntimeError("[reduce_add] expected at least one tensor")
    shape = tuple(inputs[0].shape)
    for i, t in enumerate(inputs):
        if tuple(t.shape) != shape:
            raise ValueError(
                f"[reduce_add] input {i} has shape {tuple(t.shape)}, but input 0 has {shape}"
            )
    dest = inputs[0].device if destination is None else _device(destination)
    total = inputs[0].to(dest)
    for t in inputs[1:]:
        total = total + t.to(dest)
    return total


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """reduce_add of each position of several equally long lists of tensors."""
    return tuple(reduce_add(list(group), destination) for group in zip(*inputs))


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """tensor split along dim (evenly, or by chunk_sizes), one piece per device."""
    if out is not None:
        pieces = tensor.split([o.shape[dim] for o in out], dim)
        for o, p in zip(out, pieces):
            o.copy_(p)
        return tuple(out)
    if devices is None:
        raise RuntimeError("[scatter] devices or out must be given")
    if chunk_sizes is None:
        pieces = tensor.chunk(len(devices), dim)
    else:
        if sum(chunk_sizes) != tensor.shape[dim]:
            raise ValueError(
                f"[scatter] chunk_sizes {list(chunk_sizes)} do not sum to dim {dim}'s size "
                f"{tensor.shape[dim]}"
            )
        pieces = tensor.split(list(chunk_sizes), dim)
    return tuple(p.to(_device(d)) for p, d in zip(pieces, devices))


def gather(tensors, dim=0, destination=None, *, out=None):
    """The tensors concatenated along dim on `destination` (default: the CPU... as torch's -1;
    an int ordinal, a device or a string), or into `out`."""
    if out is not None:
        return out.copy_(flow.cat([t.to(out.device) for t in tensors], dim))
    dest = _device(-1 if destination is None else destination)
    return flow.cat([t.to(dest) for t in tensors], dim)
