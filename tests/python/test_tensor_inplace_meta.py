"""In-place metadata methods (t_, transpose_, squeeze_, unsqueeze_, as_strided_, detach_,
resize_, resize_as_, set_), the .data setter and retains_grad, against torch 1.13."""
import numpy as np
import pytest
import torch

import oneflow_like as flow


def pair(shape=(2, 3), requires_grad=False, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (
        flow.tensor(a, dtype=flow.float64, requires_grad=requires_grad),
        torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad),
    )


def same(f, t):
    assert tuple(f.shape) == tuple(t.shape)
    np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "name,args,shape",
    [
        ("t_", (), (2, 3)),
        ("transpose_", (0, 2), (2, 3, 4)),
        ("swapaxes_", (1, 0), (2, 3)),
        ("swapdims_", (-1, 0), (2, 3)),
        ("squeeze_", (), (2, 1, 3, 1)),
        ("squeeze_", (1,), (2, 1, 3)),
        ("unsqueeze_", (1,), (2, 3)),
        ("unsqueeze_", (-1,), (2, 3)),
        ("as_strided_", ((2, 2), (1, 2), 1), (6,)),
    ],
)
def test_view_methods_change_the_tensor_in_place(name, args, shape):
    f, t = pair(shape)
    fid = id(f)
    r = getattr(f, name)(*args)
    getattr(t, name)(*args)
    assert r is f and id(f) == fid
    same(f, t)
    assert f.stride() == t.stride()


@pytest.mark.parametrize("name,args", [("t_", ()), ("unsqueeze_", (0,)), ("transpose_", (0, 1))])
def test_view_methods_on_non_leaves_record_the_gradient(name, args):
    wf, wt = pair((3, 4), requires_grad=True, seed=1)
    zf, zt = wf * 2, wt * 2
    getattr(zf, name)(*args)
    getattr(zt, name)(*args)
    assert not zf.is_leaf and zf.grad_fn is not None
    gf, gt = pair(tuple(zt.shape), seed=2)
    (zf * gf).sum().backward()
    (zt * gt).sum().backward()
    same(wf.grad, wt.grad)


def test_leaf_requiring_grad_refuses_in_place_view_unless_no_grad():
    w = flow.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[t_\] a leaf Variable that requires grad"):
        w.t_()
    with flow.no_grad():
        w.t_()
    assert tuple(w.shape) == (3, 2) and w.is_leaf and w.requires_grad


def test_view_method_bumps_the_version_so_saved_tensors_raise():
    w = flow.ones(2, 3, requires_grad=True)
    z = w * 1
    q = z * z  # saves z
    z.t_()
    with pytest.raises(Exception, match="in-place|inplace"):
        q.sum().backward()


def test_detach_in_place():
    w = flow.ones(2, 3, requires_grad=True)
    z = w * 2
    r = z.detach_()
    assert r is z and z.is_leaf and not z.requires_grad and z.grad_fn is None
    v = (w * 2)[0]
    with pytest.raises(RuntimeError, match=r"\[detach_\] cannot detach a view in place"):
        v.detach_()


@pytest.mark.parametrize(
    "first,second", [((2, 2), None), ((3, 3), None), ((2,), (6,)), ((6,), None), ((2, 3), None)]
)
def test_resize_matches_torch_where_torch_defines_the_values(first, second):
    f, t = flow.arange(6.0), torch.arange(6.0)
    f.resize_(*first)
    t.resize_(*first)
    assert tuple(f.shape) == tuple(t.shape)
    n = min(6, int(np.prod(first)))
    np.testing.assert_array_equal(f.numpy().reshape(-1)[:n], t.numpy().reshape(-1)[:n])
    if second is not None:
        f.resize_(second)
        t.resize_(second)
        # torch keeps the storage (6 elements): the first 6 come back after a shrink and regrow
        np.testing.assert_array_equal(f.numpy(), t.numpy())


def test_resize_keeps_a_non_contiguous_tensor_of_the_same_size_and_resize_as():
    f = flow.arange(6.0).view(2, 3).t()
    t = torch.arange(6.0).view(2, 3).t()
    f.resize_(3, 2)
    t.resize_(3, 2)
    same(f, t)
    assert f.stride() == t.stride()
    g, u = flow.zeros(5), torch.zeros(5)
    g.resize_as_(flow.ones(2, 2))
    u.resize_as_(torch.ones(2, 2))
    assert tuple(g.shape) == tuple(u.shape) == (2, 2)
    w = flow.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[resize_\] cannot resize variables that require"):
        w.resize_(4)
    with pytest.raises(RuntimeError, match=r"\[resize_\] sizes must be non-negative"):
        flow.ones(3).resize_(-1)


def test_set_shares_the_source_storage():
    c, d = flow.zeros(4), flow.arange(6.0)
    c.set_(d)
    assert tuple(c.shape) == (6,) and c.data_ptr() == d.data_ptr()
    ct, dt = torch.zeros(4), torch.arange(6.0)
    ct.set_(dt, 2, (2, 2), (1, 2))
    c.set_(d, 2, (2, 2), (1, 2))
    same(c, ct)
    d.add_(10.0)  # c views d's storage
    np.testing.assert_array_equal(c.numpy(), (dt + 10).as_strided((2, 2), (1, 2), 2).numpy())
    e = flow.ones(3)
    e.set_()
    assert tuple(e.shape) == (0,)
    with pytest.raises(RuntimeError, match=r"\[set_\] expected a source of dtype"):
        flow.zeros(2).set_(flow.arange(3))


def test_data_setter_rebinds_without_copy_and_keeps_the_parameter():
    lin = flow.nn.Linear(3, 2)
    w = lin.weight
    new = flow.zeros(4, 3)
    w.data = new
    assert lin.weight is w and tuple(w.shape) == (4, 3) and w.is_leaf and w.requires_grad
    assert w.data_ptr() == new.data_ptr()
    y = (w * flow.ones(4, 3)).sum()
    y.backward()
    assert tuple(w.grad.shape) == (4, 3)
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((4, 3), np.float32))
    # the classic manual SGD step
    p = flow.ones(3, requires_grad=True)
    (p * 2).sum().backward()
    p.data = p.data - 0.5 * p.grad
    np.testing.assert_array_equal(p.detach().numpy(), np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"\[data\] data set to a tensor that requires gradients"):
        p.data = flow.ones(3, dtype=flow.int64)
    q = flow.ones(2)
    q.data = flow.arange(3)
    assert q.dtype == flow.int64 and tuple(q.shape) == (3,)


def test_retains_grad():
    w = flow.ones(2, requires_grad=True)
    z = w * 2
    assert not z.retains_grad and not w.retains_grad
    z.retain_grad()
    assert z.retains_grad
    wt = torch.ones(2, requires_grad=True)
    zt = wt * 2
    zt.retain_grad()
    assert zt.retains_grad and not wt.retains_grad


def test_graph_refuses_a_parameter_rebound_to_another_shape():
    lin = flow.nn.Linear(3, 2)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = lin

        def build(self, x):
            return self.m(x)

    g, x = G(), flow.ones(1, 3)
    np.testing.assert_allclose(g(x).detach().numpy(), lin(x).detach().numpy(), rtol=1e-6)
    lin.weight.data = flow.zeros(2, 3)  # same shape: the graph reads the new storage
    np.testing.assert_allclose(g(x).detach().numpy(), lin(x).detach().numpy(), rtol=1e-6)
    lin.weight.data = flow.zeros(4, 3)
    with pytest.raises(ValueError, match=r"is now f32\[4,3\] on cpu, .* when it was f32\[2,3\]"):
        g(x)


@pytest.mark.parametrize(
    "copy",
    [
        lambda y: y.clone(),
        lambda y: y.t().contiguous(),
        lambda y: y.double(),
        lambda y: y.to(y.dtype, copy=True),
    ],
)
def test_copies_save_nothing_so_their_source_may_change_in_place(copy):
    """clone/contiguous/casts keep only their input's dtype and device for backward (copy.def's
    `save: none`), so writing the source in place before backward is fine, as in torch."""
    grads = []
    for lib in (flow, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 2
        y2 = copy(y)
        y.add_(1.0)
        (y2 * y2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
