"""The fused scaled-dot-product attention (_scaled_dot_product_flash_attention, FlashAttention-2's
tiled online softmax; kernels/cpu/attention.cc) against the math composite and against PyTorch
1.13 (which has no F.scaled_dot_product_attention: the reference is its matmul + softmax, in
float64): forward and the gradients of q, k, v; causal, bool/float masks with broadcasting, grouped
query heads, dropout (same seed -> same mask as the composite, gradients by finite differences),
odd sizes, bf16/f16 (and autocast), fully masked rows, routing by sdpa_kernel, graphs, errors."""
import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like.nn import functional as F
from oneflow_like.nn.attention import SDPBackend, sdpa_kernel

RNG = np.random.default_rng(7)


def _rand(*shape):
    return RNG.uniform(-1, 1, size=shape)


def torch_sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=1, upstream=None):
    """PyTorch 1.13 float64 math attention (torch >= 2.5's semantics: fully masked rows give 0)
    and the gradients of q, k, v for `upstream`."""
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    kk, vv = tk, tv
    if gqa > 1:
        kk, vv = tk.repeat_interleave(gqa, -3), tv.repeat_interleave(gqa, -3)
    sc = scale if scale is not None else 1.0 / np.sqrt(q.shape[-1])
    s = tq @ kk.transpose(-1, -2) * sc
    L, S = s.shape[-2:]
    if causal:
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        m = torch.tensor(mask)
        s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m
    dead = torch.isneginf(s).all(-1, keepdim=True)
    p = torch.softmax(s.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
    out = p @ vv
    up = upstream if upstream is not None else np.ones(out.shape)
    (out * torch.tensor(up)).sum().backward()
    return out.detach().numpy(), [t.grad.detach().numpy() for t in (tq, tk, tv)]


def ours(q, k, v, backend, dtype=flow.float64, **kw):
    """Our attention through `backend` (an SDPBackend or a list): the output and the gradients
    of q, k, v for an upstream of ones times a fixed pattern."""
    ts = [flow.tensor(a, dtype=dtype, requires_grad=True) for a in (q, k, v)]
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(*ts, **kw)
    up = kw_up(out.shape)
    (out * flow.tensor(up, dtype=out.dtype)).sum().backward()
    return out, [t.grad for t in ts], up


def kw_up(shape):
    return (np.arange(int(np.prod(shape))).reshape(tuple(shape)) % 7 - 3.0) / 3.0


FUSED = SDPBackend.FLASH_ATTENTION
MATH = SDPBackend.MATH

# (batch dims, L, S, E, Ev): odd sizes around the tiles (64 rows x 64 keys on the CPU), E = 1, 3,
# 64, 80, 128.
SHAPES = [
    ((2, 3), 5, 7, 4, 4),
    ((1, 1), 1, 1, 1, 1),
    ((2,), 67, 130, 3, 5),
    ((1, 2), 64, 64, 64, 64),
    ((1, 1), 65, 129, 80, 80),
    ((1, 1), 17, 200, 128, 32),
    ((), 130, 66, 8, 16),
]


def _close(a, b, tol):
    a = a.detach().numpy() if hasattr(a, "numpy") else a
    np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_fused_matches_torch_and_math(shape, causal):
    b, L, S, E, Ev = shape
    q, k, v = _rand(*b, L, E), _rand(*b, S, E), _rand(*b, S, Ev)
    out, grads, up = ours(q, k, v, FUSED, is_causal=causal)
    ref, rgrads = torch_sdpa(q, k, v, causal=causal, upstream=up)
    _close(out, ref, 1e-10)
    for g, r in zip(grads, rgrads):
        _close(g, r, 1e-9)
    mout, mgrads, _ = ours(q, k, v, MATH, is_causal=causal)
    _close(out, mout.detach().numpy(), 1e-10)
    for g, m in zip(grads, mgrads):
        _close(g, m.detach().numpy(), 1e-9)
    # f32 through the same kernels (f32 accumulation).
    out32, grads32, _ = ours(q, k, v, FUSED, dtype=flow.float32, is_causal=causal)
    assert out32.dtype == flow.float32
    _close(out32, ref, 2e-5)
    for g, r in zip(grads32, rgrads):
        _close(g, r, 1e-4 * max(1.0, np.abs(r).max()))


@pytest.mark.parametrize(
    "mask_shape", [(9, 11), (2, 1, 9, 11), (1, 3, 1, 11), (3, 9, 11), (11,)], ids=str
)
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_masks_broadcast(mask_shape, kind):
    q, k, v = _rand(2, 3, 9, 6), _rand(2, 3, 11, 6), _rand(2, 3, 11, 5)
    if kind == "bool":
        mask = RNG.random(mask_shape) > 0.4
        mask[..., 0] = True  # no fully masked rows here (see test_fully_masked_rows)
        fm = flow.tensor(mask)
    else:
        mask = _rand(*mask_shape) * 2
        fm = flow.tensor(mask, dtype=flow.float64)
    out, grads, up = ours(q, k, v, FUSED, attn_mask=fm)
    ref, rgrads = torch_sdpa(q, k, v, mask=mask, upstream=up)
    _close(out, ref, 1e-10)
    for g, r in zip(grads, rgrads):
        _close(g, r, 1e-9)
    mout, _, _ = ours(q, k, v, MATH, attn_mask=fm)
    _close(out, mout.detach().numpy(), 1e-10)
    # mask and causal together, scale given
    out, grads, up = ours(q, k, v, FUSED, attn_mask=fm, is_causal=True, scale=0.3)
    ref, rgrads = torch_sdpa(q, k, v, mask=mask, causal=True, scale=0.3, upstream=up)
    _close(out, ref, 1e-10)
    for g, r in zip(grads, rgrads):
        _close(g, r, 1e-9)


def test_fully_masked_rows_give_zero_on_both_paths():
    """torch >= 2.5 (_safe_softmax): a row with every key masked gives output 0 and no
    gradient, on the fused and the math path alike (earlier torch and our old math path: NaN)."""
    q, k, v = _rand(1, 2, 6, 4), _rand(1, 2, 70, 4), _rand(1, 2, 70, 3)
    mask = RNG.random((6, 70)) > 0.5
    mask[2] = False
    mask[4, :] = False
    for backend in (FUSED, MATH):
        out, grads, up = ours(q, k, v, backend, attn_mask=flow.tensor(mask))
        ref, rgrads = torch_sdpa(q, k, v, mask=mask, upstream=up)
        assert np.all(out.detach().numpy()[:, :, [2, 4]] == 0)
        _close(out, ref, 1e-10)
        for g, r in zip(grads, rgrads):
            assert np.isfinite(g.detach().numpy()).all()
            _close(g, r, 1e-9)
    ninf = np.where(mask, 0.0, -np.inf)
    out, grads, up = ours(q, k, v, FUSED, attn_mask=flow.tensor(ninf, dtype=flow.float64))
    assert np.all(out.detach().numpy()[:, :, [2, 4]] == 0)


@pytest.mark.parametrize("H,Hk", [(8, 2), (6, 3), (4, 1)])
def test_grouped_query_attention(H, Hk):
    q, k, v = _rand(2, H, 13, 8), _rand(2, Hk, 70, 8), _rand(2, Hk, 70, 6)
    for backend in (FUSED, MATH):
        out, grads, up = ours(q, k, v, backend, enable_gqa=True, is_causal=True)
        ref, rgrads = torch_sdpa(q, k, v, causal=True, gqa=H // Hk, upstream=up)
        _close(out, ref, 1e-10)
        for g, r in zip(grads, rgrads):
            _close(g, r, 1e-9)
    with pytest.raises(ValueError, match=r"\[scaled_dot_product_attention\] enable_gqa"):
        F.scaled_dot_product_attention(
            flow.zeros(1, 5, 3, 4), flow.zeros(1, 2, 3, 4), flow.zeros(1, 2, 3, 4), enable_gqa=True
        )
    with pytest.raises(ValueError, match="scaled_dot_product_attention"):  # without enable_gqa
        F.scaled_dot_product_attention(
            flow.zeros(1, 4, 3, 4), flow.zeros(1, 2, 3, 4), flow.zeros(1, 2, 3, 4)
        )


def test_dropout_same_seed_same_mask_as_math():
    """The fused op's dropout draws the composite dropout's mask (same seed, same element
    index), so with one seed both paths agree; another seed differs."""
    q, k, v = (flow.tensor(a) for a in (_rand(2, 2, 70, 8), _rand(2, 2, 90, 8), _rand(2, 2, 90, 5)))
    res = {}
    for name, backend in (("fused", FUSED), ("math", MATH)):
        flow.manual_seed(11)
        with sdpa_kernel(backend):
            res[name] = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3).detach().numpy()
    np.testing.assert_allclose(res["fused"], res["math"], rtol=1e-10, atol=1e-12)
    flow.manual_seed(11)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3).detach().numpy()
    np.testing.assert_array_equal(again, res["fused"])
    other = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3).detach().numpy()
    assert not np.allclose(other, res["fused"])
    nodrop = F.scaled_dot_product_attention(q, k, v).detach().numpy()
    assert not np.allclose(nodrop, res["fused"])


def test_dropout_gradient_by_finite_differences():
    """Backward regenerates the forward's mask from (seed, index): with a fixed seed the output
    is a smooth function of q, k, v, whose gradients match central differences."""
    arrays = [_rand(1, 2, 9, 3), _rand(1, 2, 70, 3), _rand(1, 2, 70, 2)]
    up = _rand(1, 2, 9, 2)

    def f(qa, ka, va, grad=False):
        ts = [flow.tensor(a, requires_grad=grad) for a in (qa, ka, va)]
        flow.manual_seed(5)
        with sdpa_kernel(FUSED):
            out = F.scaled_dot_product_attention(*ts, dropout_p=0.4, is_causal=True)
        loss = (out * flow.tensor(up)).sum()
        if grad:
            loss.backward()
            return [t.grad.detach().numpy() for t in ts]
        return loss.item()

    grads = f(*arrays, grad=True)
    eps = 1e-6
    for i, a in enumerate(arrays):
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            num[idx] = (f(*plus) - f(*minus)) / (2 * eps)
        np.testing.assert_allclose(grads[i], num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", [flow.bfloat16, flow.float16])
def test_low_precision_inputs(dtype):
    q, k, v = _rand(2, 2, 70, 16), _rand(2, 2, 75, 16), _rand(2, 2, 75, 8)
    rq, rk, rv = (flow.tensor(a, dtype=dtype).to(flow.float64).detach().numpy() for a in (q, k, v))
    out, grads, up = ours(q, k, v, FUSED, dtype=dtype, is_causal=True)
    assert out.dtype == dtype and all(g.dtype == dtype for g in grads)
    ref, rgrads = torch_sdpa(rq, rk, rv, causal=True, upstream=up)
    tol = 2e-2 if dtype == flow.bfloat16 else 3e-3
    _close(out.to(flow.float64), ref, tol)
    for g, r in zip(grads, rgrads):
        _close(g.to(flow.float64), r, tol * 4)


def test_bf16_autocast():
    q, k, v = (flow.tensor(a, dtype=flow.float32) for a in (_rand(2, 4, 33, 16),) * 3)
    with flow.autocast("cpu", dtype=flow.bfloat16):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        mha = flow.nn.MultiheadAttention(16, 4, batch_first=True)
        x = flow.tensor(_rand(2, 9, 16), dtype=flow.float32)
        y, _ = mha(x, x, x, need_weights=False)
    assert out.dtype == flow.bfloat16 and y.dtype == flow.bfloat16
    ref, _ = torch_sdpa(
        *(t.to(flow.bfloat16).to(flow.float64).detach().numpy() for t in (q, k, v)), causal=True
    )
    _close(out.to(flow.float64), ref, 2e-2)


def test_routing_follows_sdpa_kernel():
    q, k, v = (flow.tensor(a, requires_grad=True) for a in (_rand(1, 2, 5, 4),) * 3)
    # The default picks the fused op; MATH alone, or MATH first by priority, the composite.
    assert "FlashAttention" in type_of_grad(F.scaled_dot_product_attention(q, k, v))
    with sdpa_kernel(MATH):
        assert "FlashAttention" not in type_of_grad(F.scaled_dot_product_attention(q, k, v))
    with sdpa_kernel([MATH, FUSED], set_priority=True):
        assert "FlashAttention" not in type_of_grad(F.scaled_dot_product_attention(q, k, v))
    for b in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        with sdpa_kernel(b):
            assert "FlashAttention" in type_of_grad(F.scaled_dot_product_attention(q, k, v))
    try:
        flow.backends.cuda.enable_flash_sdp(False)
        flow.backends.cuda.enable_mem_efficient_sdp(False)
        assert "FlashAttention" not in type_of_grad(F.scaled_dot_product_attention(q, k, v))
    finally:
        flow.backends.cuda.enable_flash_sdp(True)
        flow.backends.cuda.enable_mem_efficient_sdp(True)
    # A float mask that requires grad: the composite (it gives the mask its gradient) unless the
    # fused op is forced, which says why it cannot.
    m = flow.zeros(5, 5, dtype=flow.float64, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    out.sum().backward()
    assert m.grad is not None
    with sdpa_kernel(FUSED):
        with pytest.raises(ValueError, match=r"No available kernel.*attn_mask"):
            F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, k, v)


def type_of_grad(t):
    """The autograd node's name: torch's for the op that made t ("<Op>Backward0")."""
    return t.grad_fn.name()


def test_private_flash_op_returns_logsumexp():
    q, k, v = _rand(2, 3, 7, 4), _rand(2, 3, 9, 4), _rand(2, 3, 9, 5)
    out, lse = flow._C._scaled_dot_product_flash_attention(
        *(flow.tensor(a) for a in (q, k, v)), is_causal=True
    )
    s = q @ np.swapaxes(k, -1, -2) / 2.0
    s = np.where(np.tril(np.ones((7, 9), bool)), s, -np.inf)
    ref_lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    assert lse.dtype == flow.float64 and tuple(lse.shape) == (2, 3, 7)
    _close(lse, ref_lse, 1e-12)
    ref, _ = torch_sdpa(q, k, v, causal=True)
    _close(out, ref, 1e-12)
    _, lse32 = flow._C._scaled_dot_product_flash_attention(
        *(flow.tensor(a, dtype=flow.bfloat16) for a in (q, k, v))
    )
    assert lse32.dtype == flow.float32


def test_double_backward_through_the_fused_op():
    """create_graph=True: the gradient formula is written with differentiable ops, so a second
    derivative exists and matches the math path's."""
    arrays = [_rand(1, 2, 5, 3), _rand(1, 2, 6, 3), _rand(1, 2, 6, 2)]
    res = []
    for backend in (FUSED, MATH):
        ts = [flow.tensor(a, requires_grad=True) for a in arrays]
        with sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(*ts, is_causal=True)
        (gq,) = flow.autograd.grad(out.pow(2).sum(), [ts[0]], create_graph=True)
        gq.sum().backward()
        res.append([t.grad.detach().numpy() for t in ts])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


class _Attn(flow.nn.Graph):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def build(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **self.kw)


def test_graph_runs_the_fused_kernel_and_matches_eager():
    q, k, v = (flow.tensor(a) for a in (_rand(2, 2, 70, 8), _rand(2, 2, 80, 8), _rand(2, 2, 80, 4)))
    mask = flow.tensor(RNG.random((70, 80)) > 0.3)
    g = _Attn(attn_mask=mask, is_causal=True)
    lazy = g(q, k, v)
    eager = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    _close(lazy, eager.detach().numpy(), 1e-12)
    assert "_scaled_dot_product_flash_attention" in g.stats()["kernel_call_ops"]


def test_transformer_layers_use_the_fused_op():
    layer = flow.nn.TransformerEncoderLayer(
        16, 4, dim_feedforward=32, dropout=0.0, batch_first=True
    )
    x = flow.tensor(_rand(2, 7, 16), dtype=flow.float32)
    with sdpa_kernel(MATH):
        ref = layer(x).detach().numpy()
    with sdpa_kernel(FUSED):  # the math path off: only the fused op can run
        out = layer(x).detach().numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)
    mha = flow.nn.MultiheadAttention(16, 4, batch_first=True)
    with sdpa_kernel(FUSED):
        mha(x, x, x, need_weights=False)


def test_errors_name_the_op_and_shapes():
    with pytest.raises(
        TypeError,
        match=r"\[scaled_dot_product_attention\] expected query, key "
        r"and value of one dtype, got f32\[2,3,4\], f64\[2,5,4\]",
    ):
        F.scaled_dot_product_attention(
            flow.zeros(2, 3, 4), flow.zeros(2, 5, 4, dtype=flow.float64), flow.zeros(2, 5, 4)
        )
    with pytest.raises(
        ValueError,
        match=r"\[scaled_dot_product_attention\] expected query "
        r"\[\.\.\., L, E\].*f32\[2,3,4\], f32\[2,5,3\]",
    ):
        F.scaled_dot_product_attention(
            flow.zeros(2, 3, 4), flow.zeros(2, 5, 3), flow.zeros(2, 5, 3)
        )
    with pytest.raises(
        ValueError, match=r"attn_mask \w+\[4,5\] is not broadcastable to .*\[2,3,5\]"
    ):
        F.scaled_dot_product_attention(
            flow.zeros(2, 3, 4),
            flow.zeros(2, 5, 4),
            flow.zeros(2, 5, 4),
            attn_mask=flow.ones(4, 5, dtype=flow.bool),
        )
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\], got 1.5"):
        F.scaled_dot_product_attention(
            flow.zeros(2, 3, 4), flow.zeros(2, 5, 4), flow.zeros(2, 5, 4), dropout_p=1.5
        )
    with pytest.raises(TypeError, match=r"bool or floating attn_mask, got s64\[3,5\]"):
        F.scaled_dot_product_attention(
            flow.zeros(2, 3, 4),
            flow.zeros(2, 5, 4),
            flow.zeros(2, 5, 4),
            attn_mask=flow.zeros(3, 5, dtype=flow.int64),
        )


class _Block(flow.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = flow.nn.Linear(8, 24)
        self.out = flow.nn.Linear(8, 8)

    def forward(self, x):
        B, L, _ = x.shape
        q, k, v = self.qkv(x).reshape(B, L, 3, 2, 4).permute(2, 0, 3, 1, 4)
        return self.out(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, L, 8))


def test_compile_training_keeps_no_score_matrix(monkeypatch):
    """flow.compile's training path: the residuals between the forward and the backward graph
    are the leaf modules' arguments (no [.., L, S] tensor), and the backward graph recomputes
    the attention's out and lse with the fused op and runs its backward kernel, so no [L, S]
    probabilities are kept; the gradients equal eager mode's."""
    from oneflow_like import _compile

    seen = {}
    fwd = _compile._CompiledStep.forward

    def spy(ctx, path, entry, n_tensors, *tensors):
        out = fwd(ctx, path, entry, n_tensors, *tensors)
        seen["residuals"] = [tuple(r.shape) for r in ctx.residuals]
        seen["bwd_calls"] = list(entry.bwd.compiled.kernel_call_ops)
        return out

    monkeypatch.setattr(_compile._CompiledStep, "forward", staticmethod(spy))
    flow.manual_seed(0)
    block = _Block().double()
    x = flow.tensor(_rand(3, 37, 8))
    block(x).square().sum().backward()
    eager = [p.grad.detach().numpy().copy() for p in block.parameters()]
    block.zero_grad()
    compiled = flow.compile(block)
    compiled(x).square().sum().backward()
    assert seen["residuals"] and all(s[-2:] != (37, 37) for s in seen["residuals"])
    assert "_scaled_dot_product_flash_attention_backward" in seen["bwd_calls"]
    for p, e in zip(block.parameters(), eager):
        np.testing.assert_allclose(p.grad.detach().numpy(), e, rtol=1e-10, atol=1e-12)
