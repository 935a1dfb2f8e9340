"""flow.nn.attention (torch.nn.attention): which scaled-dot-product-attention backends
F.scaled_dot_product_attention may use.

oneflow_like has one implementation per device, the math one (softmax(q k^T * scale + mask) v,
composed of ordinary kernels); SDPBackend names PyTorch's fused ones so scripts that choose
backends run unchanged. The enabled set is one process-wide state, shared with
torch.backends.cuda's enable_*_sdp / *_sdp_enabled / sdp_kernel flags. sdpa_kernel(backends)
enables exactly `backends` inside its region; F.scaled_dot_product_attention called where MATH
is disabled raises PyTorch's "No available kernel" error naming the enabled backends, since none
of them exists here.
"""
import contextlib
import enum
import threading

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# torch.nn.attention.WARN_FOR_UNFUSED_KERNELS: PyTorch warns why each fused kernel was not used
# when this is True; there are no fused kernels here, so the flag only records the wish.
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
# The backends that exist in oneflow_like (on every device).
_IMPLEMENTED = (SDPBackend.MATH,)


def _set_enabled(backend, value):
    with _lock:
        _enabled[SDPBackend(backend)] = bool(value)


def _is_enabled(backend):
    return _enabled[SDPBackend(backend)]


def _priority_order():
    """The backends in the order F.scaled_dot_product_attention tries them."""
    return list(_priority)


def _check_available(query, key, value):
    """Raises PyTorch's "No available kernel" when no enabled backend is implemented here."""
    if any(_enabled[b] for b in _IMPLEMENTED):
        return
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
