"""torch.cuda names on flow.cuda (issue 19) built from what the runtime binds (is_available,
device_count, synchronize, memory_allocated, max_memory_allocated, memory_reserved,
max_memory_reserved, reset_peak_memory_stats, empty_cache). Without a device they behave as PyTorch's do: queries
that need one raise "No CUDA GPUs are available", statistics read 0 / {}.

Streams and events: the VM orders all the work of a device on one stream, so Stream objects
name that stream (wait_stream and stream() contexts keep the order they ask for), and
Event.record() / elapsed_time() time completed work (record synchronizes the device first).
Device names, capabilities and properties and mem_get_info come from cudaGetDeviceProperties /
cudaMemGetInfo (device/cuda/cuda_api.h); get_arch_list from the build's nvcc targets.
"""
import time

from oneflow_like import _C

cuda = _C.cuda
_NO_DEVICE = "No CUDA GPUs are available"


def _lazy_init(who):
    if not cuda.is_available():
        raise RuntimeError(f"[cuda.{who}] {_NO_DEVICE}")


def _index(device, who, optional=True):
    """A device index from an int, 'cuda:i', a device or None (the current device)."""
    if device is None:
        return _current[0]
    if isinstance(device, int):
        idx = device
    else:
        d = _C.device(device) if isinstance(device, str) else device
        if not isinstance(d, _C.device) or d.type != "cuda":
            raise ValueError(f"[cuda.{who}] expected a CUDA device, got {device!r}")
        idx = _current[0] if d.index is None or d.index < 0 else d.index
    if not 0 <= idx < max(cuda.device_count(), 1 if optional else 0):
        raise RuntimeError(
            f"[cuda.{who}] invalid device ordinal {idx} ({cuda.device_count()} device(s))"
        )
    return idx


_current = [0]


def is_initialized():
    """Whether CUDA is usable (this runtime initializes it when the extension loads)."""
    return cuda.is_available()


def init():
    _lazy_init("init")


def current_device():
    _lazy_init("current_device")
    return _current[0]


def set_device(device):
    """Only device 0 can be current: the runtime places 'cuda' tensors on cuda:0."""
    _lazy_init("set_device")
    idx = _index(device, "set_device", optional=False)
    if idx != 0:
        raise RuntimeError(
            f"[cuda.set_device] this runtime places 'cuda' tensors on cuda:0; name the device "
            f"(cuda:{idx}) instead of making it current"
        )
    _current[0] = idx


class device:
    """torch.cuda.device(idx): a context that makes a device current (device 0 here)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device, "device")
        self._prev = None

    def __enter__(self):
        if self.idx >= 0:
            self._prev = _current[0]
            set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self._prev is not None:
            _current[0] = self._prev
        return False


class _CudaDeviceProperties:
    """torch.cuda.get_device_properties' result: name, major, minor, total_memory (bytes),
    multi_processor_count, is_integrated, is_multi_gpu_board, max_threads_per_multi_processor,
    warp_size, L2_cache_size, uuid, pci_bus_id, pci_device_id, pci_domain_id."""

    def __init__(self, props):
        self.__dict__.update(props)

    def __repr__(self):
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid[4:]}, "
            f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)"
        )


def get_device_properties(device=None):
    _lazy_init("get_device_properties")
    return _CudaDeviceProperties(
        cuda._get_device_properties(_index(device, "get_device_properties"))
    )


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None):
    """(free, total) bytes of the device, as the driver reports them."""
    _lazy_init("mem_get_info")
    return tuple(cuda._mem_get_info(_index(device, "mem_get_info")))


def is_bf16_supported():
    """False without a device; with one, the runtime's CUDA kernels cover bfloat16."""
    return bool(cuda.is_available())


def get_arch_list():
    """The build's nvcc targets ('sm_90' SASS, 'compute_80' PTX); [] without a device, as torch."""
    if not cuda.is_available():
        return []
    return list(cuda._build_info()["arch_list"])


def get_gencode_flags():
    """nvcc -gencode flags for get_arch_list()'s targets, as torch.cuda.get_gencode_flags."""
    flags = []
    for arch in get_arch_list():
        kind, num = arch.split("_", 1)
        flags.append(f"-gencode compute=compute_{num},code={kind}_{num}")
    return " ".join(flags)


def reset_max_memory_allocated(device=None):
    """Deprecated in torch: resets the peak (reset_peak_memory_stats)."""
    if cuda.is_available():
        cuda.reset_peak_memory_stats(device)


class device_of(device):
    """torch.cuda.device_of(obj): makes obj's device current when obj is a CUDA tensor (no-op
    otherwise)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if getattr(obj, "is_cuda", False) else None)


def memory_cached(device=None):
    """Deprecated in torch: memory_reserved."""
    return cuda.memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated in torch: max_memory_reserved."""
    return cuda.max_memory_reserved(device)


def reset_max_memory_cached(device=None):
    """Deprecated in torch: resets the peaks (reset_peak_memory_stats)."""
    reset_max_memory_allocated(device)


class CudaError(RuntimeError):
    """torch.cuda.CudaError: an error the CUDA runtime reported."""

    def __init__(self, code):
        super().__init__(f"CUDA error {code}")
        self.code = code


class DeferredCudaCallError(Exception):
    """torch.cuda.DeferredCudaCallError: a call queued until CUDA initialization failed."""


def is_current_stream_capturing():
    """Whether the current stream is capturing a CUDA graph: never, from Python (nn.Graph's
    own captures start and end inside one compiled run)."""
    return False


def memory_stats(device=None):
    """The allocator's counters under torch's keys ({} without a device, as torch)."""
    if not cuda.is_available():
        return {}
    d = _index(device, "memory_stats")
    return {
        "allocated_bytes.all.current": cuda.memory_allocated(d),
        "allocated_bytes.all.peak": cuda.max_memory_allocated(d),
        "reserved_bytes.all.current": cuda.memory_reserved(d),
        "reserved_bytes.all.peak": cuda.max_memory_reserved(d),
    }


def memory_stats_as_nested_dict(device=None):
    """memory_stats with its dotted keys split into nested dicts, as torch's."""
    nested = {}
    for key, value in memory_stats(device).items():
        node = nested
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def memory_summary(device=None, abbreviated=False):
    """A text table of memory_stats (or the line torch prints without a device)."""
    stats = memory_stats(device)
    if not stats:
        return "CUDA memory summary: no CUDA device\n"
    lines = [f"|{'CUDA memory summary, device ' + str(_index(device, 'memory_summary')):^58}|"]
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
              "reserved_bytes.all.current", "reserved_bytes.all.peak"):  # fmt: skip
        lines.append(f"| {k:<36} {stats[k] / 2**20:>14.2f} MiB |")
    return "\n".join(lines) + "\n"


# ---- streams and events -----------------------------------------------------------------------


class Stream:
    """The VM's stream of a CUDA device (one per device: all work there runs in issue order)."""

    def __init__(self, device=None, priority=0, **kwargs):
        _lazy_init("Stream")
        self.device_index = _index(device, "Stream")
        self.priority = priority

    @property
    def device(self):
        return _C.device(f"cuda:{self.device_index}")

    def synchronize(self):
        cuda.synchronize(self.device_index)

    def query(self):
        """True once the work issued so far finished (waits for it: the VM exposes no poll)."""
        self.synchronize()
        return True

    def wait_stream(self, stream):
        """Work issued after this call runs after `stream`'s: always so on one ordered stream."""

    def wait_event(self, event):
        """Same stream: work after this already follows the event's point."""

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self):
        return hash(("cuda-stream", self.device_index))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:{self.device_index}>"


def current_stream(device=None):
    return Stream(device)


def default_stream(device=None):
    return Stream(device)


class StreamContext:
    """`with torch.cuda.stream(s):` (the work inside runs in order on the device's stream)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _lazy_init("stream")
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class Event:
    """torch.cuda.Event: record() marks the point after the work issued so far (it waits for
    that work, then reads the clock); elapsed_time gives milliseconds between two events."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        _lazy_init("Event")
        self.enable_timing = enable_timing
        self._time = None
        self._device = None

    def record(self, stream=None):
        s = stream or current_stream()
        s.synchronize()
        self._device = s.device_index
        self._time = time.perf_counter()

    def query(self):
        return self._time is not None

    def synchronize(self):
        if self._device is not None:
            cuda.synchronize(self._device)

    def wait(self, stream=None):
        """Work issued after this runs after the event's point (one ordered stream)."""

    def elapsed_time(self, end_event):
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("[cuda.Event.elapsed_time] both events need enable_timing=True")
        if self._time is None or end_event._time is None:
            raise RuntimeError("[cuda.Event.elapsed_time] both events must be recorded first")
        return (end_event._time - self._time) * 1000.0


_NAMES = [
    "is_initialized", "init", "current_device", "set_device", "device", "get_device_name",
    "get_device_capability", "get_device_properties", "mem_get_info", "is_bf16_supported",
    "get_arch_list", "get_gencode_flags", "reset_max_memory_allocated", "device_of", "memory_cached",
    "max_memory_cached", "reset_max_memory_cached", "CudaError", "DeferredCudaCallError",
    "is_current_stream_capturing", "memory_stats_as_nested_dict", "memory_stats",
    "memory_summary", "Stream", "current_stream", "default_stream", "StreamContext", "stream",
    "Event",
]  # fmt: skip


def install(typed_classes):
    for name in _NAMES:
        if not hasattr(cuda, name):
            setattr(cuda, name, globals()[name])
    for name, cls in typed_classes.items():  # torch.cuda.FloatTensor, ...
        if not hasattr(cuda, name):
            setattr(cuda, name, cls)
