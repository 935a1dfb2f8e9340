"""oneflow_like: an eager deep-learning runtime on a virtual machine, with a PyTorch-style API.

    import oneflow_like as flow
    x = flow.randn(4, 3, requires_grad=True)
    (x * 2).sum().backward()
"""
import atexit as _atexit

__version__ = "0.1.0"


class OutOfMemoryError(RuntimeError, MemoryError):
    """torch.OutOfMemoryError / torch.cuda.OutOfMemoryError: an allocation the caching allocator
    could not satisfy (its message names the device and the bytes requested, allocated and
    reserved). A RuntimeError, as torch's, and a MemoryError."""


from ._loader import load_extension as _load_extension

_C = _load_extension()
# Asynchronous errors name the Python line that issued the failing op (frames of this package
# name their caller); _C._set_issue_sites(None) turns that off.
_C._set_issue_sites(__import__("os").path.dirname(__file__))

from ._C import Tensor, device, dtype  # noqa: E402

# dtypes under their PyTorch names
bool = _C.dtype.bool  # noqa: A001
uint8 = _C.dtype.uint8
int8 = _C.dtype.int8
int32 = _C.dtype.int32
int64 = _C.dtype.int64
float16 = _C.dtype.float16
bfloat16 = _C.dtype.bfloat16
float32 = _C.dtype.float32
float64 = _C.dtype.float64
int16 = _C.dtype.int16
uint16 = _C.dtype.uint16
uint32 = _C.dtype.uint32
uint64 = _C.dtype.uint64
float8_e4m3fn = _C.dtype.float8_e4m3fn
float8_e5m2 = _C.dtype.float8_e5m2
float8_e4m3fnuz = _C.dtype.float8_e4m3fnuz
float8_e5m2fnuz = _C.dtype.float8_e5m2fnuz
short = int16
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
_C.float32, _C.int64, _C.bool = float32, int64, bool

from . import _tensor  # noqa: E402,F401  (Python-level Tensor methods)
from ._tensor import Size, set_printoptions  # noqa: E402
from ._generator import Generator, default_generator  # noqa: E402,F401
from ._generator import (
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)  # noqa: E402,F401
from ._global_state import (  # noqa: E402,F401  (torch's process-wide settings)
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_default_dtype,
    get_deterministic_debug_mode,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_default_dtype,
    set_default_tensor_type,
    set_deterministic_debug_mode,
    set_num_interop_threads,
    set_num_threads,
    use_deterministic_algorithms,
)
from ._logical import all, allclose, any, isclose, isfinite, isinf, isnan  # noqa: E402,F401,A004
from ._contract import diagonal, einsum, tensordot  # noqa: E402,F401
from .autograd import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

# Every functional op bound by the extension is exported at the top level (flow.add, flow.relu...).
_PRIVATE = {"Tensor", "device", "dtype"}
for _name in dir(_C):
    if not _name.startswith("_") and _name not in _PRIVATE and _name not in globals():
        globals()[_name] = getattr(_C, _name)
# torch's private fused GradScaler ops (opdefs/amp.def), named as torch names them.
_amp_foreach_non_finite_check_and_unscale_ = _C._amp_foreach_non_finite_check_and_unscale_
_amp_update_scale_ = _C._amp_update_scale_

# PyTorch's other names for the same ops (functions, Tensor methods and their in-place forms).
_ALIASES = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "fix": "trunc",
    "negative": "neg",
    "absolute": "abs",
    "multiply": "mul",
    "divide": "div",
    "subtract": "sub",
}
for _alias, _name in _ALIASES.items():
    for _suffix in ("", "_"):
        if hasattr(_C, _name + _suffix) and _alias + _suffix not in globals():
            globals()[_alias + _suffix] = getattr(_C, _name + _suffix)
        if hasattr(Tensor, _name + _suffix) and not hasattr(Tensor, _alias + _suffix):
            setattr(Tensor, _alias + _suffix, getattr(Tensor, _name + _suffix))

from . import autograd  # noqa: E402,F401
from . import random  # noqa: E402,F401  (torch.random; adds flow.cuda's RNG functions)
from . import _tensor_ops  # noqa: E402,F401  (torch.* composites: outer, unique, ...)
from . import linalg  # noqa: E402,F401

from . import (
    accelerator,
    backends,
    distributed,
    func,
    nn,
    onnx,
    special,
    optim,
    profiler,
    utils,
)  # noqa: E402,F401  (pure Python, ~30 ms together; errors surface here)
from .func import vmap  # noqa: E402,F401  (torch.vmap)
from ._foreach import *  # noqa: E402,F401,F403  (torch._foreach_*)


from . import _torch_functions  # noqa: E402,F401  (as_tensor, tile, finfo, windows, ...)
from . import distributions  # noqa: E402,F401  (torch.distributions)
from ._buffers import empty_strided, frombuffer  # noqa: E402,F401
from . import testing  # noqa: E402,F401  (torch.testing.assert_close)
from ._tensor import layout, sparse_coo, strided  # noqa: E402,F401  (torch.layout)


def mvlgamma(input, p):
    """torch.mvlgamma: the multivariate log-gamma function (= flow.special.multigammaln)."""
    return special.multigammaln(input, p)


Tensor.mvlgamma = mvlgamma

from . import amp  # noqa: E402
from .amp import autocast, get_autocast_dtype, is_autocast_available  # noqa: E402,F401
from .amp import is_autocast_enabled  # noqa: E402,F401
from .amp import _namespaces as _amp_namespaces  # noqa: E402

cpu = _amp_namespaces.cpu  # torch.cpu.amp / torch.cuda.amp (deprecated spellings)

try:
    from .serialization import load, save  # noqa: F401
except ImportError:
    pass


def export(graph_or_module, example_inputs, path, target_version=None, embed_kernels=False):
    """Writes a compiled model to a versioned .oflx artifact (oneflow_like.artifact.export)."""
    from .artifact import export as _export

    return _export(graph_or_module, example_inputs, path, target_version, embed_kernels)


def load_graph(path, install_kernels=True):
    """Loads a .oflx artifact as a callable graph (oneflow_like.artifact.load_graph)."""
    from .artifact import load_graph as _load_graph

    return _load_graph(path, install_kernels)


_atexit.register(_C._shutdown)  # drain the VM and join its threads before the interpreter goes


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def numel(input):
    return input.numel()


from ._compile import compile  # noqa: E402,F401,A001  (torch.compile on nn.Graph)
from . import compiler, jit  # noqa: E402,F401  (torch.compiler, torch.jit)
from . import _compat_names  # noqa: E402  (issue 19: FloatTensor, memory formats, pi, ...)

_compat_names.install(globals())

from . import _complex  # noqa: E402  (complex64/complex128, view_as_real, .real/.imag)

_complex.install(__import__("sys").modules[__name__])
from . import fft  # noqa: E402,F401  (torch.fft)
from .fft import stft, istft  # noqa: E402,F401

Tensor.stft = lambda self, *args, **kwargs: stft(self, *args, **kwargs)
Tensor.istft = lambda self, *args, **kwargs: istft(self, *args, **kwargs)
Tensor.stft.__doc__, Tensor.istft.__doc__ = stft.__doc__, istft.__doc__
# torch.futures, torch.quasirandom, torch.version and torch.multiprocessing as attributes.
from . import futures, fx, multiprocessing, quasirandom, version  # noqa: E402,F401

# torch.storage: Tensor.untyped_storage/storage/nbytes/itemsize, the storage classes, from_file.
from . import storage  # noqa: E402
from .storage import TypedStorage, UntypedStorage, from_file  # noqa: E402,F401
from .storage import (  # noqa: E402,F401
    BFloat16Storage,
    BoolStorage,
    ByteStorage,
    CharStorage,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
)

Storage = TypedStorage


def __getattr__(name):
    """Module attributes made on first use: flow.hub (it imports urllib.request: http, ssl,
    email, ~100 ms) and has_cuda / has_cudnn (what the build linked)."""
    if name == "hub":
        import importlib

        return importlib.import_module(".hub", __name__)
    return _compat_names.__getattr__(name)


# Last: flow.sparse routes flow.mm/matmul/addmm with a sparse argument and closes off the Tensor
# methods a sparse COO tensor does not implement, so everything above must be defined.
from . import sparse  # noqa: E402

sparse._install(__import__("sys").modules[__name__])

# Last of all: the __torch_function__ protocol (flow.overrides) wraps every public function and
# Tensor method in its C++ dispatcher, so it must see the finished namespaces.
from . import overrides  # noqa: E402

overrides._install(__import__("sys").modules[__name__])
