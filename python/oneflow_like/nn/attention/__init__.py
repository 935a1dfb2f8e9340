"""flow.nn.attention (torch.nn.attention): which scaled-dot-product-attention backends
F.scaled_dot_product_attention may use.

oneflow_like has two implementations on every device: the math one (softmax(q k^T * scale +
mask) v, composed of ordinary kernels, the [.., L, S] probabilities kept for backward) and a fused
one (the op _scaled_dot_product_flash_attention, FlashAttention-2's tiled online softmax; backward
recomputes the scores from q, k, v, out and the rows' logsumexp), which both FLASH_ATTENTION and
EFFICIENT_ATTENTION select. CUDNN_ATTENTION and OVERRIDEABLE name PyTorch's other backends so
scripts that choose backends run unchanged; they are not implemented. The enabled set is one
process-wide state, shared with torch.backends.cuda's enable_*_sdp / *_sdp_enabled / sdp_kernel
flags. sdpa_kernel(backends) enables exactly `backends` inside its region.
F.scaled_dot_product_attention takes the first enabled implemented backend in priority order
(FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH by default), falling back from the fused one to MATH
(when enabled) where its inputs are not supported (a float attn_mask that requires grad, dtypes
other than f16/bf16/f32/f64, empty operands); with no implemented backend enabled it raises
PyTorch's "No available kernel" error naming the enabled backends.
"""
import contextlib
import enum
import threading

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# torch.nn.attention.WARN_FOR_UNFUSED_KERNELS: PyTorch warns why each fused kernel was not used
# when this is True; here the flag only records the wish (the fused op's errors say why when it
# is the only backend enabled).
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """torch.nn.attention.SDPBackend (PyTorch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_BACKENDS = (
    SDPBackend.MATH,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.OVERRIDEABLE,
)
_lock = threading.Lock()
# PyTorch's defaults: every backend enabled; the priority order is the order tried.
_enabled = {b: True for b in _BACKENDS}
_priority = [
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH,
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.OVERRIDEABLE,
]
# The backends that exist in oneflow_like (on every device); the fused pair is one op.
_IMPLEMENTED = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION)
_FUSED = (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION)
# The codes of _C._scaled_dot_product_attention_routed's backend argument.
_AUTO, _MATH, _FUSED_ONLY = 0, 1, 2


def _set_enabled(backend, value):
    with _lock:
        _enabled[SDPBackend(backend)] = bool(value)


def _is_enabled(backend):
    return _enabled[SDPBackend(backend)]


def _priority_order():
    """The backends in the order F.scaled_dot_product_attention tries them."""
    return list(_priority)


def _choose(query, key, value):
    """The backend code F.scaled_dot_product_attention passes to the op: MATH when it comes
    first among the enabled implemented backends or is the only one, the fused op alone when MATH
    is off, else the fused op with MATH as its fallback. Raises PyTorch's "No available kernel"
    when no enabled backend is implemented here."""
    with _lock:
        order = [b for b in _priority if _enabled[b] and b in _IMPLEMENTED]
    if order:
        if order[0] is SDPBackend.MATH or not any(b in _FUSED for b in order):
            return _MATH
        return _AUTO if SDPBackend.MATH in order else _FUSED_ONLY
    on = [b.name for b in _priority if _enabled[b]]
    raise RuntimeError(
        "[scaled_dot_product_attention] No available kernel. Aborting execution. Enabled "
        f"backends: {', '.join(on) if on else 'none'}; oneflow_like implements only "
        f"{', '.join(b.name for b in _IMPLEMENTED)} (query {tuple(query.shape)} {query.dtype} on "
        f"{query.device}, key {tuple(key.shape)}, value {tuple(value.shape)}); enable "
        "SDPBackend.MATH (sdpa_kernel([..., SDPBackend.MATH]) or "
        "torch.backends.cuda.enable_math_sdp(True))"
    )


def _as_backends(backends):
    if isinstance(backends, SDPBackend):
        backends = [backends]
    elif isinstance(backends, (list, tuple)):
        backends = list(backends)
    else:
        raise AssertionError(
            "[sdpa_kernel] Backend must be an instance of SDPBackend or a list of SDPBackend "
            f"instances, got {type(backends).__name__}"
        )
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError(
                "[sdpa_kernel] Backend must be an instance of SDPBackend or a list of SDPBackend "
                f"instances, got an element {b!r} ({type(b).__name__})"
            )
        if b is SDPBackend.ERROR:
            raise ValueError("[sdpa_kernel] SDPBackend.ERROR is not a backend that can be enabled")
    return list(dict.fromkeys(backends))


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """torch.nn.attention.sdpa_kernel: inside the region F.scaled_dot_product_attention may use
    only `backends` (an SDPBackend or a list); with set_priority=True their order is also the
    order they are tried in. The previous state comes back on exit, also on an exception."""
    chosen = _as_backends(backends)
    if not isinstance(set_priority, bool):
        raise TypeError(
            f"[sdpa_kernel] set_priority must be a bool, got {type(set_priority).__name__}"
        )
    with _lock:
        saved = (dict(_enabled), list(_priority))
        for b in _BACKENDS:
            _enabled[b] = b in chosen
        if set_priority:
            _priority[:] = chosen + [b for b in saved[1] if b not in chosen]
    try:
        yield {}
    finally:
        with _lock:
            _enabled.clear()
            _enabled.update(saved[0])
            _priority[:] = saved[1]


from . import bias  # noqa: E402,F401
