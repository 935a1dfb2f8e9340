"""The long tail of torch.* names that scripts touch (issue 19), built on existing ops:
math constants, the legacy typed tensor classes (FloatTensor, ...), layouts and memory formats,
process-wide switches (matmul precision, warn-always, the autocast state under its torch 1.x
names), build flags (has_*), sampling (binomial, poisson), the real-tensor conj family, the
nn.functional ops torch also exposes at the top level under their ATen signatures, torch.gradient,
histogramdd, segment_reduce and the *_copy functions (real copies of what the view ops return).
"""
import builtins
import itertools
import math
import os
import warnings

import numpy as np

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like._tensor_methods_compat import _TYPE_NAMES

F = flow.nn.functional
_exports = {}


def _export(fn):
    _exports[fn.__name__] = fn
    return fn


# ---- constants --------------------------------------------------------------------------------

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan


# ---- legacy typed tensor classes --------------------------------------------------------------


class _TensorTypeMeta(type):
    """isinstance(x, FloatTensor): x is a tensor of that dtype on that device type (as torch)."""

    def __instancecheck__(cls, obj):
        return (
            isinstance(obj, flow.Tensor)
            and obj.dtype == cls.dtype
            and obj.device.type == cls._device_type
        )

    def __call__(cls, *args, device=None):
        """FloatTensor(*sizes) / FloatTensor(size) (uninitialized), FloatTensor(list or array)
        (its values), FloatTensor(tensor of that type) (the same tensor)."""
        who = cls.__name__
        if device is not None and flow.device(device).type != cls._device_type:
            raise RuntimeError(
                f"[{who}] legacy constructor expects device type {cls._device_type}, got {device}"
            )
        dev = device if device is not None else cls._device_type
        if len(args) == 1 and isinstance(args[0], flow.Tensor):
            t = args[0]
            if not isinstance(t, cls):
                raise TypeError(
                    f"[{who}] expected {cls._type_name} (got {t.type()}: {t.dtype} on {t.device})"
                )
            return t
        if len(args) == 1 and not isinstance(args[0], (builtins.int, flow.Size)):
            return flow.tensor(args[0], dtype=cls.dtype, device=dev)  # a list or tuple: values
        sizes = args[0] if len(args) == 1 and isinstance(args[0], flow.Size) else args
        sizes = sizes if len(args) else (0,)  # FloatTensor(): an empty 1-d tensor, as torch
        if not builtins.all(isinstance(s, builtins.int) for s in sizes):
            raise TypeError(
                f"[{who}] expects sizes (ints), a sequence of values or a tensor, got "
                f"{tuple(type(s).__name__ for s in sizes)}"
            )
        if builtins.any(s < 0 for s in sizes):
            raise RuntimeError(f"[{who}] negative dimension in size {list(sizes)}")
        return flow.empty(tuple(sizes), dtype=cls.dtype, device=dev)

    def __repr__(cls):
        return f"<class '{cls._type_name}'>"


def _typed_class(kind, dtype, device_type):
    prefix = "torch.cuda." if device_type == "cuda" else "torch."
    return _TensorTypeMeta(
        f"{kind}Tensor",
        (),
        {
            "dtype": dtype,
            "_device_type": device_type,
            "_type_name": f"{prefix}{kind}Tensor",
            "__doc__": f"torch.{kind}Tensor: the legacy constructor and isinstance check for "
            f"{dtype} tensors on {device_type}.",
        },
    )


_typed = {}  # (kind, device type) -> class
for _kind, _dtype in _TYPE_NAMES.items():
    for _dev in ("cpu", "cuda"):
        _typed[(_kind, _dev)] = _typed_class(_kind, _dtype, _dev)
        if _dev == "cpu":
            _exports[f"{_kind}Tensor"] = _typed[(_kind, _dev)]
_cuda_typed = {f"{k}Tensor": c for (k, d), c in _typed.items() if d == "cuda"}

_tensor_type = flow.Tensor.type


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if isinstance(dtype, _TensorTypeMeta):  # x.type(torch.FloatTensor)
        dtype = dtype._type_name
    return _tensor_type(self, dtype, non_blocking, **kwargs)


_type.__doc__ = _tensor_type.__doc__ + "\n    A legacy class (torch.FloatTensor) is accepted too."
flow.Tensor.type = _type


# ---- layout -----------------------------------------------------------------------------------
# torch.layout and its values (flow.strided, flow.sparse_coo) and Tensor.layout live with the
# sparse COO tensors (_tensor.py, oneflow_like.sparse).
from oneflow_like._tensor import layout, sparse_coo, strided  # noqa: E402,F401


# ---- memory formats ---------------------------------------------------------------------------


class memory_format:
    """torch.memory_format. Every tensor here is stored row-major (NCHW): a channels_last
    request gives the same values as torch, with contiguous strides."""

    def __init__(self, name, rank=None):
        self._name, self._rank = name, rank

    def __repr__(self):
        return f"oneflow_like.{self._name}"  # as dtypes print

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)


def _check_format(fmt, t, who, allow_preserve=True):
    if not isinstance(fmt, memory_format):
        raise TypeError(
            f"[{who}] memory_format must be a torch.memory_format, got {type(fmt).__name__}"
        )
    if fmt is preserve_format and not allow_preserve:
        raise RuntimeError(f"[{who}] preserve memory format is unsupported by the {who} operator")
    if fmt._rank is not None and t.dim() != fmt._rank:
        raise RuntimeError(
            f"[{who}] required rank {fmt._rank} tensor to use {fmt._name} format, got a "
            f"{t.dim()}-d tensor of shape {list(t.shape)}"
        )


def _strides_follow(sizes, strides, order):
    """Whether strides are dense in `order` (innermost dim first), ignoring size-1 dims."""
    expected = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


_orig_contiguous = flow.Tensor.contiguous
_orig_is_contiguous = flow.Tensor.is_contiguous
_orig_to = flow.Tensor.to
_orig_clone = flow.Tensor.clone


def _contiguous(self, memory_format=contiguous_format):
    """Tensor.contiguous(memory_format=torch.contiguous_format): channels_last(_3d) check the
    rank and give the same values (strides stay row-major here)."""
    if memory_format is not contiguous_format:
        _check_format(memory_format, self, "contiguous", allow_preserve=False)
    return _orig_contiguous(self)


def _is_contiguous(self, memory_format=contiguous_format):
    """Tensor.is_contiguous(memory_format=...): whether the strides are dense in that format."""
    if memory_format is contiguous_format:
        return _orig_is_contiguous(self)
    _check_format(memory_format, self, "is_contiguous", allow_preserve=False)
    order = [1, 3, 2, 0] if memory_format is channels_last else [1, 4, 3, 2, 0]
    return _strides_follow(tuple(self.shape), self.stride(), order)


def _to(self, *args, memory_format=None, **kwargs):
    if memory_format is not None:
        _check_format(memory_format, self, "to")
    return _orig_to(self, *args, **kwargs)


def _clone(self, *, memory_format=preserve_format):
    if memory_format is not preserve_format:
        _check_format(memory_format, self, "clone")
    return _orig_clone(self)


for _wrapper, _wrapped in ((_contiguous, _orig_contiguous), (_is_contiguous, _orig_is_contiguous),
                          (_to, _orig_to), (_clone, _orig_clone)):  # fmt: skip
    _wrapper.__wrapped__ = _wrapped  # the binding (its docstring states the signature)
    setattr(flow.Tensor, _wrapper.__name__[1:], _wrapper)


def _with_memory_format(name):
    fn = getattr(flow, name)

    def like(input, *args, memory_format=preserve_format, **kwargs):
        if memory_format is not preserve_format:
            _check_format(memory_format, input, name)
        return fn(input, *args, **kwargs)

    like.__name__, like.__wrapped__ = name, fn
    like.__doc__ = (fn.__doc__ or "") + "\nmemory_format= is accepted (values as torch)."
    return like


for _name in ("empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
              "randint_like", "clone"):  # fmt: skip
    if hasattr(flow, _name):
        _exports[_name] = _with_memory_format(_name)


# ---- process-wide switches --------------------------------------------------------------------

_matmul_precision = ["highest"]
_matmul_flags = type(flow.backends.cuda.matmul)
_allow_tf32 = _matmul_flags.allow_tf32


def _set_allow_tf32(self, value):
    """backends.cuda.matmul.allow_tf32 = v also sets the precision ('high' / 'highest'), as
    torch's does."""
    _allow_tf32.fset(self, value)
    _matmul_precision[0] = "high" if value else "highest"


_matmul_flags.allow_tf32 = property(_allow_tf32.fget, _set_allow_tf32, doc=_allow_tf32.__doc__)


@_export
def set_float32_matmul_precision(precision):
    """'highest' (float32 everywhere), 'high' or 'medium' (TF32 allowed in CUDA matmuls and
    convolutions: backends.cuda.matmul.allow_tf32 follows)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(
            f"[set_float32_matmul_precision] invalid precision {precision!r}: expected "
            f"'highest', 'high' or 'medium'"
        )
    flow.backends.cuda.matmul.allow_tf32 = precision != "highest"
    _matmul_precision[0] = precision


@_export
def get_float32_matmul_precision():
    """The precision set, or the one backends.cuda.matmul.allow_tf32 last implied."""
    return _matmul_precision[0]


_warn_always = [False]
_OUR_MODULES = r"oneflow_like(\..*)?\Z"


@_export
def set_warn_always(b):
    """When on, warnings this package issues are shown every time, not once per place."""
    _warn_always[0] = bool(b)
    warnings.filters[:] = [f for f in warnings.filters if not _is_our_filter(f)]
    if b:
        warnings.filterwarnings("always", module=_OUR_MODULES)
    else:
        warnings._filters_mutated()  # forget what was shown under the old filters


def _is_our_filter(f):
    return f[0] == "always" and f[3] is not None and f[3].pattern == _OUR_MODULES


@_export
def is_warn_always_enabled():
    return _warn_always[0]


# torch 1.x names of the autocast state (flow.autocast keeps it per device type in C++).
def _autocast_state(device_type):
    enabled, dtype, cache = _C._autocast_get(device_type)
    return enabled, getattr(flow, dtype), cache


def _autocast_update(device_type, enabled=None, dtype=None, cache=None):
    cur = _autocast_state(device_type)
    new = [v if v is not None else c for v, c in zip((enabled, dtype, cache), cur)]
    if new[1] not in (flow.float16, flow.bfloat16):
        raise RuntimeError(
            f"[set_autocast_{device_type}_dtype] autocast supports float16 and bfloat16, got "
            f"{new[1]}"
        )
    _C._autocast_set(device_type, builtins.bool(new[0]), new[1], builtins.bool(new[2]))


@_export
def set_autocast_enabled(enabled):
    """torch 1.x: switches CUDA autocast (flow.autocast('cuda') regions nest over it)."""
    _autocast_update("cuda", enabled=builtins.bool(enabled))


@_export
def is_autocast_cpu_enabled():
    return _autocast_state("cpu")[0]


@_export
def set_autocast_cpu_enabled(enabled):
    _autocast_update("cpu", enabled=builtins.bool(enabled))


@_export
def get_autocast_cpu_dtype():
    return _autocast_state("cpu")[1]


@_export
def set_autocast_cpu_dtype(dtype):
    _autocast_update("cpu", dtype=dtype)


@_export
def get_autocast_gpu_dtype():
    return _autocast_state("cuda")[1]


@_export
def set_autocast_gpu_dtype(dtype):
    _autocast_update("cuda", dtype=dtype)


@_export
def is_autocast_cache_enabled():
    return _autocast_state("cpu")[2]


@_export
def set_autocast_cache_enabled(enabled):
    for d in ("cpu", "cuda"):
        _autocast_update(d, cache=builtins.bool(enabled))


@_export
def clear_autocast_cache():
    _C._autocast_clear_cache()


@_export
def autocast_increment_nesting():
    return _C._autocast_increment_nesting()


@_export
def autocast_decrement_nesting():
    return _C._autocast_decrement_nesting()


# ---- build facts ------------------------------------------------------------------------------

_cxx11_abi = []


@_export
def compiled_with_cxx11_abi():
    """Whether the extension was built with the C++11 std::string ABI (read from its symbols)."""
    if not _cxx11_abi:
        with open(_C.__file__, "rb") as f:
            _cxx11_abi.append(b"St7__cxx11" in f.read())
    return _cxx11_abi[0]


_linked = []


def _linked_libraries():
    """The shared libraries the extension and its runtime load (ldd), read once."""
    import subprocess

    if not _linked:
        names = set()
        runtime = os.path.join(os.path.dirname(_C.__file__), "liboneflow_like_runtime.so")
        for path in (_C.__file__, runtime):
            try:
                out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=20)
            except (OSError, subprocess.SubprocessError):
                continue
            names.update(line.split()[0] for line in out.stdout.splitlines() if line.strip())
        _linked.append(names)
    return _linked[0]


def _built_with(*prefixes):
    return builtins.any(n.startswith(prefixes) for n in _linked_libraries())


has_mkldnn = flow.backends.mkldnn.is_available()
has_openmp = flow.backends.openmp.is_available()
has_mps = False
has_mkl = False  # GEMMs use oneDNN / OpenBLAS, not Intel MKL
has_lapack = hasattr(flow, "linalg") and hasattr(flow.linalg, "solve")
has_spectral = hasattr(flow, "fft")


def __getattr__(name):  # has_cuda / has_cudnn: read lazily (ldd) on first use
    if name == "has_cuda":  # a --config=cuda build links the CUDA libraries
        return _built_with("libcudart", "libcublas", "libnvrtc", "libcuda.")
    if name == "has_cudnn":
        return _built_with("libcudnn")
    raise AttributeError(f"module 'oneflow_like' has no attribute '{name}'")


# ---- sampling ---------------------------------------------------------------------------------


def _numpy_rng(generator):
    """A NumPy generator seeded from `generator` (or the default one), so manual_seed makes
    the draws reproducible."""
    seed = flow.randint(0, 2**62, (2,), generator=generator, dtype=flow.int64).tolist()
    return np.random.default_rng(seed)


def _sample(values, dtype, device):
    return flow.from_numpy(np.ascontiguousarray(values)).to(dtype).to(device)


@_export
def binomial(count, prob, generator=None):
    """torch.binomial: draws of Binomial(count, prob) elementwise (count and prob broadcast)."""
    if not isinstance(count, flow.Tensor) or not isinstance(prob, flow.Tensor):
        raise TypeError("[binomial] count and prob must be tensors")
    if not count.dtype.is_floating_point or count.dtype != prob.dtype:
        raise RuntimeError(
            f"[binomial] count and prob must be floating tensors of one dtype, got "
            f"{count.dtype} and {prob.dtype}"
        )
    c = count.detach().to("cpu").to(flow.float64).numpy()
    p = prob.detach().to("cpu").to(flow.float64).numpy()
    if (p < 0).any() or (p > 1).any() or np.isnan(p).any():
        raise RuntimeError("[binomial] prob must be in [0, 1]")
    if (c < 0).any():
        raise RuntimeError("[binomial] count must be >= 0")
    out = _numpy_rng(generator).binomial(np.floor(c).astype(np.int64), p)
    return _sample(out.astype(np.float64), count.dtype, count.device)


@_export
def poisson(input, generator=None):
    """torch.poisson: a draw of Poisson(rate) for each element of `input` (the rates)."""
    if not isinstance(input, flow.Tensor) or not input.dtype.is_floating_point:
        raise RuntimeError(
            f"[poisson] expects a floating tensor of rates, got "
            f"{getattr(input, 'dtype', type(input).__name__)}"
        )
    lam = input.detach().to("cpu").to(flow.float64).numpy()
    if (lam < 0).any() or np.isnan(lam).any():
        raise RuntimeError("[poisson] rates must be >= 0")
    out = _numpy_rng(generator).poisson(lam)
    return _sample(out.astype(np.float64), input.dtype, input.device)


# ---- the conj family (conjugation is never lazy here: is_conj() is always False) --------------


def _real_only(who):
    def check(input):
        if not isinstance(input, flow.Tensor):
            raise TypeError(f"[{who}] expected a tensor, got {type(input).__name__}")
        return input

    return check


@_export
def conj(input):
    """torch.conj: the conjugate of a complex tensor (materialized); a real tensor itself."""
    input = _real_only("conj")(input)
    return flow._C._conj(input) if input.dtype.is_complex else input


@_export
def resolve_conj(input):
    return _real_only("resolve_conj")(input)


@_export
def resolve_neg(input):
    return _real_only("resolve_neg")(input)


@_export
def is_conj(input):
    _real_only("is_conj")(input)
    return False


@_export
def is_neg(input):
    _real_only("is_neg")(input)
    return False


@_export
def conj_physical(input):
    """torch.conj_physical: the conjugate of a complex tensor; a copy of a real one."""
    input = _real_only("conj_physical")(input)
    return flow._C._conj(input) if input.dtype.is_complex else input.clone()


# ---- nn.functional under ATen's top-level signatures ------------------------------------------

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r, who):
    if isinstance(r, str):
        return r
    if r not in _REDUCTIONS:
        raise ValueError(f"[{who}] reduction must be 0 (none), 1 (mean) or 2 (sum), got {r!r}")
    return _REDUCTIONS[r]


@_export
def kl_div(input, target, reduction=1, log_target=False):
    """torch.kl_div (ATen): reduction 1 is the elementwise mean (not batchmean)."""
    return F.kl_div(input, target, reduction=_reduction(reduction, "kl_div"), log_target=log_target)


@_export
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    r = _reduction(reduction, "cosine_embedding_loss")
    return F.cosine_embedding_loss(input1, input2, target, margin=margin, reduction=r)


@_export
def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    r = _reduction(reduction, "hinge_embedding_loss")
    return F.hinge_embedding_loss(input, target, margin=margin, reduction=r)


@_export
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    r = _reduction(reduction, "margin_ranking_loss")
    return F.margin_ranking_loss(input1, input2, target, margin=margin, reduction=r)


@_export
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        reduction=1):  # fmt: skip
    r = _reduction(reduction, "triplet_margin_loss")
    return F.triplet_margin_loss(
        anchor, positive, negative, margin=margin, p=p, eps=eps, swap=swap, reduction=r
    )


@_export
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    r = _reduction(reduction, "poisson_nll_loss")
    return F.poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps, reduction=r)


@_export
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
             zero_infinity=False):  # fmt: skip
    r = _reduction(reduction, "ctc_loss")
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank=blank, reduction=r,
        zero_infinity=zero_infinity,
    )  # fmt: skip


def _in_place(name, make):
    """input.copy_(make(input, ...)): torch's in-place dropout family."""

    def fn(input, p, train):
        if input.is_leaf and input.requires_grad and flow.is_grad_enabled():
            raise RuntimeError(
                f"[{name}] a leaf Variable that requires grad is being used in an in-place "
                f"operation (shape {list(input.shape)})"
            )
        input.copy_(make(input, p, train))
        return input

    fn.__name__ = name
    return fn


def _feature_dropout(input, p, train, alpha=False):
    """Zeroes whole channels (dim 1 of a batch, dim 0 of one sample) as Dropout2d."""
    if input.dim() < 2:
        raise RuntimeError(
            f"[feature_dropout] expects a tensor of at least 2 dims, got shape {list(input.shape)}"
        )
    if alpha:
        return F.feature_alpha_dropout(input, p, train)
    if not train or p == 0:
        return input
    if not 0 <= p <= 1:
        raise ValueError(f"[feature_dropout] p must be in [0, 1], got {p}")
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    keep = flow.bernoulli(flow.full(shape, 1 - p, dtype=input.dtype, device=input.device))
    return input * keep / (1 - p) if p < 1 else input * keep


@_export
def feature_dropout(input, p, train):
    return _feature_dropout(input, p, train)


@_export
def feature_alpha_dropout(input, p, train):
    return _feature_dropout(input, p, train, alpha=True)


_exports["dropout_"] = _in_place("dropout_", lambda x, p, t: F.dropout(x, p, t))
_exports["alpha_dropout_"] = _in_place("alpha_dropout_", lambda x, p, t: F.alpha_dropout(x, p, t))
_exports["feature_dropout_"] = _in_place("feature_dropout_", _feature_dropout)
_exports["feature_alpha_dropout_"] = _in_place(
    "feature_alpha_dropout_", lambda x, p, t: _feature_dropout(x, p, t, alpha=True)
)


@_export
def constant_pad_nd(input, pad, value=0):
    """torch.constant_pad_nd: F.pad in constant mode (negative pads crop)."""
    return F.pad(input, list(pad), mode="constant", value=value)


_MODES = {0: "sum", 1: "mean", 2: "max"}


@_export
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):  # fmt: skip
    """torch.embedding_bag (ATen order: weight first, mode 0 sum / 1 mean / 2 max): returns
    (output, offset2bag, bag_size, max_indices) as torch fills them: offset2bag (the bag of each
    index) and bag_size in mean and max modes, max_indices (the row each maximum came from) in
    max mode; sum mode leaves them empty / zero and mean mode repeats bag_size, as torch."""
    if mode not in _MODES:
        raise ValueError(f"[embedding_bag] mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    out = F.embedding_bag(
        indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=_MODES[mode],
        sparse=sparse, per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset, padding_idx=padding_idx,
    )  # fmt: skip
    idx = indices.detach().to("cpu").numpy().reshape(-1)
    if indices.dim() == 2:
        b, n = indices.shape
        starts = np.arange(b) * n
        ends = starts + n
    else:
        offs = offsets.detach().to("cpu").numpy().astype(np.int64)
        starts = offs[:-1] if include_last_offset else offs
        ends = np.append(offs[1:], len(idx)) if not include_last_offset else offs[1:]
    offset2bag = np.zeros(len(idx), dtype=np.int64)
    if indices.dim() == 1:
        for b, s in enumerate(starts):
            offset2bag[s:] = b
    valid = idx != padding_idx if padding_idx is not None else np.ones(len(idx), builtins.bool)
    bag_size = np.array([valid[s:e].sum() for s, e in zip(starts, ends)], dtype=np.int64)
    if mode == 0:  # torch's sum mode fills none of them
        offset2bag, bag_size = np.zeros(0, np.int64), np.zeros(len(starts), np.int64)
        maxi = bag_size.copy()
    elif mode == 1:  # torch returns the bag sizes again as max_indices
        maxi = bag_size.copy()
    else:
        w = weight.detach().to("cpu").to(flow.float64).numpy()
        maxi = np.zeros((len(starts), w.shape[1]), dtype=np.int64)
        for b, (s, e) in enumerate(zip(starts, ends)):
            rows = idx[s:e][valid[s:e]]
            if len(rows):
                maxi[b] = rows[np.argmax(w[rows], axis=0)]
    dev = out.device
    return (
        out,
        flow.from_numpy(offset2bag).to(dev),
        flow.from_numpy(bag_size).to(dev),
        flow.from_numpy(maxi).to(dev),
    )


@_export
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):  # fmt: skip
    """torch.instance_norm (ATen argument order)."""
    return F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


@_export
def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """(values, indices) of a 1-d max pool over the last dim of (N, C, L) or (C, L)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"[max_pool1d_with_indices] expects a 2-d or 3-d input, got shape {list(input.shape)}"
        )

    def one(v):
        v = v if isinstance(v, (builtins.list, tuple)) else [v]
        return v[0] if len(v) else None

    k, s = one(kernel_size), one(stride)
    out, idx = F.max_pool2d(
        input.unsqueeze(-2), (1, k), (1, s if s is not None else k), (0, one(padding)),
        (1, one(dilation)), ceil_mode=ceil_mode, return_indices=True,
    )  # fmt: skip
    return out.squeeze(-2), idx.squeeze(-2)


# ---- torch.gradient --------------------------------------------------------------------------


def _narrow(t, dim, start, stop):
    return t.narrow(dim, start, stop - start)


@_export
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: per dim, central differences inside (second-order accurate, also for
    uneven coordinates) and one-sided differences of order `edge_order` (1 or 2) at the ends.
    spacing: a scalar, one scalar per dim, or one 1-d tensor of coordinates per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"[gradient] edge_order must be 1 or 2, got {edge_order}")
    nd = input.dim()
    dims = (
        builtins.list(builtins.range(nd))
        if dim is None
        else [dim] if isinstance(dim, builtins.int) else builtins.list(dim)
    )  # fmt: skip
    dims = [d % nd if -nd <= d < nd else None for d in dims]
    if None in dims:
        raise IndexError(f"[gradient] dim {dim} out of range for a {nd}-d tensor")
    if isinstance(spacing, (builtins.list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(
                f"[gradient] expected spacing to be unspecified, a scalar or a list of length "
                f"{len(dims)}, got a list of length {len(spacing)}"
            )
        spacings = builtins.list(spacing)
    else:
        spacings = [spacing] * len(dims)
    outs = []
    for d, sp in zip(dims, spacings):
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(
                f"[gradient] each dim needs at least edge_order + 1 = {edge_order + 1} "
                f"elements, dim {d} of shape {list(input.shape)} has {n}"
            )
        outs.append(_gradient_1d(input, d, sp, edge_order))
    return tuple(outs)


def _view_along(t, dim, nd):
    shape = [1] * nd
    shape[dim] = -1
    return t.reshape(shape)


def _gradient_1d(f, d, sp, edge_order):
    n, nd = f.shape[d], f.dim()
    if not f.dtype.is_floating_point:
        f = f.to(flow.get_default_dtype())
    if isinstance(sp, flow.Tensor) and sp.dim() == 1:
        if sp.shape[0] != n:
            raise RuntimeError(
                f"[gradient] coordinates for dim {d} have {sp.shape[0]} values, the dim has {n}"
            )
        x = sp.to(f.dtype)
        h = x[1:] - x[:-1]  # n - 1 steps
        hm, hp = _view_along(h[:-1], d, nd), _view_along(h[1:], d, nd)
        fm, f0, fp = _narrow(f, d, 0, n - 2), _narrow(f, d, 1, n - 1), _narrow(f, d, 2, n)
        inner = (hm * hm * fp - hp * hp * fm + (hp * hp - hm * hm) * f0) / (hm * hp * (hm + hp))
        h0, h1, hl, hl2 = h[0], h[1] if n > 2 else h[0], h[-1], h[-2] if n > 2 else h[-1]
    else:
        step = sp.item() if isinstance(sp, flow.Tensor) else sp
        inner = (_narrow(f, d, 2, n) - _narrow(f, d, 0, n - 2)) / (2.0 * step)
        h0 = h1 = hl = hl2 = step
    if edge_order == 1:
        first = (_narrow(f, d, 1, 2) - _narrow(f, d, 0, 1)) / h0
        last = (_narrow(f, d, n - 1, n) - _narrow(f, d, n - 2, n - 1)) / hl
    else:
        f0, f1, f2 = (_narrow(f, d, i, i + 1) for i in (0, 1, 2))
        a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = -h0 / (h1 * (h0 + h1))
        first = a * f0 + b * f1 + c * f2
        g0, g1, g2 = (_narrow(f, d, n - 3 + i, n - 2 + i) for i in (0, 1, 2))
        a = hl / (hl2 * (hl2 + hl))
        b = -(hl + hl2) / (hl2 * hl)
        c = (2.0 * hl + hl2) / (hl * (hl2 + hl))
        last = a * g0 + b * g1 + c * g2
    return flow.cat([first, inner, last], dim=d) if n > 2 else flow.cat([first, last], dim=d)


# ---- histogramdd, segment_reduce --------------------------------------------------------------


@_export
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """torch.histogramdd: input (..., D) holds N points of D coordinates; bins is a count, one
    count per coordinate or one tensor of increasing edges per coordinate; returns
    (hist, bin_edges). Edges are computed in the input's dtype, as torch."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"[histogramdd] expects a floating input, got {input.dtype}")
    if input.dim() < 1:
        raise RuntimeError("[histogramdd] expects an input of shape (..., D)")
    dt = np.dtype(str(input.dtype).split(".")[-1]) if input.dtype != flow.bfloat16 else np.float32
    pts = input.detach().to("cpu").to(flow.float64).numpy().astype(dt).reshape(-1, input.shape[-1])
    D = pts.shape[1]
    if isinstance(bins, (builtins.list, tuple)) and bins and isinstance(bins[0], flow.Tensor):
        edges = [b.detach().to("cpu").to(flow.float64).numpy().astype(dt) for b in bins]
    else:
        counts = builtins.list(bins) if isinstance(bins, (builtins.list, tuple)) else [bins] * D
        if len(counts) != D:
            raise RuntimeError(f"[histogramdd] got {len(counts)} bin counts for {D} coordinates")
        edges = []
        for i, c in enumerate(counts):
            if range is not None:
                lo, hi = dt.type(range[2 * i]), dt.type(range[2 * i + 1])
            elif len(pts):
                lo, hi = pts[:, i].min(), pts[:, i].max()
            else:
                lo, hi = dt.type(0), dt.type(0)
            if lo == hi:  # widen an empty range, as torch and NumPy
                lo, hi = lo - dt.type(0.5), hi + dt.type(0.5)
            edges.append(_linspace(lo, hi, c + 1, dt))
    w = None if weight is None else weight.detach().to("cpu").to(flow.float64).numpy().reshape(-1)
    hist = np.zeros([len(e) - 1 for e in edges])
    keep = np.ones(len(pts), builtins.bool)
    pos = []
    for i, e in enumerate(edges):
        x = pts[:, i]
        keep &= (x >= e[0]) & (x <= e[-1])
        p = np.searchsorted(e, x, side="right") - 1
        pos.append(np.minimum(p, len(e) - 2))  # the last bin includes its right edge
    sel = tuple(p[keep] for p in pos)
    np.add.at(hist, sel, 1.0 if w is None else w[keep])
    if density:
        hist = hist / hist.sum()
        for i, e in enumerate(edges):
            shape = [1] * D
            shape[i] = -1
            hist = hist / np.diff(e.astype(np.float64)).reshape(shape)
    from .return_types import histogramdd as res

    dev = input.device
    return res(
        flow.from_numpy(hist).to(input.dtype).to(dev),
        [flow.from_numpy(np.ascontiguousarray(e)).to(input.dtype).to(dev) for e in edges],
    )


def _linspace(lo, hi, steps, dt):
    """torch.linspace's values in dtype `dt` (from both ends towards the middle)."""
    step = (hi - lo) / dt.type(steps - 1)
    i = np.arange(steps)
    first = lo + step * i.astype(dt)
    last = hi - step * (steps - 1 - i).astype(dt)
    return np.where(i < steps // 2, first, last).astype(dt)


_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf, "mean": math.nan}


@_export
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):  # fmt: skip
    """torch.segment_reduce: reduces consecutive segments of `data` along `axis` (lengths or
    offsets give them) by 'sum', 'mean', 'max', 'min' or 'prod'; an empty segment gives
    `initial` (or the reduction's identity; mean: nan)."""
    if reduce not in _SEGMENT_EMPTY:
        raise RuntimeError(f"[segment_reduce] reduce must be one of {sorted(_SEGMENT_EMPTY)}")
    if indices is not None:
        raise RuntimeError("[segment_reduce] indices are not supported (as torch); use lengths")
    if (lengths is None) == (offsets is None):
        raise RuntimeError("[segment_reduce] give exactly one of lengths and offsets")
    axis = axis % data.dim()
    if offsets is not None:
        o = offsets.to("cpu").tolist()
        lens = [b - a for a, b in zip(o[:-1], o[1:])]
    else:
        if lengths.dim() != 1:
            raise RuntimeError("[segment_reduce] only 1-d lengths are supported")
        lens = lengths.to("cpu").tolist()
    if builtins.any(n < 0 for n in lens) or builtins.sum(lens) != data.shape[axis]:
        raise RuntimeError(
            f"[segment_reduce] lengths {lens} must be >= 0 and sum to data.shape[{axis}] = "
            f"{data.shape[axis]}"
        )
    pieces, start = [], 0
    empty_value = _SEGMENT_EMPTY[reduce] if initial is None else initial
    for n in lens:
        seg = data.narrow(axis, start, n)
        start += n
        if n == 0:
            shape = builtins.list(data.shape)
            shape[axis] = 1
            pieces.append(flow.full(shape, empty_value, dtype=data.dtype, device=data.device))
            continue
        if reduce == "sum":
            r = seg.sum(axis, keepdim=True)
        elif reduce == "mean":
            r = seg.sum(axis, keepdim=True)
            r = (r + initial) / n if initial is not None else r / n
        elif reduce == "prod":
            r = seg.prod(axis, keepdim=True)
        else:
            r = seg.amax(axis, keepdim=True) if reduce == "max" else seg.amin(axis, keepdim=True)
        if initial is not None and reduce in ("sum", "prod"):
            r = r + initial if reduce == "sum" else r * initial
        elif initial is not None and reduce in ("max", "min"):
            r = r.clamp(min=initial) if reduce == "max" else r.clamp(max=initial)
        pieces.append(r)
    return flow.cat(pieces, dim=axis)


# ---- *_copy: what a view op returns, as a new tensor ------------------------------------------


def _copy_of(view_name, method=None):
    def fn(input, *args, **kwargs):
        out = getattr(flow.Tensor, method or view_name)(input, *args, **kwargs)
        if isinstance(out, (builtins.list, tuple)):
            return [o.clone() for o in out]
        return out.clone()

    fn.__name__ = f"{view_name}_copy"
    fn.__doc__ = f"torch.{view_name}_copy: input.{method or view_name}(...) as a new tensor."
    return fn


for _view_name, _method_name in [
    ("view", None), ("permute", None), ("expand", None), ("t", None), ("transpose", None),
    ("unsqueeze", None), ("squeeze", None), ("select", None), ("diagonal", None),
    ("detach", None), ("as_strided", None), ("alias", "view_as"), ("unfold", None),
    ("split", None), ("unbind", None), ("split_with_sizes", "split"), ("narrow", None),
]:  # fmt: skip
    _exports[f"{_view_name}_copy"] = _copy_of(_view_name, _method_name)


def _alias_copy(input):
    return input.clone()


_exports["alias_copy"] = _alias_copy


def _slice_copy(input, dim=0, start=None, end=None, step=1):
    idx = [builtins.slice(None)] * input.dim()
    idx[dim] = builtins.slice(start, end, step)
    return input[tuple(idx)].clone()


_exports["slice_copy"] = _slice_copy


# ---- misc -------------------------------------------------------------------------------------


@_export
def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """torch.scalar_tensor: a 0-d tensor of `s` (the default float dtype unless `dtype`)."""
    if isinstance(s, flow.Tensor):
        s = s.item()
    out = flow.tensor(s, dtype=dtype or flow.get_default_dtype(), device=device)
    return out.requires_grad_(True) if requires_grad else out


@_export
def combinations(input, r=2, with_replacement=False):
    """torch.combinations: the length-r combinations of a 1-d tensor's elements, one per row
    (itertools order); differentiable (an index_select)."""
    if input.dim() != 1:
        raise RuntimeError(f"[combinations] expects a 1-d tensor, got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"[combinations] r must be non-negative, got {r}")
    if r == 0:
        return flow.empty(0, dtype=input.dtype, device=input.device)
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = builtins.list(make(builtins.range(input.shape[0]), r))
    if not idx:
        return flow.empty((0, r), dtype=input.dtype, device=input.device)
    flat = flow.tensor(idx, dtype=flow.int64, device=input.device).reshape(-1)
    out = input.index_select(0, flat).reshape(len(idx), r)
    return out


@_export
def typename(obj):
    """torch.typename: a tensor's type() name, else the object's module.qualname."""
    if isinstance(obj, flow.Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__ or ""
    name = cls.__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


@_export
def is_storage(obj):
    """False: this runtime has no storage objects (a tensor's memory is not exposed as one)."""
    return False


def _detach_(self):
    """Tensor.detach_: makes self a leaf that does not require grad, in place."""
    _C._detach_(self)
    return self


if hasattr(_C, "_detach_"):
    flow.Tensor.detach_ = _detach_
    _exports["detach_"] = _detach_

for _name in ("conj", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "conj_physical"):
    if not hasattr(flow.Tensor, _name):
        setattr(flow.Tensor, _name, _exports[_name])


def install(namespace):
    """Adds the names above to the oneflow_like namespace (existing names win)."""
    for k, v in _exports.items():
        if k in ("clone", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                 "randn_like", "randint_like") or k not in namespace:  # fmt: skip
            namespace[k] = v
    for k in ("pi", "e", "inf", "nan", "layout", "strided", "sparse_coo", "memory_format",
              "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
              "has_mkldnn", "has_openmp", "has_mps", "has_mkl", "has_lapack", "has_spectral"):  # fmt: skip
        namespace.setdefault(k, globals()[k])
    enabled, dtype, cache = _C._autocast_get("cuda")
    if not enabled and dtype != "float16":  # torch's CUDA autocast default is float16
        _C._autocast_set("cuda", enabled, flow.float16, cache)
    from oneflow_like import _cuda_compat
    from oneflow_like.autograd import anomaly_mode

    for k in ("is_anomaly_enabled", "set_anomaly_enabled", "is_anomaly_check_nan_enabled"):
        namespace.setdefault(k, getattr(anomaly_mode, k))

    _cuda_compat.install(_cuda_typed)
    _C.cuda.OutOfMemoryError = flow.OutOfMemoryError  # torch.cuda.OutOfMemoryError
