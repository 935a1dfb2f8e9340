"""flow.nn.attention (torch.nn.attention): SDPBackend, sdpa_kernel really restricting
F.scaled_dot_product_attention (MATH, and the fused op behind FLASH/EFFICIENT), the
torch.backends.cuda sdp flags on the same state, and CausalBias masks for q_len != kv_len checked
forward and backward against a float64 NumPy/PyTorch reference."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn.attention import SDPBackend, sdpa_kernel
from oneflow_like.nn.attention.bias import (
    CausalBias,
    CausalVariant,
    causal_lower_right,
    causal_upper_left,
)

cuda_flags = flow.backends.cuda


def _qkv(L=3, S=5, E=4, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((2, 2, n, E)) for n in (L, S, S)]


def test_enum_values_are_pytorchs():
    assert [(b.name, int(b)) for b in SDPBackend] == [
        ("ERROR", -1),
        ("MATH", 0),
        ("FLASH_ATTENTION", 1),
        ("EFFICIENT_ATTENTION", 2),
        ("CUDNN_ATTENTION", 3),
        ("OVERRIDEABLE", 4),
    ]


def test_sdpa_kernel_restricts_and_restores():
    q, k, v = (flow.tensor(a) for a in _qkv())
    ref = F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel(SDPBackend.MATH):
        _close(F.scaled_dot_product_attention(q, k, v), ref)
        assert cuda_flags.math_sdp_enabled() and not cuda_flags.flash_sdp_enabled()
        assert not cuda_flags.mem_efficient_sdp_enabled() and not cuda_flags.cudnn_sdp_enabled()
    assert cuda_flags.flash_sdp_enabled() and cuda_flags.math_sdp_enabled()
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        _close(F.scaled_dot_product_attention(q, k, v), ref)  # the fused op
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]):
        with pytest.raises(RuntimeError, match="No available kernel") as info:
            F.scaled_dot_product_attention(q, k, v)
        assert "CUDNN_ATTENTION, OVERRIDEABLE" in str(info.value)
        assert "(2, 2, 3, 4)" in str(info.value)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH], set_priority=True):
            _close(F.scaled_dot_product_attention(q, k, v), ref)
        with pytest.raises(RuntimeError, match="No available kernel"):
            x = q[0].float()
            flow.nn.MultiheadAttention(4, 2, batch_first=True)(x, x, x, need_weights=False)
    assert cuda_flags.math_sdp_enabled()
    with pytest.raises(RuntimeError, match="boom"):
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            raise RuntimeError("boom")
    assert cuda_flags.math_sdp_enabled()  # restored after an exception too
    with pytest.raises(AssertionError, match="SDPBackend"):
        with sdpa_kernel("math"):
            pass
    with pytest.raises(AssertionError, match="SDPBackend"):
        with sdpa_kernel([SDPBackend.MATH, 0]):
            pass


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


def test_backends_cuda_flags_share_the_state():
    q, k, v = (flow.tensor(a) for a in _qkv())
    ref = F.scaled_dot_product_attention(q, k, v)
    try:
        cuda_flags.enable_math_sdp(False)
        assert not cuda_flags.math_sdp_enabled()
        _close(F.scaled_dot_product_attention(q, k, v), ref)  # the fused op alone
        cuda_flags.enable_flash_sdp(False)
        cuda_flags.enable_mem_efficient_sdp(False)
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, k, v)
        with sdpa_kernel(SDPBackend.MATH):
            F.scaled_dot_product_attention(q, k, v)
        assert not cuda_flags.math_sdp_enabled()
    finally:
        cuda_flags.enable_math_sdp(True)
        cuda_flags.enable_flash_sdp(True)
        cuda_flags.enable_mem_efficient_sdp(True)
    with cuda_flags.sdp_kernel(enable_flash=False, enable_math=False):
        assert not cuda_flags.flash_sdp_enabled() and cuda_flags.mem_efficient_sdp_enabled()
        _close(F.scaled_dot_product_attention(q, k, v), ref)  # mem_efficient: the fused op
    with cuda_flags.sdp_kernel(enable_flash=False, enable_math=False, enable_mem_efficient=False):
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, k, v)
    assert cuda_flags.flash_sdp_enabled() and cuda_flags.math_sdp_enabled()
    for name in ("flash", "mem_efficient", "cudnn", "overrideable"):
        getattr(cuda_flags, f"enable_{name}_sdp")(False)
        assert not getattr(cuda_flags, f"{name}_sdp_enabled")()
        getattr(cuda_flags, f"enable_{name}_sdp")(True)
        assert getattr(cuda_flags, f"{name}_sdp_enabled")()
    with pytest.raises(TypeError, match="enable_flash_sdp"):
        cuda_flags.enable_flash_sdp("yes")


def _reference(q, k, v, allowed):
    """float64 PyTorch math attention with a boolean mask."""
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    s = tq @ tk.transpose(-1, -2) / np.sqrt(q.shape[-1])
    s = s.masked_fill(~torch.tensor(allowed), float("-inf"))
    out = torch.softmax(s, -1) @ tv
    (out * torch.tensor(np.arange(out.numel()).reshape(out.shape) % 3.0)).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in (tq, tk, tv)]


@pytest.mark.parametrize("L,S", [(3, 5), (4, 4), (2, 6)])
def test_causal_bias_upper_left_and_lower_right(L, S):
    q, k, v = _qkv(L, S)
    i, j = np.arange(L)[:, None], np.arange(S)[None, :]
    for make, allowed in ((causal_upper_left, j <= i), (causal_lower_right, j <= i + S - L)):
        bias = make(L, S)
        assert isinstance(bias, CausalBias)
        np.testing.assert_array_equal(bias.materialize().numpy(), allowed)
        fq, fk, fv = (flow.tensor(a, requires_grad=True) for a in (q, k, v))
        out = F.scaled_dot_product_attention(fq, fk, fv, attn_mask=bias)
        w = flow.tensor(np.arange(out.numel()).reshape(tuple(out.shape)) % 3.0)
        (out * w).sum().backward()
        ref, grads = _reference(q, k, v, allowed)
        np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12, atol=1e-12)
        for t, g in zip((fq, fk, fv), grads):
            np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-10, atol=1e-12)
    if L == S:  # square: upper-left is is_causal=True
        fq, fk, fv = (flow.tensor(a) for a in (q, k, v))
        _close(
            F.scaled_dot_product_attention(fq, fk, fv, attn_mask=causal_upper_left(L, S)),
            F.scaled_dot_product_attention(fq, fk, fv, is_causal=True),
        )


def test_causal_bias_errors():
    q, k, v = (flow.tensor(a) for a in _qkv(3, 5))
    with pytest.raises(ValueError, match="causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(3, 5), is_causal=True)
    with pytest.raises(ValueError, match="seq_len_q=4"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(4, 5))
    with pytest.raises(ValueError, match="seq_len_kv"):
        causal_upper_left(3, -1)
    with pytest.raises(TypeError, match="CausalVariant"):
        CausalBias(1, 3, 5)
    assert repr(causal_lower_right(3, 5)) == (
        "CausalBias(variant=LOWER_RIGHT, seq_len_q=3, seq_len_kv=5)"
    )
    assert CausalVariant.UPPER_LEFT == 1 and CausalVariant.LOWER_RIGHT == 2


def test_mock_torch_resolves_nn_attention():
    code = (
        "from oneflow_like import mock_torch\n"
        "mock_torch.enable()\n"
        "import torch\n"
        "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
        "from torch.nn.attention.bias import causal_lower_right\n"
        "import torch.nn.functional as F\n"
        "q = torch.randn(1, 2, 3, 4); k = torch.randn(1, 2, 5, 4)\n"
        "with sdpa_kernel([SDPBackend.MATH]):\n"
        "    out = F.scaled_dot_product_attention(q, k, k, attn_mask=causal_lower_right(3, 5))\n"
        "assert tuple(out.shape) == (1, 2, 3, 4)\n"
        "assert torch.backends.cuda.math_sdp_enabled()\n"
        "assert torch.nn.attention.SDPBackend.FLASH_ATTENTION == 1\n"
        "print('ok')\n"
    )
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
