"""flow.accelerator (torch.accelerator): the one accelerator type this process can use, CUDA
when a device is present, else none (the CPU is not an accelerator)."""
import oneflow_like as flow


def is_available():
    return flow.cuda.is_available()


def device_count():
    return flow.cuda.device_count()


def current_accelerator(check_available=False):
    """flow.device("cuda") when a CUDA device is present, else None."""
    return flow.device("cuda") if is_available() else None


def current_device_index():
    """The index of the device ops run on: always 0 (there is no set_device yet); -1 without an
    accelerator."""
    return 0 if is_available() else -1


current_device_idx = current_device_index


def synchronize(device=None):
    """Waits for every op queued on the accelerator (and the VM) to finish."""
    if not is_available():
        raise RuntimeError("[accelerator.synchronize] no accelerator is available")
    flow.cuda.synchronize(device)


__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "device_count",
    "is_available",
    "synchronize",
]
