"""nn.parallel: DataParallel on one device (the module runs where its parameters are; inputs are
moved to device_ids[0]). Replicating over several devices is not supported: it raises."""
import oneflow_like as flow
from oneflow_like.nn.modules.module import Module


def _device_ids(name, device_ids):
    if not flow.cuda.is_available():
        return []
    ids = list(range(flow.cuda.device_count())) if device_ids is None else list(device_ids)
    ids = [d.index if isinstance(d, flow.device) else int(str(d).split(":")[-1]) for d in ids]
    if len(ids) > 1:
        raise NotImplementedError(
            f"[{name}] replicas on {len(ids)} devices ({ids}) are not supported; "
            "pass device_ids=[i] for one device"
        )
    return ids


def _to(obj, device):
    if isinstance(obj, flow.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    return obj


class DataParallel(Module):
    """Wraps `module` (kept as .module, so state_dict keys start with "module.")."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = _device_ids("DataParallel", device_ids)
        self.output_device = (
            output_device
            if output_device is not None
            else (self.device_ids[0] if self.device_ids else None)
        )
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        if self.device_ids:
            device = flow.device(f"cuda:{self.device_ids[0]}")
            inputs, kwargs = _to(inputs, device), _to(kwargs, device)
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form: module(*inputs, **module_kwargs) on one device."""
    ids = _device_ids("data_parallel", device_ids)
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    module_kwargs = module_kwargs or {}
    if ids:
        device = flow.device(f"cuda:{ids[0]}")
        inputs, module_kwargs = _to(inputs, device), _to(module_kwargs, device)
    return module(*inputs, **module_kwargs)


__all__ = ["DataParallel", "data_parallel"]
