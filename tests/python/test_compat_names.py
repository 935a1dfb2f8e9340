"""Issue 19: the long tail of torch names (top level, autograd, nn, testing, cuda), each
checked against torch 1.13 (values, dtypes, gradients in float64, errors)."""
import math
import warnings

import numpy as np
import pytest
import torch

import oneflow_like as flow

F = flow.nn.functional
TF = torch.nn.functional


def T(a, dtype=flow.float64, requires_grad=False):
    t = flow.tensor(np.asarray(a), dtype=dtype)
    return t.requires_grad_(True) if requires_grad else t


def R(a, dtype=torch.float64, requires_grad=False):
    return torch.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def close(ours, ref, rtol=1e-6, atol=1e-8):
    a = ours.detach().numpy() if isinstance(ours, flow.Tensor) else np.asarray(ours)
    b = ref.detach().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


rng = np.random.default_rng(0)


# ---- constants, typed classes ------------------------------------------------------------------


def test_constants():
    for n in ("pi", "e", "inf"):
        assert getattr(flow, n) == getattr(torch, n)
    assert math.isnan(flow.nan)


@pytest.mark.parametrize(
    "name", ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
             "IntTensor", "CharTensor", "ByteTensor", "BoolTensor"]  # fmt: skip
)
def test_typed_constructors(name):
    ours, ref = getattr(flow, name), getattr(torch, name)
    a, b = ours(2, 3), ref(2, 3)
    assert (
        tuple(a.shape) == tuple(b.shape)
        and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    )
    assert tuple(ours(flow.Size([4])).shape) == (4,) and tuple(ours().shape) == tuple(
        ref().shape
    ) == (0,)
    close(ours((1, 0)).to(flow.float64), ref((1, 0)).double())  # a tuple is values, as torch
    vals = [1, 0, 1]
    close(ours(vals).to(flow.float64), ref(vals).double())
    assert isinstance(a, ours) and not isinstance(
        a.to(flow.float64 if name != "DoubleTensor" else flow.float32), ours
    )
    assert ours(a) is a
    assert a.type(ours) is a


def test_typed_isinstance_and_errors():
    x = flow.randn(2)
    assert isinstance(x, flow.FloatTensor) and not isinstance(x, flow.LongTensor)
    assert not isinstance(x, flow.cuda.FloatTensor)
    assert x.type(flow.DoubleTensor).dtype == flow.float64
    assert x.type("torch.FloatTensor") is x
    with pytest.raises(TypeError, match="FloatTensor"):
        flow.FloatTensor(flow.tensor([1, 2]))  # a LongTensor
    with pytest.raises(TypeError, match="expected"):
        torch.FloatTensor(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="negative"):
        flow.FloatTensor(-1, 2)
    assert flow.ShortTensor([1, 2]).dtype == flow.int16
    assert isinstance(flow.tensor([1], dtype=flow.short), flow.ShortTensor)


# ---- layout, memory formats --------------------------------------------------------------------


def test_layout_and_memory_format_objects():
    def short(x):  # ours print as oneflow_like.X, as our dtypes do
        return repr(x).split(".")[-1]

    assert short(flow.strided) == short(torch.strided) == "strided"
    assert short(flow.sparse_coo) == short(torch.sparse_coo) == "sparse_coo"
    assert isinstance(flow.strided, flow.layout) and flow.randn(2).layout is flow.strided
    for n in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
        assert short(getattr(flow, n)) == short(getattr(torch, n)) == n
        assert isinstance(getattr(flow, n), flow.memory_format)


def test_memory_format_honoured():
    a = rng.standard_normal((2, 3, 4, 5))
    x, y = T(a), R(a)
    for fmt in ("channels_last", "contiguous_format"):
        close(
            x.contiguous(memory_format=getattr(flow, fmt)),
            y.contiguous(memory_format=getattr(torch, fmt)),
        )
        close(x.to(memory_format=getattr(flow, fmt)), y.to(memory_format=getattr(torch, fmt)))
        close(x.clone(memory_format=getattr(flow, fmt)), y.clone(memory_format=getattr(torch, fmt)))
        for like in ("zeros_like", "ones_like", "empty_like"):
            o = getattr(flow, like)(x, memory_format=getattr(flow, fmt))
            r = getattr(torch, like)(y, memory_format=getattr(torch, fmt))
            assert tuple(o.shape) == tuple(r.shape)
            if like != "empty_like":
                close(o, r)
    # strides here stay row-major, so the is_contiguous queries follow them as torch's would
    assert x.is_contiguous(memory_format=flow.channels_last) == y.is_contiguous(
        memory_format=torch.channels_last
    )
    p = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # a real NHWC layout
    q = y.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert (
        p.is_contiguous(memory_format=flow.channels_last)
        == q.is_contiguous(memory_format=torch.channels_last)
        == True
    )  # noqa: E712
    close(
        flow.randn(2, 3, 4, 5, 6).contiguous(memory_format=flow.channels_last_3d).shape,
        np.array([2, 3, 4, 5, 6]),
    )


def test_memory_format_errors():
    with pytest.raises(RuntimeError, match="rank 4"):
        torch.randn(2, 3).contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="contiguous.*rank 4"):
        flow.randn(2, 3).contiguous(memory_format=flow.channels_last)
    with pytest.raises(RuntimeError, match="rank 4"):
        flow.randn(2, 3).to(memory_format=flow.channels_last)
    with pytest.raises(RuntimeError, match="preserve"):
        flow.randn(2, 3).contiguous(memory_format=flow.preserve_format)
    with pytest.raises(TypeError, match="memory_format"):
        flow.randn(2, 3).contiguous(memory_format="channels_last")


def test_module_to_memory_format():
    m = flow.nn.Conv2d(3, 4, 3)
    w = m.weight.detach().numpy().copy()
    assert m.to(memory_format=flow.channels_last) is m
    close(m.weight, w)


# ---- process-wide switches ---------------------------------------------------------------------


def test_matmul_precision_follows_tf32():
    assert flow.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    try:
        flow.set_float32_matmul_precision("medium")
        assert flow.backends.cuda.matmul.allow_tf32 is True
        assert flow.get_float32_matmul_precision() == "medium"
        flow.backends.cuda.matmul.allow_tf32 = False
        assert flow.get_float32_matmul_precision() == "highest"
        flow.backends.cuda.matmul.allow_tf32 = True
        assert flow.get_float32_matmul_precision() == "high"
    finally:
        flow.set_float32_matmul_precision("highest")
    assert flow.backends.cuda.matmul.allow_tf32 is False
    with pytest.raises(RuntimeError, match="invalid precision"):
        flow.set_float32_matmul_precision("low")


def test_warn_always():
    assert flow.is_warn_always_enabled() is torch.is_warn_always_enabled() is False

    def shown_twice():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("once")
            flow.set_warn_always(flow.is_warn_always_enabled())  # re-apply inside the context
            for _ in range(2):
                flow.testing.assert_allclose(flow.ones(1), flow.ones(1))  # warns: deprecated
        return len(seen) == 2

    assert not shown_twice()
    flow.set_warn_always(True)
    try:
        assert flow.is_warn_always_enabled() and shown_twice()
    finally:
        flow.set_warn_always(False)
    assert not flow.is_warn_always_enabled() and not shown_twice()


def test_autocast_state_names():
    assert (
        flow.get_autocast_cpu_dtype() == flow.bfloat16
        and torch.get_autocast_cpu_dtype() == torch.bfloat16
    )
    assert (
        flow.get_autocast_gpu_dtype() == flow.float16
        and torch.get_autocast_gpu_dtype() == torch.float16
    )
    assert flow.is_autocast_cpu_enabled() is False
    with flow.autocast("cpu"):
        assert flow.is_autocast_cpu_enabled() and flow.is_autocast_enabled("cpu")
    flow.set_autocast_cpu_enabled(True)
    try:
        assert flow.is_autocast_enabled("cpu")
        x = flow.randn(2, 3)
        assert flow.matmul(x, x.t()).dtype == flow.bfloat16  # the switch drives dispatch
    finally:
        flow.set_autocast_cpu_enabled(False)
    flow.set_autocast_cpu_dtype(flow.float16)
    try:
        assert flow.get_autocast_cpu_dtype() == flow.float16 == flow.get_autocast_dtype("cpu")
    finally:
        flow.set_autocast_cpu_dtype(flow.bfloat16)
    with pytest.raises(RuntimeError, match="float16 and bfloat16"):
        flow.set_autocast_cpu_dtype(flow.float64)
    flow.set_autocast_enabled(True)
    try:
        assert flow.is_autocast_enabled() is True
    finally:
        flow.set_autocast_enabled(False)
    assert flow.is_autocast_cache_enabled() is torch.is_autocast_cache_enabled() is True
    assert flow.autocast_increment_nesting() == 1 and flow.autocast_decrement_nesting() == 0
    flow.clear_autocast_cache()


def test_build_flags():
    assert flow.compiled_with_cxx11_abi() is True  # Debian's g++ default
    for n in (
        "has_cuda",
        "has_cudnn",
        "has_mkl",
        "has_mkldnn",
        "has_openmp",
        "has_lapack",
        "has_mps",
        "has_spectral",
    ):
        assert isinstance(getattr(flow, n), bool)
    assert flow.has_mps is False and flow.has_mkldnn is True
    import subprocess

    ldd = subprocess.run(["ldd", flow._C.__file__], capture_output=True, text=True).stdout
    assert flow.has_cudnn == ("libcudnn" in ldd)


# ---- sampling ----------------------------------------------------------------------------------


def test_binomial_and_poisson_statistics():
    flow.manual_seed(1)
    count, prob = flow.full((20000,), 10.0), flow.full((20000,), 0.3)
    b = flow.binomial(count, prob)
    assert b.dtype == flow.float32 and float(b.min()) >= 0 and float(b.max()) <= 10
    assert abs(float(b.mean()) - 3.0) < 0.05 and abs(float(b.var()) - 2.1) < 0.1
    lam = flow.full((20000,), 4.0)
    p = flow.poisson(lam)
    assert abs(float(p.mean()) - 4.0) < 0.06 and abs(float(p.var()) - 4.0) < 0.2
    assert (p == p.round()).all()
    flow.manual_seed(7)
    a1 = flow.poisson(lam[:10])
    flow.manual_seed(7)
    assert (flow.poisson(lam[:10]) == a1).all()
    g = flow.Generator().manual_seed(3)
    assert flow.binomial(count[:5], prob[:5], generator=g).shape == (5,)
    with pytest.raises(RuntimeError, match="binomial.*prob"):
        flow.binomial(count[:2], flow.tensor([0.5, 1.5]))
    with pytest.raises(RuntimeError, match="poisson"):
        flow.poisson(flow.tensor([-1.0]))
    # torch agrees on the edge cases
    assert (
        float(flow.binomial(flow.tensor([5.0]), flow.tensor([1.0])))
        == float(torch.binomial(torch.tensor([5.0]), torch.tensor([1.0])))
        == 5.0
    )
    assert (
        float(flow.poisson(flow.tensor([0.0]))) == float(torch.poisson(torch.tensor([0.0]))) == 0.0
    )


# ---- conj family -------------------------------------------------------------------------------


def test_conj_family_on_real_tensors():
    x = flow.randn(3)
    for n in ("conj", "resolve_conj", "resolve_neg"):
        assert getattr(flow, n)(x) is x and getattr(x, n)() is x
    assert flow.is_conj(x) is flow.is_neg(x) is x.is_conj() is False
    assert torch.is_conj(torch.randn(3)) is False
    c = flow.conj_physical(x)
    assert c is not x and (c == x).all()


# ---- top-level losses and ATen-signature functions ---------------------------------------------


def test_top_level_losses_match_torch():
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    lp = np.log(np.abs(a) + 0.1)
    tgt = np.abs(b) / np.abs(b).sum(1, keepdims=True)
    for red in (0, 1, 2):
        x, rx = T(lp, requires_grad=True), R(lp, requires_grad=True)
        o, r = flow.kl_div(x, T(tgt), red), torch.kl_div(rx, R(tgt), red)
        close(o, r)
        o.sum().backward(), r.sum().backward()
        close(x.grad, rx.grad)
    y = np.sign(rng.standard_normal(4))
    close(
        flow.cosine_embedding_loss(T(a), T(b), T(y), 0.1, 2),
        torch.cosine_embedding_loss(R(a), R(b), R(y), 0.1, 2),
    )
    close(
        flow.hinge_embedding_loss(T(a), T(np.sign(b)), 1.0, 1),
        torch.hinge_embedding_loss(R(a), R(np.sign(b)), 1.0, 1),
    )
    close(
        flow.margin_ranking_loss(T(a[:, 0]), T(b[:, 0]), T(y), 0.2, 0),
        torch.margin_ranking_loss(R(a[:, 0]), R(b[:, 0]), R(y), 0.2, 0),
    )
    c = rng.standard_normal((4, 5))
    close(
        flow.triplet_margin_loss(T(a), T(b), T(c), 1.0, 2, 1e-6, False, 1),
        torch.triplet_margin_loss(R(a), R(b), R(c), 1.0, 2, 1e-6, False, 1),
    )
    cnt = rng.poisson(2.0, (4, 5)).astype(float)
    close(
        flow.poisson_nll_loss(T(a), T(cnt), True, False, 1e-8, 1),
        torch.poisson_nll_loss(R(a), R(cnt), True, False, 1e-8, 1),
    )
    lpr = np.log(np.exp(rng.standard_normal((6, 2, 4)))).astype(np.float32)
    lpr = lpr - np.log(np.exp(lpr).sum(-1, keepdims=True))
    tg, il, tl = [[1, 2], [3, 3]], [6, 5], [2, 2]
    o = flow.ctc_loss(
        T(lpr, flow.float32), flow.tensor(tg), flow.tensor(il), flow.tensor(tl), 0, 1, False
    )
    r = torch.ctc_loss(
        torch.tensor(lpr), torch.tensor(tg), torch.tensor(il), torch.tensor(tl), 0, 1, False
    )
    close(o, r, rtol=1e-5)
    with pytest.raises(ValueError, match="kl_div.*reduction"):
        flow.kl_div(T(lp), T(tgt), 5)


def test_dropout_functions():
    x = flow.ones(20, 10, 7)
    y = flow.feature_dropout(x, 0.5, True)
    chans = y.detach().numpy().reshape(200, 7)
    assert set(np.unique(chans)) <= {0.0, 2.0} and all(
        len(set(r)) == 1 for r in chans
    )  # whole channels
    ry = torch.feature_dropout(torch.ones(20, 10, 7), 0.5, True).detach().numpy().reshape(200, 7)
    assert all(len(set(r)) == 1 for r in ry)
    assert (
        flow.feature_dropout(x, 0.5, False) is x or (flow.feature_dropout(x, 0.5, False) == x).all()
    )
    z = flow.ones(1000)
    out = flow.dropout_(z, 0.5, True)
    assert (
        out is z
        and set(np.unique(z.detach().numpy())) <= {0.0, 2.0}
        and 300 < float(z.sum()) / 2 < 700
    )
    w = flow.randn(100)
    before = w.detach().numpy().copy()
    flow.alpha_dropout_(w, 0.0, True)
    close(w, before)
    t = flow.ones(3, 4, 5)
    assert flow.feature_alpha_dropout_(t, 0.5, False) is t
    x = flow.ones(50, requires_grad=True)
    y = x * 3
    flow.dropout_(y, 0.5, True)
    y.sum().backward()  # the gradient goes through the in-place dropout: 3 * mask / (1 - p)
    assert np.array_equal(x.grad.detach().numpy(), np.where(y.detach().numpy() == 0, 0.0, 6.0))
    leaf = flow.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="dropout_.*leaf"):
        flow.dropout_(leaf, 0.5, True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        torch.dropout_(torch.ones(3, requires_grad=True), 0.5, True)


def test_constant_pad_nd_instance_norm_max_pool1d():
    a = rng.standard_normal((2, 3, 6))
    for pad in ([1, 2], [-1, 2, 0, 1]):
        x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
        o, r = flow.constant_pad_nd(x, pad, 1.5), torch.constant_pad_nd(rx, pad, 1.5)
        close(o, r)
        (o * o).sum().backward(), (r * r).sum().backward()
        close(x.grad, rx.grad)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    close(flow.instance_norm(T(a), T(w), T(b), None, None, True, 0.1, 1e-5, False),
          torch.instance_norm(R(a), R(w), R(b), None, None, True, 0.1, 1e-5, False))  # fmt: skip
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    (o, oi), (r, ri) = flow.max_pool1d_with_indices(x, [2], [2]), torch.max_pool1d_with_indices(
        rx, [2], [2]
    )
    close(o, r)
    assert (oi.detach().numpy() == ri.detach().numpy()).all()
    o.sum().backward(), r.sum().backward()
    close(x.grad, rx.grad)
    (o, oi), (r, ri) = flow.max_pool1d_with_indices(x, 3, 1, 1), torch.max_pool1d_with_indices(
        rx, 3, 1, 1
    )
    close(o, r)
    assert (oi.detach().numpy() == ri.detach().numpy()).all()


def test_embedding_bag_aten_signature():
    w = rng.standard_normal((10, 3))
    idx, offs = [1, 2, 4, 5, 4, 3, 2, 9], [0, 4]
    for mode in (0, 1, 2):
        x, rx = T(w, requires_grad=True), R(w, requires_grad=True)
        o = flow.embedding_bag(x, flow.tensor(idx), flow.tensor(offs), False, mode)
        r = torch.embedding_bag(rx, torch.tensor(idx), torch.tensor(offs), False, mode)
        close(o[0], r[0])
        # offset2bag, bag sizes, the rows of the maxima, as torch fills them (torch's sum mode
        # fills offset2bag for float64 weights only: not compared there)
        for k in (1, 2, 3) if mode else (2, 3):
            assert o[k].detach().numpy().tolist() == r[k].detach().numpy().tolist(), (mode, k)
        o[0].sum().backward(), r[0].sum().backward()
        close(x.grad, rx.grad)


# ---- gradient, histogramdd, segment_reduce -----------------------------------------------------


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_torch(edge_order):
    a = rng.standard_normal((5, 6))
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    for kw, rkw in [
        ({}, {}),
        ({"spacing": 2.0}, {"spacing": 2.0}),
        ({"spacing": [0.5, 3.0]}, {"spacing": [0.5, 3.0]}),
        ({"dim": 1}, {"dim": 1}),
        ({"spacing": [T(np.cumsum(rng.random(5) + 0.1))], "dim": 0}, None),
    ]:
        if rkw is None:
            rkw = {"spacing": [R(kw["spacing"][0].detach().numpy())], "dim": 0}
        o = flow.gradient(x, edge_order=edge_order, **kw)
        r = torch.gradient(rx, edge_order=edge_order, **rkw)
        assert len(o) == len(r)
        for oo, rr in zip(o, r):
            close(oo, rr, rtol=1e-9, atol=1e-10)
        sum(oo.sum() * (i + 1) for i, oo in enumerate(o)).backward()
        sum(rr.sum() * (i + 1) for i, rr in enumerate(r)).backward()
        close(x.grad, rx.grad, atol=1e-10)
        x.grad = None
        rx.grad = None
    with pytest.raises(RuntimeError, match="gradient"):
        flow.gradient(flow.randn(1, 3), edge_order=1)


def test_histogramdd_matches_torch():
    pts = rng.random((50, 2)).astype(np.float32)
    h, e = flow.histogramdd(T(pts, flow.float32), bins=[3, 4])
    rh, re = torch.histogramdd(torch.tensor(pts), bins=[3, 4])
    close(h, rh)
    for a, b in zip(e, re):
        close(a, b, rtol=1e-6)
    w = rng.random(50).astype(np.float32)
    h, _ = flow.histogramdd(
        T(pts, flow.float32),
        bins=5,
        range=[0.0, 1.0, 0.0, 1.0],
        weight=T(w, flow.float32),
        density=True,
    )
    rh, _ = torch.histogramdd(
        torch.tensor(pts), bins=5, range=[0.0, 1.0, 0.0, 1.0], weight=torch.tensor(w), density=True
    )
    close(h, rh, rtol=1e-5)
    edges = [T([0.0, 0.2, 1.0], flow.float32), T([0.0, 0.5, 0.7, 1.0], flow.float32)]
    h, _ = flow.histogramdd(T(pts, flow.float32), bins=edges)
    rh, _ = torch.histogramdd(
        torch.tensor(pts), bins=[torch.tensor([0.0, 0.2, 1.0]), torch.tensor([0.0, 0.5, 0.7, 1.0])]
    )
    close(h, rh)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce(reduce):
    a = rng.standard_normal((6, 3))
    lengths = [2, 0, 3, 1]
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    o = flow.segment_reduce(x, reduce, lengths=flow.tensor(lengths))
    r = torch.segment_reduce(rx, reduce, lengths=torch.tensor(lengths))
    close(o, r)
    mask = np.isfinite(r.detach().numpy())
    (o * T(mask.astype(float))).nan_to_num().sum().backward()
    (r * R(mask.astype(float))).nan_to_num().sum().backward()
    close(x.grad, rx.grad)
    oi = flow.segment_reduce(x, reduce, lengths=flow.tensor(lengths), initial=0.5)
    ri = torch.segment_reduce(rx, reduce, lengths=torch.tensor(lengths), initial=0.5)
    close(oi, ri)
    o2 = flow.segment_reduce(x, reduce, offsets=flow.tensor([0, 2, 2, 5, 6]))
    close(o2, r)


# ---- *_copy ------------------------------------------------------------------------------------


def test_copy_functions_are_real_copies():
    a = rng.standard_normal((2, 3, 4))
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    cases = [
        ("view_copy", ([6, 4],)), ("permute_copy", ([2, 0, 1],)), ("transpose_copy", (0, 2)),
        ("unsqueeze_copy", (1,)), ("select_copy", (1, 2)), ("diagonal_copy", (0, 1, 2)),
        ("expand_copy", ([3, 2, 3, 4],)), ("slice_copy", (2, 1, 3, 1)), ("detach_copy", ()),
        ("as_strided_copy", ([2, 2], [1, 2])), ("unfold_copy", (2, 2, 1)), ("alias_copy", ()),
        ("squeeze_copy", ()),
    ]  # fmt: skip
    for name, args in cases:
        o, r = getattr(flow, name)(x, *args), getattr(torch, name)(rx, *args)
        close(o, r)
        if name != "detach_copy":
            assert o.is_contiguous()
            (o * 2).sum().backward(), (r * 2).sum().backward()
            close(x.grad, rx.grad)
            x.grad, rx.grad = None, None
    for name, args in [
        ("split_copy", (2, 2)),
        ("unbind_copy", (1,)),
        ("split_with_sizes_copy", ([1, 3], 2)),
    ]:
        o, r = getattr(flow, name)(x, *args), getattr(torch, name)(rx, *args)
        for oo, rr in zip(o, r):
            close(oo, rr)
    m = flow.t_copy(T(a[0]))
    close(m, torch.t_copy(R(a[0])))
    v = flow.view_copy(x, [24])
    with flow.no_grad():
        v.zero_()
    assert float(x.abs().sum()) > 0  # not an alias


# ---- misc top level ----------------------------------------------------------------------------


def test_scalar_tensor_combinations_typename_is_storage():
    s, rs = flow.scalar_tensor(3), torch.scalar_tensor(3)
    assert s.dim() == 0 and s.dtype == flow.float32 and float(s) == float(rs)
    assert flow.scalar_tensor(2, dtype=flow.int64).dtype == flow.int64
    a = rng.standard_normal(4)
    for r in (0, 1, 2, 3, 5):
        for wr in (False, True):
            o, t = flow.combinations(T(a), r, wr), torch.combinations(R(a), r, wr)
            assert tuple(o.shape) == tuple(t.shape), (r, wr)
            close(o, t)
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    (flow.combinations(x, 2) ** 2).sum().backward()
    (torch.combinations(rx, 2) ** 2).sum().backward()
    close(x.grad, rx.grad)
    with pytest.raises(RuntimeError, match="combinations.*1-d"):
        flow.combinations(flow.randn(2, 2))
    assert flow.typename(flow.randn(2)).endswith(".FloatTensor")
    assert flow.typename(3) == torch.typename(3) == "int"
    assert flow.typename(flow.nn.Linear) == "oneflow_like.nn.modules.linear.Linear"
    assert flow.is_storage(flow.randn(2)) is torch.is_storage(torch.randn(2)) is False


def test_detach_in_place():
    x = flow.randn(3, requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    ry = torch.randn(3, requires_grad=True) * 2
    ry.detach_()
    assert ry.is_leaf and not ry.requires_grad
    z = flow.detach_(x * 3)
    assert z.is_leaf


# ---- autograd ----------------------------------------------------------------------------------


def test_variable():
    x = flow.randn(3)
    v = flow.autograd.Variable(x, requires_grad=True)
    assert isinstance(v, flow.Tensor) and v.requires_grad and v.is_leaf
    assert isinstance(x, flow.autograd.Variable) and isinstance(
        torch.randn(2), torch.autograd.Variable
    )
    (v * 2).sum().backward()
    close(v.grad, np.full(3, 2.0, dtype=np.float32))
    assert not flow.autograd.Variable(x).requires_grad


def test_gradcheck_passes_and_catches_wrong_gradients():
    a = T(rng.standard_normal((3, 2)), requires_grad=True)
    b = T(rng.standard_normal((2, 2)), requires_grad=True)
    assert flow.autograd.gradcheck(lambda p, q: (p @ q).tanh(), (a, b))
    assert flow.autograd.gradcheck(flow.sigmoid, (a,), eps=1e-6, atol=1e-5, rtol=1e-3)
    assert flow.autograd.gradgradcheck(lambda p: (p * p).sin(), (a,))

    def square_with_wrong_grad(base):
        class Wrong(base):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x  # should be 2 * g * x

        return Wrong.apply

    wrong, rwrong = square_with_wrong_grad(flow.autograd.Function), square_with_wrong_grad(
        torch.autograd.Function
    )
    with pytest.raises(
        flow.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ):
        flow.autograd.gradcheck(wrong, (a,))
    assert flow.autograd.gradcheck(wrong, (a,), raise_exception=False) is False
    assert (
        torch.autograd.gradcheck(
            rwrong, (R(a.detach().numpy(), requires_grad=True),), raise_exception=False
        )
        is False
    )
    with pytest.warns(UserWarning, match="not a double precision"):
        flow.autograd.gradcheck(
            flow.sigmoid, (flow.randn(2, requires_grad=True),), eps=1e-3, atol=1e-2, rtol=1e-2
        )
    with pytest.raises(ValueError, match="require"):
        flow.autograd.gradcheck(flow.sigmoid, (flow.randn(2, dtype=flow.float64),))


def test_detect_anomaly_names_the_node():
    assert flow.is_anomaly_enabled() is torch.is_anomaly_enabled() is False
    x = flow.tensor([0.0, 1.0], dtype=flow.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        ctx = flow.autograd.detect_anomaly()
    with ctx:
        assert flow.is_anomaly_enabled()
        y = flow.sqrt(x) * 0.0  # sqrt'(0) = inf, times 0 -> nan in sqrt's backward
        with pytest.raises(
            Exception, match=r"Function '\w*[Ss]qrt\w*' returned nan values in its 0th output"
        ):
            y.sum().backward()
    assert not flow.is_anomaly_enabled()
    rx = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    with torch.autograd.detect_anomaly():
        with pytest.raises(
            RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"
        ):
            (torch.sqrt(rx) * 0.0).sum().backward()
    # without anomaly mode the NaN just flows into .grad
    x.grad = None
    (flow.sqrt(x) * 0.0).sum().backward()
    assert np.isnan(x.grad.detach().numpy()[0])
    with flow.autograd.set_detect_anomaly(True):
        assert flow.is_anomaly_enabled()
    assert not flow.is_anomaly_enabled()
    flow.set_anomaly_enabled(True, check_nan=False)
    try:
        x.grad = None
        (flow.sqrt(x) * 0.0).sum().backward()  # check_nan=False: no check
    finally:
        flow.set_anomaly_enabled(False)


# ---- nn ----------------------------------------------------------------------------------------


def _copy_params(ours, ref):
    with torch.no_grad():
        for (n1, p1), (n2, p2) in zip(ours.named_parameters(), ref.named_parameters()):
            assert n1 == n2 and tuple(p1.shape) == tuple(p2.shape), (n1, n2)
            p2.copy_(torch.tensor(p1.detach().numpy()))


def test_adaptive_log_softmax_matches_torch():
    flow.manual_seed(0)
    m = flow.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10], div_value=2.0, head_bias=True).to(
        flow.float64
    )
    rm = torch.nn.AdaptiveLogSoftmaxWithLoss(
        16, 20, [4, 10], div_value=2.0, head_bias=True
    ).double()
    _copy_params(m, rm)
    a = rng.standard_normal((7, 16))
    tgt = [0, 3, 4, 9, 10, 19, 5]
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    o, r = m(x, flow.tensor(tgt)), rm(rx, torch.tensor(tgt))
    close(o.output, r.output)
    close(o.loss, r.loss)
    o.loss.backward(), r.loss.backward()
    close(x.grad, rx.grad)
    for (_, p1), (_, p2) in zip(m.named_parameters(), rm.named_parameters()):
        close(p1.grad, p2.grad)
    close(m.log_prob(T(a)), rm.log_prob(R(a)))
    assert (m.predict(T(a)).detach().numpy() == rm.predict(R(a)).detach().numpy()).all()
    o1 = m(T(a[0]), flow.tensor(3))
    close(o1.output, rm(R(a[0]), torch.tensor(3)).output)
    with pytest.raises(RuntimeError, match="Target values should be in"):
        m(T(a), flow.tensor([0, 1, 2, 3, 4, 5, 20]))
    with pytest.raises(ValueError, match="cutoffs"):
        flow.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [10, 4])


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_matches_torch(nd):
    shape = (2, 3, 9, 11) if nd == 2 else (2, 2, 7, 8, 9)
    a = rng.standard_normal(shape)
    samples = rng.random((shape[0], shape[1], nd))
    k, out = (2, 3, 2)[:nd], (4, 5, 6)[:nd]
    x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
    fo = getattr(F, f"fractional_max_pool{nd}d")
    fr = getattr(TF, f"fractional_max_pool{nd}d")
    o, oi = fo(x, k, output_size=out, return_indices=True, _random_samples=T(samples))
    r, ri = fr(rx, k, output_size=out, return_indices=True, _random_samples=R(samples))
    close(o, r)
    assert (oi.detach().numpy() == ri.detach().numpy()).all()
    (o * o).sum().backward(), (r * r).sum().backward()
    close(x.grad, rx.grad)
    # module, output_ratio, unbatched, float32 samples
    a32 = a.astype(np.float32)
    s32 = samples.astype(np.float32)
    M = getattr(flow.nn, f"FractionalMaxPool{nd}d")(
        k, output_ratio=0.5, _random_samples=T(s32, flow.float32)
    )
    RM = getattr(torch.nn, f"FractionalMaxPool{nd}d")(
        k, output_ratio=0.5, _random_samples=torch.tensor(s32)
    )
    close(M(T(a32, flow.float32)), RM(torch.tensor(a32)))
    close(fo(T(a32[0], flow.float32), k, output_size=out, _random_samples=T(s32[:1], flow.float32)),
          fr(torch.tensor(a32[0]), k, output_size=out, _random_samples=torch.tensor(s32[:1])))  # fmt: skip
    o = fo(T(a32, flow.float32), k, output_size=out)  # random regions
    assert tuple(o.shape) == shape[:2] + out
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        fo(T(a32, flow.float32), k)
    with pytest.raises(RuntimeError, match="too large"):
        fo(T(a32, flow.float32), k, output_size=(20,) * nd)


def test_cross_map_lrn2d_matches_torch():
    for size in (3, 4, 5):
        a = rng.standard_normal((2, 7, 3, 4))
        x, rx = T(a, requires_grad=True), R(a, requires_grad=True)
        m, rm = flow.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2.0), torch.nn.CrossMapLRN2d(
            size, 1e-2, 0.75, 2.0
        )
        close(m(x), rm(rx), rtol=1e-5)
        # torch's legacy backward fails its own gradcheck; ours is the exact derivative
        assert torch.autograd.gradcheck(rm, (rx,), raise_exception=False) is False
        assert flow.autograd.gradcheck(m, (x[:1, :, :2, :2],))
    with pytest.raises(ValueError, match="4-d"):
        flow.nn.CrossMapLRN2d(3)(flow.randn(2, 3, 4))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lazy_instance_norm(nd):
    shape = (2, 4) + (5,) * nd
    a = rng.standard_normal(shape)
    m = getattr(flow.nn, f"LazyInstanceNorm{nd}d")()
    rm = getattr(torch.nn, f"LazyInstanceNorm{nd}d")()
    assert isinstance(m.weight, flow.nn.UninitializedParameter)
    assert isinstance(rm.weight, torch.nn.UninitializedParameter)
    o, r = m(T(a, flow.float32)), rm(R(a, torch.float32))
    assert type(m).__name__ == type(rm).__name__ == f"InstanceNorm{nd}d"
    assert m.num_features == rm.num_features == 4 and m.affine and m.track_running_stats
    close(o, r, rtol=1e-4, atol=1e-5)
    close(m.running_mean, rm.running_mean, rtol=1e-5, atol=1e-6)
    u = getattr(flow.nn, f"LazyInstanceNorm{nd}d")(affine=False, track_running_stats=False)
    ru = getattr(torch.nn, f"LazyInstanceNorm{nd}d")(affine=False, track_running_stats=False)
    close(u(T(a[0], flow.float32)), ru(R(a[0], torch.float32)), rtol=1e-4, atol=1e-5)  # unbatched
    assert u.num_features == 4 and type(u) is getattr(flow.nn, f"InstanceNorm{nd}d")


def test_nllloss2d_container_uninitialized():
    a = rng.standard_normal((2, 3, 4, 4))
    t = rng.integers(0, 3, (2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = flow.nn.NLLLoss2d()(F.log_softmax(T(a), 1), flow.tensor(t))
        r = torch.nn.NLLLoss2d()(TF.log_softmax(R(a), 1), torch.tensor(t))
    close(o, r)
    with pytest.warns(UserWarning, match="deprecated"):
        c = flow.nn.Container(fc=flow.nn.Linear(2, 3))
    assert [n for n, _ in c.named_parameters()] == ["fc.weight", "fc.bias"]
    assert isinstance(flow.nn.UninitializedBuffer(), flow.Tensor)


@pytest.mark.parametrize(
    "variant", ["plain", "bias_kv_zero_attn", "masks", "unbatched", "separate"]
)
def test_multi_head_attention_forward_matches_torch(variant):
    E, H, L, S, N = 8, 2, 3, 4, 2
    p = {k: rng.standard_normal(s) * 0.5 for k, s in [
        ("q", (L, N, E)), ("k", (S, N, E)), ("v", (S, N, E)), ("w", (3 * E, E)), ("b", (3 * E,)),
        ("ow", (E, E)), ("ob", (E,)), ("bk", (1, 1, E)), ("bv", (1, 1, E)),
        ("wq", (E, E)), ("wk", (E, E)), ("wv", (E, E))]}  # fmt: skip
    ours = {k: T(v, requires_grad=True) for k, v in p.items()}
    ref = {k: R(v, requires_grad=True) for k, v in p.items()}
    kw = {}
    if variant == "masks":
        am = np.triu(np.ones((L, S), bool), 2)
        kpm = np.zeros((N, S), bool)
        kpm[1, -1] = True
        kw = dict(attn_mask=am, key_padding_mask=kpm)

    def call(fn, d, conv, unbatched=False, **extra):
        q, k, v = (
            (d["q"], d["k"], d["v"])
            if not unbatched
            else (d["q"][:, 0], d["k"][:, 0], d["v"][:, 0])
        )
        args = dict(
            embed_dim_to_check=E, num_heads=H, in_proj_weight=d["w"], in_proj_bias=d["b"],
            bias_k=d["bk"] if variant == "bias_kv_zero_attn" else None,
            bias_v=d["bv"] if variant == "bias_kv_zero_attn" else None,
            add_zero_attn=variant == "bias_kv_zero_attn", dropout_p=0.0,
            out_proj_weight=d["ow"], out_proj_bias=d["ob"], training=True,
            **{k: conv(v) for k, v in kw.items()},
        )  # fmt: skip
        if variant == "separate":
            args.update(
                use_separate_proj_weight=True,
                q_proj_weight=d["wq"],
                k_proj_weight=d["wk"],
                v_proj_weight=d["wv"],
            )
        args.update(extra)
        return fn(q, k, v, **args)

    for extra in ({}, {"average_attn_weights": False}):
        o, w = call(
            F.multi_head_attention_forward, ours, flow.tensor, variant == "unbatched", **extra
        )
        r, rw = call(
            TF.multi_head_attention_forward, ref, torch.tensor, variant == "unbatched", **extra
        )
        close(o, r, rtol=1e-9, atol=1e-10)
        close(w, rw, rtol=1e-9, atol=1e-10)
    (o.sum() + w.sum()).backward(), (r.sum() + rw.sum()).backward()
    for k in p:
        if ref[k].grad is not None:
            close(ours[k].grad, ref[k].grad, rtol=1e-8, atol=1e-10)
    o2, w2 = call(
        F.multi_head_attention_forward,
        ours,
        flow.tensor,
        variant == "unbatched",
        need_weights=False,
    )
    assert w2 is None
    with pytest.raises(RuntimeError, match="embedding dimension"):
        F.multi_head_attention_forward(
            ours["q"],
            ours["k"],
            ours["v"],
            E + 1,
            H,
            ours["w"],
            ours["b"],
            None,
            None,
            False,
            0.0,
            ours["ow"],
            ours["ob"],
        )


# ---- testing -----------------------------------------------------------------------------------


def test_testing_dtype_lists():
    tt = torch.testing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def names(ds):
            return [str(d).split(".")[-1] for d in ds]

        skip = {"complex64", "complex128"}  # not in this runtime's lists
        for n in ("all_types", "floating_types", "floating_types_and_half", "integral_types",
                  "all_types_and_half", "all_types_and_complex", "floating_and_complex_types",
                  "double_types", "empty_types", "complex_types", "get_all_int_dtypes",
                  "get_all_fp_dtypes", "get_all_dtypes", "get_all_complex_dtypes"):  # fmt: skip
            assert names(getattr(flow.testing, n)()) == [
                d for d in names(getattr(tt, n)()) if d not in skip
            ], n
        assert names(flow.testing.floating_types_and(flow.bfloat16)) == names(
            tt.floating_types_and(torch.bfloat16)
        )
        assert names(flow.testing.all_types_and(flow.bool)) == [
            d for d in names(tt.all_types_and(torch.bool)) if d not in skip
        ]
        assert names(flow.testing.get_all_dtypes(include_bool=False, include_half=False)) == [
            d
            for d in names(tt.get_all_dtypes(include_bool=False, include_half=False))
            if d not in skip
        ]
        assert names(flow.testing.get_all_math_dtypes("cpu")) == [
            d for d in names(tt.get_all_math_dtypes("cpu")) if d not in skip
        ]
        assert flow.testing.get_all_device_types() == tt.get_all_device_types() == ["cpu"]


def test_assert_allclose_and_make_non_contiguous():
    with pytest.warns(FutureWarning):
        flow.testing.assert_allclose(flow.tensor([1.0, float("nan")]), [1.0, float("nan")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(AssertionError):
            flow.testing.assert_allclose(flow.tensor([1.0, 2.0]), [1.0, 2.1])
        flow.testing.assert_allclose(flow.tensor([1.0, 2.0]), [1.0, 2.1], rtol=0.1, atol=0)
    x = flow.randn(3, 4)
    y = flow.testing.make_non_contiguous(x)
    assert not y.is_contiguous() and (y == x).all()
    assert not torch.testing.make_non_contiguous(torch.randn(3, 4)).is_contiguous()
    assert flow.testing.make_non_contiguous(flow.randn(1)).is_contiguous()


# ---- cuda without a device ---------------------------------------------------------------------


def test_cuda_without_device():
    c = flow.cuda
    assert c.is_available() is torch.cuda.is_available() is False
    assert c.device_count() == torch.cuda.device_count() == 0
    assert c.memory_allocated() == c.max_memory_allocated() == c.memory_reserved() == 0
    assert c.max_memory_reserved() == 0 and c.memory_stats() == {} and c.is_initialized() is False
    assert c.is_bf16_supported() is False and c.get_arch_list() == []
    c.empty_cache(), c.synchronize(), c.reset_max_memory_allocated()
    assert "no CUDA device" in c.memory_summary()
    for call in (c.current_device, lambda: c.set_device(0), c.get_device_name, c.get_device_capability,
                 lambda: c.get_device_properties(0), c.mem_get_info, c.Stream, c.Event,
                 c.current_stream, c.default_stream, c.init):  # fmt: skip
        with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
            call()
    with c.stream(None):
        pass
    assert isinstance(flow.randn(2), flow.FloatTensor) and not isinstance(
        flow.randn(2), c.FloatTensor
    )


# ---- mock_torch resolves the new names ---------------------------------------------------------


def test_mock_torch_resolves_new_names():
    from oneflow_like import mock_torch

    with mock_torch.enable():
        import torch as mt
        import torch.autograd as mta
        import torch.nn as mnn

        assert mt.FloatTensor is flow.FloatTensor and mt.channels_last is flow.channels_last
        assert mta.gradcheck is flow.autograd.gradcheck and mta.Variable is flow.autograd.Variable
        assert mnn.AdaptiveLogSoftmaxWithLoss is flow.nn.AdaptiveLogSoftmaxWithLoss
        assert mt.testing.make_non_contiguous is flow.testing.make_non_contiguous
        assert mt.cuda.Event is flow.cuda.Event and mt.has_cuda in (True, False)
        assert mnn.functional.multi_head_attention_forward is F.multi_head_attention_forward


def test_cuda_memory_names_without_a_device():
    c = flow.cuda
    if c.is_available():
        pytest.skip("these are the no-device answers")
    assert c.max_memory_reserved() == c.memory_cached() == c.max_memory_cached() == 0
    assert c.memory_stats_as_nested_dict() == {} and c.is_current_stream_capturing() is False
    c.reset_max_memory_cached()
    with c.device_of(flow.ones(2)):  # a CPU tensor: no device change
        pass
    assert issubclass(c.CudaError, RuntimeError) and c.OutOfMemoryError is flow.OutOfMemoryError
