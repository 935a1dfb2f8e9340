"""Pooling in nn.Graph (oneflow_like/lazy/lowering/pool.cc): with ONEFLOW_LIKE_LOWER_POOLS=1,
max/avg pooling over non-overlapping windows (stride == kernel, no padding) lowers to HLO loops
that must give eager's results bit for bit, ties (relu zeros) and NaN included; other windows, and
every pool by default (the kernels are faster on the CPU backend), stay kernel calls."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import check_lazy, train_losses

F = flow.nn.functional
MAX_OPS = ("max_pool2d", "max_pool2d_grad")
AVG_OPS = ("avg_pool2d", "avg_pool2d_grad")


@pytest.fixture
def lowered(monkeypatch):
    monkeypatch.setenv("ONEFLOW_LIKE_LOWER_POOLS", "1")


class _Graph(flow.nn.Graph):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def build(self, x, up):
        x.requires_grad_()
        y = self.fn(x)
        (gx,) = flow.autograd.grad((y * up).sum(), [x])
        return y, gx


def _eager_and_graph(fn, x, up):
    xe = flow.tensor(x, requires_grad=True)
    ye = fn(xe)
    ye.backward(flow.tensor(up))
    g = _Graph(fn)
    yl, gl = g(flow.tensor(x), flow.tensor(up))
    return (
        (ye.detach().numpy(), xe.grad.detach().numpy()),
        (yl.detach().numpy(), gl.detach().numpy()),
        g.stats()["kernel_call_ops"],
    )


def _inputs(kind, shape, rs):
    if kind == "random":
        return rs.randn(*shape).astype(np.float32)
    if (
        kind == "ties"
    ):  # relu of small integers: most windows hold several equal maxima, many all zeros,
        x = np.maximum(rs.randint(-3, 3, size=shape), 0).astype(np.float32)  # some of them -0 (the
        x[(x == 0) & (rs.rand(*shape) < 0.5)] = -0.0  # kernel keeps the first of +0 / -0)
        return x
    x = rs.randint(0, 3, size=shape).astype(
        np.float32
    )  # "nan": ties plus NaNs (the first NaN wins)
    x[rs.rand(*shape) < 0.05] = np.nan
    return x


@pytest.mark.parametrize(
    "pool,ops", [(F.max_pool2d, MAX_OPS), (F.avg_pool2d, AVG_OPS)], ids=["max", "avg"]
)
@pytest.mark.parametrize("k", [2, 3, (2, 3), (1, 2)])
@pytest.mark.parametrize(
    "shape", [(2, 3, 8, 12), (2, 2, 11, 9), (3, 4, 26, 26)]
)  # 11 x 9: rows/cols dropped
@pytest.mark.parametrize("kind", ["random", "ties", "nan"])
def test_pool_graph_is_eager_bit_for_bit(lowered, pool, ops, k, shape, kind):
    rs = np.random.RandomState(sum(shape) + (k if isinstance(k, int) else 10 * k[0] + k[1]))
    x = _inputs(kind, shape, rs)
    fn = lambda a: pool(a, k)
    ys = tuple(fn(flow.tensor(x)).shape)
    up = rs.randn(*ys).astype(np.float32)
    if kind != "random":
        up = np.round(up * 2) / 2  # equal upstream values too: a wrong tap would still show
    (ye, ge), (yl, gl), calls = _eager_and_graph(fn, x, up)
    assert not set(calls) & set(ops), calls
    np.testing.assert_array_equal(yl, ye)  # NaN == NaN here
    if pool is F.max_pool2d:  # the kernel's value itself, sign of zero included
        np.testing.assert_array_equal(np.signbit(yl), np.signbit(ye))
    np.testing.assert_array_equal(gl, ge)


def test_max_pool_ties_route_the_gradient_to_the_first_maximum(lowered):
    # One window of four equal values, one with the maximum last, one with two NaNs.
    x = np.array(
        [[[[1, 1, 0, 2], [1, 1, 0, 0], [np.nan, 5, 0, 0], [0, np.nan, 0, 0]]]], dtype=np.float32
    )
    up = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    (ye, ge), (yl, gl), calls = _eager_and_graph(lambda a: F.max_pool2d(a, 2), x, up)
    assert not set(calls) & set(MAX_OPS), calls
    np.testing.assert_array_equal(ge, [[[[1, 0, 0, 2], [0, 0, 0, 0], [3, 0, 4, 0], [0, 0, 0, 0]]]])
    np.testing.assert_array_equal(gl, ge)
    np.testing.assert_array_equal(yl, ye)


def test_max_pool_indices_match_eager(lowered):
    rs = np.random.RandomState(7)
    x = np.maximum(rs.randint(-2, 2, size=(2, 3, 9, 10)), 0).astype(np.float32)

    class G(flow.nn.Graph):
        def build(self, a):
            return flow.max_pool2d(a, 3, return_indices=True)

    g = G()
    yl, il = g(flow.tensor(x))
    ye, ie = flow.max_pool2d(flow.tensor(x), 3, return_indices=True)
    assert "max_pool2d" not in g.stats()["kernel_call_ops"]
    np.testing.assert_array_equal(il.detach().numpy(), ie.detach().numpy())
    np.testing.assert_array_equal(yl.detach().numpy(), ye.detach().numpy())


def test_pool_lowering_float64_with_check_lazy(lowered):
    x = np.random.RandomState(3).uniform(-1, 1, size=(2, 3, 8, 6))
    check_lazy(lambda a: F.max_pool2d(a, 2), [x], grad_inputs=[0], lowered_ops=MAX_OPS)
    check_lazy(lambda a: F.avg_pool2d(a, (2, 3)), [x], grad_inputs=[0], lowered_ops=AVG_OPS)
    check_lazy(
        lambda a: F.avg_pool2d(a, 2, divisor_override=3), [x], grad_inputs=[0], lowered_ops=AVG_OPS
    )


@pytest.mark.parametrize(
    "pool,args",
    [
        (F.max_pool2d, dict(kernel_size=3, stride=2)),  # overlapping windows
        (F.max_pool2d, dict(kernel_size=2, padding=1)),  # padded
        (F.max_pool2d, dict(kernel_size=2, dilation=2, stride=2)),  # dilated
        (F.max_pool2d, dict(kernel_size=2, ceil_mode=True)),  # a partial last window (7 / 2)
        (F.avg_pool2d, dict(kernel_size=2, padding=1, count_include_pad=False)),
    ],
    ids=["overlap", "pad", "dilation", "ceil", "avg_pad"],
)
def test_other_windows_stay_kernel_calls_and_agree(lowered, pool, args):
    rs = np.random.RandomState(11)
    x = rs.randn(2, 3, 7, 8).astype(np.float32)
    fn = lambda a: pool(a, **args)
    up = rs.randn(*tuple(fn(flow.tensor(x)).shape)).astype(np.float32)
    (ye, ge), (yl, gl), calls = _eager_and_graph(fn, x, up)
    name = pool.__name__ if pool.__name__ in ("max_pool2d", "avg_pool2d") else None
    assert name is None or name in calls, calls
    np.testing.assert_array_equal(yl, ye)
    np.testing.assert_array_equal(gl, ge)


def test_pools_are_kernel_calls_by_default(monkeypatch):
    monkeypatch.delenv("ONEFLOW_LIKE_LOWER_POOLS", raising=False)
    x = np.random.RandomState(1).randn(2, 3, 8, 8).astype(np.float32)
    _, _, calls = _eager_and_graph(
        lambda a: F.max_pool2d(a, 2), x, np.ones((2, 3, 4, 4), np.float32)
    )
    assert set(MAX_OPS) <= set(calls), calls


def _cnn_steps(use_graph, steps=4):
    """The benchmark's CNN (conv-relu-maxpool x2 + linear) at a smaller batch, SGD momentum."""
    nn = flow.nn
    flow.manual_seed(5)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 10),
    )
    opt = flow.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rs = np.random.RandomState(2)
    x = flow.tensor(rs.randn(16, 1, 28, 28).astype(np.float32))
    y = flow.tensor(rs.randint(0, 10, size=(16,)).astype(np.int64))
    return train_losses(lambda x, y: F.cross_entropy(model(x), y), opt, x, y, steps, use_graph)


def test_cnn_training_step_pools_as_hlo(lowered):
    le, _ = _cnn_steps(False)
    lg, g = _cnn_steps(True)
    calls = g.stats()["kernel_call_ops"]
    assert not set(MAX_OPS) & set(calls), calls
    assert "ofl.kernel.max_pool2d" not in g.compiled.hlo_before
    np.testing.assert_allclose(lg, le, rtol=1e-5, atol=1e-6)
    assert le[-1] < le[0]
