"""flow.autocast / flow.amp.autocast: a context manager and decorator over the per-thread,
per-device autocast state kept in C++ (read by Dispatch)."""
import functools
import warnings

import oneflow_like as flow
from oneflow_like import _C

_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16"}


def _check_device(device_type):
    if not isinstance(device_type, str):
        raise TypeError(
            f"[autocast] device_type must be a str ('cpu' or 'cuda'), got {type(device_type).__name__}"
        )
    if device_type not in _DEFAULT_DTYPE:
        raise ValueError(f"[autocast] device_type must be 'cpu' or 'cuda', got '{device_type}'")


def is_autocast_available(device_type):
    return device_type in _DEFAULT_DTYPE


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type` (default 'cuda', as torch.is_autocast_enabled())."""
    device_type = "cuda" if device_type is None else device_type
    _check_device(device_type)
    return _C._autocast_get(device_type)[0]


def get_autocast_dtype(device_type):
    """The lower-precision dtype autocast uses on `device_type` (set or default)."""
    _check_device(device_type)
    return getattr(flow, _C._autocast_get(device_type)[1])


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None).

    Inside the region, ops on PyTorch's lists run in `dtype` (default bfloat16 on the CPU,
    float16 on CUDA) or float32; casts of leaf tensors that require grad (weights) are cached
    until the outermost region exits. Regions nest; enabled=False turns autocast off inside.
    Gradients are computed outside autocast and come back in each parameter's dtype.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = flow.bfloat16 if dtype is None and device_type == "cpu" else dtype
        if self.fast_dtype is None:
            self.fast_dtype = getattr(flow, _DEFAULT_DTYPE[device_type])
        self._enabled = bool(enabled)
        self._cache_enabled = True if cache_enabled is None else bool(cache_enabled)
        if self.fast_dtype not in (flow.bfloat16, flow.float16):
            warnings.warn(
                f"In {device_type} autocast, but the target dtype is not supported "
                f"({self.fast_dtype}); only float16 and bfloat16 are. Disabling autocast."
            )
            self._enabled = False
        self._prev = []

    def __enter__(self):
        self._prev.append(_C._autocast_get(self.device))
        _C._autocast_set(self.device, self._enabled, self.fast_dtype, self._cache_enabled)
        _C._autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc, tb):
        if _C._autocast_decrement_nesting() == 0:
            _C._autocast_clear_cache()
        enabled, dtype, cache = self._prev.pop()
        _C._autocast_set(self.device, enabled, getattr(flow, dtype), cache)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return decorate_autocast


class _DeviceAutocast(autocast):
    """The deprecated torch.cpu.amp.autocast / torch.cuda.amp.autocast spellings."""

    _device = "cpu"

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn(
            f"torch.{self._device}.amp.autocast(args...) is deprecated. Please use "
            f"torch.amp.autocast('{self._device}', args...) instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(self._device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class cpu_autocast(_DeviceAutocast):
    _device = "cpu"


class cuda_autocast(_DeviceAutocast):
    _device = "cuda"
