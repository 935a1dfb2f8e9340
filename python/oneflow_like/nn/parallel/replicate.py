"""torch.nn.parallel.replicate: one copy of a module per device. A replica shares the module's
structure; its parameters are differentiable copies of the original's (gradients flow back to the
original parameters, summed over replicas), its buffers plain copies."""
import oneflow_like as flow
from oneflow_like.nn.parallel.comm import _device

__all__ = ["replicate"]


def _copy(module, device, detach, memo):
    if module in memo:
        return memo[module]
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    memo[module] = replica
    params = {}
    for name, p in module._parameters.items():
        if p is None:
            params[name] = None
        else:
            c = p.detach().to(device) if detach else p.to(device)
            params[name] = c if c is not p else p
    replica.__dict__["_parameters"] = params
    replica.__dict__["_buffers"] = {
        n: (None if b is None else b.detach().to(device)) for n, b in module._buffers.items()
    }
    replica.__dict__["_modules"] = {
        n: (None if m is None else _copy(m, device, detach, memo))
        for n, m in module._modules.items()
    }
    return replica


def replicate(network, devices, detach=False):
    """A list of len(devices) replicas of `network` (detach=True: parameters without a path
    back to the originals)."""
    if not devices:
        return []
    return [_copy(network, _device(d), detach, {}) for d in devices]
