"""With ONEFLOW_LIKE_LOWER_NORMS=1, batch_norm, group_norm (oneflow_like/lazy/lowering/norm.cc) and
their gradients lower to HLO in nn.Graph and give eager's results (the lowerings follow the kernels op for op: float64 to 1e-9,
float32 to 1e-6, in practice bit for bit); a BatchNorm2d CNN trained as a graph ends with eager's
losses and running stats. embedding stays a kernel call (see lowering/nn_misc.cc): the graph must
still accumulate repeated indices, skip padding_idx and raise on a bad index. By default
batch_norm lowers and group_norm stays a kernel call (its HLO loops are slower than the kernel);
ONEFLOW_LIKE_LOWER_NORMS=0 keeps both as kernel calls."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import check_lazy, check_op, rand, train_losses

F = flow.nn.functional
nn = flow.nn
BN_OPS = ("batch_norm", "batch_norm_grad")
GN_OPS = ("group_norm", "group_norm_grad")
DTYPES = [(flow.float64, 1e-9), (flow.float32, 1e-6)]


@pytest.fixture
def lowered(monkeypatch):
    monkeypatch.setenv("ONEFLOW_LIKE_LOWER_NORMS", "1")


@pytest.mark.parametrize("dtype,tol", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("shape", [(6, 3), (3, 4, 5, 2), (2, 5, 7)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_lowers(lowered, dtype, tol, shape, affine):
    c = shape[1]
    x, w, b = rand(shape, -2, 3), rand((c,), 0.5, 1.5), rand((c,))
    if affine:
        check_lazy(
            lambda a, ww, bb: F.batch_norm(a, None, None, ww, bb, training=True),
            [x, w, b],
            grad_inputs=(0, 1, 2),
            lowered_ops=BN_OPS,
            dtype=dtype,
            tol=tol,
        )
    else:
        check_lazy(
            lambda a: F.batch_norm(a, None, None, training=True),
            [x],
            grad_inputs=(0,),
            lowered_ops=BN_OPS,
            dtype=dtype,
            tol=tol,
        )


@pytest.mark.parametrize("dtype,tol", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 4, 3, 2)])
def test_batch_norm_eval_lowers(lowered, dtype, tol, shape):
    c = shape[1]
    x, w, b = rand(shape, -2, 3), rand((c,), 0.5, 1.5), rand((c,))
    rm, rv = rand((c,)), rand((c,), 0.5, 2)

    def fn(a, ww, bb):
        return F.batch_norm(
            a,
            flow.tensor(rm, dtype=a.dtype),
            flow.tensor(rv, dtype=a.dtype),
            ww,
            bb,
            training=False,
            eps=1e-3,
        )

    check_lazy(fn, [x, w, b], grad_inputs=(0, 1, 2), lowered_ops=BN_OPS, dtype=dtype, tol=tol)
    check_lazy(
        lambda a: F.batch_norm(a, flow.tensor(rm, dtype=a.dtype), flow.tensor(rv, dtype=a.dtype)),
        [x],
        grad_inputs=(0,),
        lowered_ops=BN_OPS,
        dtype=dtype,
        tol=tol,
    )


class _BnGraph(nn.Graph):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def build(self, x):
        return self.m(x)


@pytest.mark.parametrize("shape", [(8, 3, 2, 2), (10, 4)])
def test_batch_norm_module_running_stats_in_graph(lowered, shape):
    # The running stats are updated by in-place ops after batch_norm (momentum blend with the
    # unbiased batch variance): the graph's buffers must end up equal to eager's, up to the last
    # bit of the blend rm * 0.9 + mean * 0.1, which the graph runs as one fused loop (eager as two
    # in-place kernels, rounding in between: already so for the blend alone, without batch_norm).
    x = flow.tensor(rand(shape, -2, 3), dtype=flow.float32)
    mods = [
        nn.BatchNorm2d(shape[1]) if len(shape) == 4 else nn.BatchNorm1d(shape[1]) for _ in range(2)
    ]
    mods[1].load_state_dict(mods[0].state_dict())
    ye = [mods[0](x) for _ in range(3)]
    g = _BnGraph(mods[1])
    yl = [g(x) for _ in range(3)]
    assert not set(BN_OPS) & set(g.stats()["kernel_call_ops"]), g.stats()["kernel_call_ops"]
    for e, l in zip(ye, yl):
        np.testing.assert_array_equal(l.detach().numpy(), e.detach().numpy())
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            getattr(mods[1], name).detach().numpy(),
            getattr(mods[0], name).detach().numpy(),
            rtol=3e-7,
            atol=1e-8,
            err_msg=name,
        )
    axes = tuple(i for i in range(len(shape)) if i != 1)
    xn = x.detach().numpy().astype(np.float64)
    rv = np.ones(shape[1])
    for _ in range(3):
        rv = 0.9 * rv + 0.1 * xn.var(axes, ddof=1)
    np.testing.assert_allclose(mods[1].running_var.detach().numpy(), rv, rtol=1e-5)


@pytest.mark.parametrize("dtype,tol", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize(
    "shape,groups",
    [((2, 6, 5), 1), ((2, 6, 5), 2), ((2, 6, 3, 2), 3), ((3, 6, 4), 6), ((3, 4), 2), ((3, 4), 1)],
)
def test_group_norm_lowers(lowered, dtype, tol, shape, groups):
    c = shape[1]
    x, w, b = rand(shape, -2, 3), rand((c,), 0.5, 1.5), rand((c,))
    check_lazy(
        lambda a, ww, bb: F.group_norm(a, groups, ww, bb),
        [x, w, b],
        grad_inputs=(0, 1, 2),
        lowered_ops=GN_OPS,
        dtype=dtype,
        tol=tol,
    )
    check_lazy(
        lambda a, ww: F.group_norm(a, groups, ww),
        [x, w],
        grad_inputs=(0, 1),
        lowered_ops=GN_OPS,
        dtype=dtype,
        tol=tol,
    )
    check_lazy(
        lambda a: F.group_norm(a, groups),
        [x],
        grad_inputs=(0,),
        lowered_ops=GN_OPS,
        dtype=dtype,
        tol=tol,
    )


def test_norms_against_numpy_through_check_op(lowered):
    x = rand((4, 6, 3))

    def np_bn(a):
        return (a - a.mean((0, 2), keepdims=True)) / np.sqrt(a.var((0, 2), keepdims=True) + 1e-5)

    def np_gn(a):
        g = a.reshape(4, 3, -1)
        return ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
            a.shape
        )

    check_op(lambda a: F.batch_norm(a, None, None, training=True), np_bn, [x], lowered_ops=BN_OPS)
    check_op(lambda a: F.group_norm(a, 3), np_gn, [x], lowered_ops=GN_OPS)


def _cnn_steps(use_graph, steps=5):
    flow.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 10),
    )
    opt = flow.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rs = np.random.RandomState(3)
    x = flow.tensor(rs.randn(32, 1, 8, 8).astype(np.float32))
    y = flow.tensor(rs.randint(0, 10, size=(32,)).astype(np.int64))
    losses, g = train_losses(lambda x, y: F.cross_entropy(model(x), y), opt, x, y, steps, use_graph)
    return losses, g, model


def test_cnn_with_batch_norm_trains_as_graph_like_eager(lowered):
    le, _, me = _cnn_steps(False)
    lg, g, mg = _cnn_steps(True)
    calls = g.stats()["kernel_call_ops"]
    assert not set(BN_OPS) & set(calls), calls
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)
    assert le[-1] < le[0]
    se, sg = me.state_dict(), mg.state_dict()
    for k in se:
        if "running" in k:
            np.testing.assert_allclose(
                sg[k].detach().numpy(), se[k].detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=k
            )
            assert not np.allclose(
                se[k].detach().numpy(), 0.0 if "mean" in k else 1.0
            ), k  # the stats moved


def test_defaults_batch_norm_lowers_group_norm_stays_a_kernel_call(monkeypatch):
    monkeypatch.delenv("ONEFLOW_LIKE_LOWER_NORMS", raising=False)
    le, _, _ = _cnn_steps(False, steps=2)
    lg, g, _ = _cnn_steps(True, steps=2)
    assert not set(BN_OPS) & set(g.stats()["kernel_call_ops"]), g.stats()["kernel_call_ops"]
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)
    x, w, b = rand((2, 6, 5)), rand((6,), 0.5, 1.5), rand((6,))
    with pytest.raises(AssertionError, match="kernel calls"):
        check_lazy(
            lambda a, ww, bb: F.group_norm(a, 3, ww, bb),
            [x, w, b],
            grad_inputs=(0,),
            lowered_ops=GN_OPS,
        )


def test_flag_zero_keeps_both_norms_kernel_calls(monkeypatch):
    monkeypatch.setenv("ONEFLOW_LIKE_LOWER_NORMS", "0")
    le, _, _ = _cnn_steps(False, steps=2)
    lg, g, _ = _cnn_steps(True, steps=2)
    assert set(BN_OPS) <= set(g.stats()["kernel_call_ops"]), g.stats()["kernel_call_ops"]
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [flow.float64, flow.float32])
def test_embedding_in_graph_accumulates_repeats_and_skips_padding(dtype):
    idx = np.array([[1, 3, 0, 3], [3, 3, 2, 1]], dtype=np.int64)
    w = rand((5, 4))
    check_lazy(lambda ww, ii: F.embedding(ii, ww), [w, idx], grad_inputs=(0,), dtype=dtype)
    check_lazy(
        lambda ww, ii: F.embedding(ii, ww, padding_idx=3), [w, idx], grad_inputs=(0,), dtype=dtype
    )

    class G(nn.Graph):
        def build(self, ww, ii, up):
            ww.requires_grad_()
            (gw,) = flow.autograd.grad((F.embedding(ii, ww, padding_idx=3) * up).sum(), [ww])
            return gw

    up = rand((2, 4, 4))
    gw = (
        G()(flow.tensor(w, dtype=dtype), flow.tensor(idx), flow.tensor(up, dtype=dtype))
        .detach()
        .numpy()
    )
    ref = np.zeros((5, 4))
    for i, r in enumerate(idx.reshape(-1)):
        if r != 3:
            ref[r] += up.reshape(-1, 4)[i]
    np.testing.assert_allclose(gw, ref, rtol=1e-6, atol=1e-6)
    assert not gw[3].any()


def test_embedding_bad_index_still_raises_in_graph():
    # HLO gather clamps an out-of-range index; the kernel call keeps the kernel's error.
    class G(nn.Graph):
        def build(self, ww, ii):
            return F.embedding(ii, ww)

    with pytest.raises(Exception, match=r"\[embedding\] index 12 out of range for 10 rows"):
        G()(flow.zeros(10, 3), flow.tensor([1, 12])).detach().numpy()
