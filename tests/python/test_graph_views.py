"""In-place writes through views inside nn.Graph (oneflow_like/lazy/trace.h, "Views"): a write to
a view reaches its base, a view taken before a write to its base sees the write, partial in-place
ops (index_put_, masked_fill_) keep the untouched elements; each case against eager mode."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import FnGraph


def setitem(x):
    x[0:2, 1] = 7.0
    return x * 1


def fill_slice(x):
    x[1:3].fill_(2.0)
    return x + 0


def view_before_root_write(x):
    v = x[0]  # taken before the write: eager views share storage, so v sees it
    x.add_(1.0)
    return v * 3


def view_of_view(x):
    x.t()[1:3].zero_()
    return x * 1


def write_then_read_other_view(x):
    a, b = x[:, 0:2], x[:, 1:3]  # overlapping views
    a.mul_(10.0)
    return b + 0, x * 1


def intermediate(x):
    y = x * 2
    y[:, 0] = 0.0
    return y


def index_put_accumulate(x):
    x.index_put_((flow.tensor([0, 2, 0]),), flow.ones(3, 5), accumulate=True)
    return x * 1


def index_put(x):
    x.index_put_((flow.tensor([1, 2]),), flow.full((2, 5), 4.0))
    return x * 1


def scatter_(x):
    x.scatter_(1, flow.tensor([[4, 0], [1, 1], [3, 2], [0, 4]]), flow.full((4, 2), 8.0))
    return x * 1


def scatter_add_(x):
    x.scatter_add_(0, flow.tensor([[0, 3, 3, 1, 2]]), flow.ones(1, 5))
    return x * 1


def masked_fill_view(x):
    x[1:].masked_fill_(x[1:] > 0, 0.5)
    return x * 1


def write_through_view_op(x):
    v = x.view(20)
    v[3] = 9.0
    return x * 1


def write_through_reshape(x):
    x.reshape(5, 4)[1].zero_()
    return x * 1


def strided_view(x):
    x[::2, ::2].fill_(1.0)
    return x * 1


def transposed_copy_into(x):
    x.T[0].copy_(flow.arange(4).float())
    return x * 1


def contiguous_copy_is_not_a_view(x):
    y = x.t().contiguous()  # a copy in eager: writing it leaves x alone
    y.add_(1.0)
    return x * 1, y * 1


CASES = [
    write_through_view_op,
    write_through_reshape,
    strided_view,
    transposed_copy_into,
    contiguous_copy_is_not_a_view,
    setitem,
    fill_slice,
    view_before_root_write,
    view_of_view,
    write_then_read_other_view,
    intermediate,
    index_put_accumulate,
    index_put,
    scatter_,
    scatter_add_,
    masked_fill_view,
]


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_graph_matches_eager(fn):
    x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    eager = fn(flow.tensor(x))
    graph = FnGraph(fn)(flow.tensor(x))
    eager = eager if isinstance(eager, tuple) else (eager,)
    graph = graph if isinstance(graph, tuple) else (graph,)
    for e, g in zip(eager, graph):
        np.testing.assert_array_equal(g.numpy(), e.numpy())


def test_write_through_view_of_captured_buffer():
    class M(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", flow.zeros(3, 4))

        def forward(self, x):
            self.b[1].fill_(5.0)
            self.b[:, 0].add_(x)
            return self.b.sum()

    m = M()
    g = FnGraph(lambda x: m(x))
    out = g(flow.ones(3))
    want = np.zeros((3, 4), np.float32)
    want[1] = 5.0
    want[:, 0] += 1.0
    np.testing.assert_array_equal(m.b.numpy(), want)  # the write reached the module's buffer
    assert out.item() == want.sum()


def test_inplace_on_view_that_requires_grad_is_an_error():
    w = flow.randn(3, 4, requires_grad=True)

    def fn(x):
        y = w * x
        y[0].zero_()
        return y.sum()

    with pytest.raises(Exception, match="view that requires grad"):
        FnGraph(fn)(flow.ones(3, 4))


def test_stale_view_of_non_contiguous_capture_is_an_error():
    # A view of a captured tensor that is not contiguous from offset 0 cannot be re-read from it:
    # reading it after the tensor was written raises instead of returning the old values.
    base = flow.zeros(4, 3).t()  # non-contiguous eager tensor, captured by reference

    def fn(x):
        v = base[0]
        base.add_(x)
        return v * 1

    with pytest.raises(Exception, match="non-contiguous captured tensor"):
        FnGraph(fn)(flow.ones(3, 4))


def test_view_of_non_contiguous_capture_read_before_any_write_is_fine():
    base = flow.arange(12).float().reshape(4, 3).t()

    def fn(x):
        return base[1] + x

    np.testing.assert_array_equal(FnGraph(fn)(flow.ones(4)).numpy(), base[1].numpy() + 1)
