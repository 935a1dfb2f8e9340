"""torch.nn.utils.init: skip_init."""
import inspect


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialized parameters and buffers (module_cls must
    take a `device` argument). There is no meta device: the module is built on `device`, then
    to_empty replaces its tensors with fresh uninitialized ones."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    kwargs["device"] = device
    return module_cls(*args, **kwargs).to_empty(device=device)
