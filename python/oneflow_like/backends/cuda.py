"""flow.backends.cuda (torch.backends.cuda): `matmul.allow_tf32` switches TF32 in cuBLAS
matrix products and cuDNN convolutions (flow.cuda.set_allow_tf32: one switch for both, also
reached as backends.cudnn.allow_tf32); off by default.

The scaled-dot-product-attention switches (enable_flash_sdp / flash_sdp_enabled, math, mem_efficient,
cudnn, overrideable, and the sdp_kernel context manager) are the state nn.attention.sdpa_kernel
sets: F.scaled_dot_product_attention (every device) runs the fused op where flash or
mem_efficient is on (falling back to math, when on, for inputs the fused op does not take), the
math composite where only math is on, and raises "No available kernel" where none of the three
is on."""
import contextlib

import oneflow_like as flow
from oneflow_like.nn.attention import SDPBackend, _is_enabled, _set_enabled


class _MatmulFlags:
    _allow_tf32 = False

    @property
    def allow_tf32(self):
        return _MatmulFlags._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        flow.cuda.set_allow_tf32(bool(value))
        _MatmulFlags._allow_tf32 = bool(value)


matmul = _MatmulFlags()


def _sdp_switches(backend, what):
    def enable(enabled):
        if not isinstance(enabled, bool):
            raise TypeError(
                f"[backends.cuda.enable_{what}_sdp] expected a bool, got {type(enabled).__name__}"
            )
        _set_enabled(backend, enabled)

    def enabled():
        return _is_enabled(backend)

    enable.__name__, enabled.__name__ = f"enable_{what}_sdp", f"{what}_sdp_enabled"
    enable.__doc__ = f"torch.backends.cuda.enable_{what}_sdp: allows or forbids {backend.name}."
    enabled.__doc__ = f"torch.backends.cuda.{what}_sdp_enabled: whether {backend.name} is allowed."
    return enable, enabled


enable_flash_sdp, flash_sdp_enabled = _sdp_switches(SDPBackend.FLASH_ATTENTION, "flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp_switches(
    SDPBackend.EFFICIENT_ATTENTION, "mem_efficient"
)
enable_math_sdp, math_sdp_enabled = _sdp_switches(SDPBackend.MATH, "math")
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp_switches(SDPBackend.CUDNN_ATTENTION, "cudnn")
enable_overrideable_sdp, overrideable_sdp_enabled = _sdp_switches(
    SDPBackend.OVERRIDEABLE, "overrideable"
)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """torch.backends.cuda.sdp_kernel (deprecated in PyTorch for nn.attention.sdpa_kernel):
    sets the four switches inside the region and restores them on exit."""
    names = ("flash", "math", "mem_efficient", "cudnn")
    wanted = (enable_flash, enable_math, enable_mem_efficient, enable_cudnn)
    backends = (
        SDPBackend.FLASH_ATTENTION,
        SDPBackend.MATH,
        SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION,
    )
    for n, v in zip(names, wanted):
        if not isinstance(v, bool):
            raise TypeError(f"[backends.cuda.sdp_kernel] enable_{n} must be a bool, got {v!r}")
    saved = [_is_enabled(b) for b in backends]
    try:
        for b, v in zip(backends, wanted):
            _set_enabled(b, v)
        yield
    finally:
        for b, v in zip(backends, saved):
            _set_enabled(b, v)
