"""torch's process-wide settings: the default float dtype and device, the intra-op and inter-op thread
counts, and deterministic algorithms. The values live in the extension (python/csrc/
global_state_py.cc), where the factories, the kernels and the GEMM autotuner read them."""
import os
import warnings

from oneflow_like import _C

# ---- default dtype ------------------------------------------------------------------------------


def set_default_dtype(d):
    """torch.set_default_dtype: the dtype of floating tensors made without one (factories with
    dtype=None, tensors from Python floats, integer tensors combined with a Python float, and so
    nn layers' parameters). Floating dtypes only."""
    if not isinstance(d, _C.dtype):
        raise TypeError(f"[set_default_dtype] expects a flow.dtype, got {type(d).__name__}")
    _C._set_default_dtype(d)


def get_default_dtype():
    """torch.get_default_dtype (float32 unless set_default_dtype changed it)."""
    return _C._get_default_dtype()


# ---- default device -----------------------------------------------------------------------------


def set_default_device(device):
    """torch.set_default_device: the device of tensors the factories make without device=
    (zeros/ones/empty/full/arange/linspace/eye/rand*/tensor(data), and so nn layers' parameters).
    None or "cpu" restores the CPU. The *_like factories keep their input's device."""
    _C._set_default_device(device)


def get_default_device():
    """torch.get_default_device (cpu unless set_default_device or a `with flow.device(...)`
    block changed it)."""
    return _C._get_default_device()


_device_stack = []


def _device_enter(self):
    """`with flow.device("cuda:0"):` makes it the default device inside the block, as torch 2.x."""
    _device_stack.append(_C._get_default_device())
    _C._set_default_device(self)
    return self


def _device_exit(self, *exc):
    _C._set_default_device(_device_stack.pop())
    return False


_C.device.__enter__ = _device_enter
_C.device.__exit__ = _device_exit


_TENSOR_TYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "IntTensor": "int32",
    "LongTensor": "int64",
    "BoolTensor": "bool",
}


def set_default_tensor_type(t):
    """torch.set_default_tensor_type (deprecated since PyTorch 2.1): 'torch.FloatTensor' or
    'torch.DoubleTensor' (also spelled with oneflow_like.) set the default dtype. The CUDA
    types would also move the default device, which this runtime does not have."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"[set_default_tensor_type] invalid type object: {t!r}")
    parts = name.split(".")
    if "cuda" in parts:
        raise TypeError(
            f"[set_default_tensor_type] {name}: CUDA tensor types would set a default device, "
            "which this runtime does not have; use set_default_dtype and device= instead"
        )
    if parts[-1] not in _TENSOR_TYPES or (
        len(parts) > 1 and parts[0] not in ("torch", "oneflow_like")
    ):
        raise TypeError(f"[set_default_tensor_type] invalid type: {name!r}")
    dtype = getattr(_C.dtype, _TENSOR_TYPES[parts[-1]])
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C._set_default_dtype(dtype)


# ---- threads ------------------------------------------------------------------------------------


def _positive_int(n, who):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{who} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{who} expects a positive integer")
    return n


def set_num_threads(int):  # noqa: A002  (torch's parameter name)
    """torch.set_num_threads: how many threads run one CPU kernel: the intra-op pool (our
    elementwise, reduction, GEMM-splitting loops; the caller counts as one) and the OpenMP team of
    oneDNN's matmul and convolution primitives. Takes effect for kernels that start after it."""
    _C._set_num_threads(_positive_int(int, "set_num_threads"))


def get_num_threads():
    """torch.get_num_threads: the core count unless set_num_threads or ONEFLOW_LIKE_NUM_THREADS
    says otherwise."""
    return _C._get_num_threads()


_interop = {"threads": None, "used": False}


def set_num_interop_threads(int):  # noqa: A002
    """torch.set_num_interop_threads: the size of the inter-op pool that torch.jit.fork tasks run
    on, set once, before first use, with PyTorch's errors (a positive int, set at most once,
    before it was read). Ops inside each task still go through the VM (independent ops already
    run concurrently on its per-stream threads, which this count does not change)."""
    n = _positive_int(int, "set_num_interop_threads")
    if _interop["threads"] is not None or _interop["used"]:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _interop["threads"] = n


def get_num_interop_threads():
    """torch.get_num_interop_threads: the core count unless set_num_interop_threads was called."""
    _interop["used"] = True
    return _interop["threads"] if _interop["threads"] is not None else (os.cpu_count() or 1)


# ---- deterministic algorithms -------------------------------------------------------------------


def use_deterministic_algorithms(mode, *, warn_only=False):
    """torch.use_deterministic_algorithms. The kernels of this runtime are deterministic by
    construction: no floating-point atomics (CPU and CUDA scatters, index_add / index_put with
    accumulate and embedding gradients keep a fixed order; reductions add partials in a fixed
    order; random numbers are counter-based). What the flag changes: a compiled graph's f32 CPU
    GEMM takes the fixed shape rule instead of timing oneDNN against OpenBLAS (their sums differ
    in order), and a CUDA convolution for which cuDNN offers no deterministic algorithm fails
    naming the op (warn_only: warns on stderr once per op). No other op raises or warns."""
    if not isinstance(mode, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    if not isinstance(warn_only, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not "
            f"{type(warn_only).__name__}"
        )
    _C._set_deterministic_algorithms(mode, warn_only)


def are_deterministic_algorithms_enabled():
    return _C._deterministic_algorithms()[0]


def is_deterministic_algorithms_warn_only_enabled():
    return _C._deterministic_algorithms()[1]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """torch.set_deterministic_debug_mode: 0/'default' off, 1/'warn' warn only, 2/'error' on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    mode, warn_only = _C._deterministic_algorithms()
    return 0 if not mode else (1 if warn_only else 2)


__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_default_device",
    "get_default_dtype",
    "get_deterministic_debug_mode",
    "get_num_interop_threads",
    "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_default_device",
    "set_default_dtype",
    "set_default_tensor_type",
    "set_deterministic_debug_mode",
    "set_num_interop_threads",
    "set_num_threads",
    "use_deterministic_algorithms",
]
