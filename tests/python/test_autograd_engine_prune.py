"""The engine runs (and frees) only the nodes autograd.grad / backward(inputs=) need, as torch;
torch's errors and their types; Tensor.numpy() on a tensor that requires grad; views made in
no_grad mode of a tensor that requires grad. Compared with torch 1.13 (float64 both)."""
import numpy as np
import pytest
import torch

import oneflow_like as flow

X = np.array([0.3, -1.2, 0.8, 2.0])
W = np.array([1.5, -0.5, 0.25, 2.0])


def _leaf(m, v=X):
    return m.tensor(v, dtype=m.float64, requires_grad=True)


def _np(t):
    return None if t is None else t.detach().numpy()


# ---- pruning: grad w.r.t. a non-leaf leaves the graph below it intact -------------------------


def _grad_nonleaf_then_backward(m):
    x = _leaf(m)
    h = x.exp() * 2  # the part below h: MulBackward0 <- ExpBackward0 <- x
    out = (h * h).sin().sum()
    (gh,) = m.autograd.grad(out, h)  # runs SinBackward0 / MulBackward0 / SumBackward0 only
    loss = (h * 3).sum()  # a new graph on h: backward runs through h's (unfreed) history
    loss.backward()
    return _np(gh), _np(x.grad)


def test_grad_wrt_non_leaf_then_backward_through_the_part_below():
    for a, b in zip(_grad_nonleaf_then_backward(flow), _grad_nonleaf_then_backward(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _second_time(m):
    x = _leaf(m)
    h = x.exp()
    out = (h * h).sum()
    m.autograd.grad(out, h)
    out.backward()  # the nodes above h ran and were freed


def test_backward_through_nodes_grad_freed_raises_torch_runtime_error():
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _second_time(torch)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _second_time(flow)


def test_double_backward_is_a_runtime_error():
    x = _leaf(flow)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"\[\w+\] Trying to backward through the graph a"):
        y.backward()
    z = (x.sin() * 2).sum()
    flow.autograd.grad(z, x)
    with pytest.raises(RuntimeError, match="second time"):
        flow.autograd.grad(z, x)


def _grad_twice_retained(m):
    x, w = _leaf(m), _leaf(m, W)
    h = x * w
    out = (h.tanh() * w).sum()
    (gx,) = m.autograd.grad(out, x, retain_graph=True)
    (gw,) = m.autograd.grad(out, w, retain_graph=True)
    (gh,) = m.autograd.grad(out, h)
    out2 = (h**2).sum()
    out2.backward()
    return _np(gx), _np(gw), _np(gh), _np(x.grad), _np(w.grad)


def test_grad_with_retain_graph_and_later_backward_match_torch():
    for a, b in zip(_grad_twice_retained(flow), _grad_twice_retained(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _create_graph(m):
    x = _leaf(m)
    h = x.sin()
    y = (h**3).sum()
    (gh,) = m.autograd.grad(y, h, create_graph=True)  # 3 h^2, a function of x through h
    (gx,) = m.autograd.grad(gh.sum(), x, create_graph=True)  # 6 h cos(x)
    (ggx,) = m.autograd.grad(gx.sum(), x, retain_graph=True)
    y2 = (h * 2).sum()  # h's history (SinBackward0) still intact
    y2.backward()
    return _np(gh), _np(gx), _np(ggx), _np(x.grad)


def test_create_graph_through_a_non_leaf_matches_torch():
    for a, b in zip(_create_graph(flow), _create_graph(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_allow_unused_and_materialize_grads():
    x, unused = _leaf(flow), _leaf(flow, W)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        flow.autograd.grad(y, [x, unused], retain_graph=True)
    gx, gu = flow.autograd.grad(y, [x, unused], retain_graph=True, allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(gx.numpy(), 2 * X)
    gx, gu = flow.autograd.grad(y, [x, unused], retain_graph=True, materialize_grads=True)
    np.testing.assert_array_equal(gu.numpy(), np.zeros(4))
    assert gu.dtype == flow.float64
    with pytest.raises(ValueError, match="allow_unused"):
        flow.autograd.grad(y, [x, unused], allow_unused=False, materialize_grads=True)
    # torch 1.13 has no materialize_grads: its allow_unused answer, with zeros for None
    tx, tu = _leaf(torch), _leaf(torch, W)
    tgx, tgu = torch.autograd.grad((tx * tx).sum(), [tx, tu], allow_unused=True)
    assert tgu is None
    np.testing.assert_allclose(gx.numpy(), tgx.numpy())


def test_grad_of_input_that_does_not_require_grad_is_torch_runtime_error():
    x = _leaf(flow)
    c = flow.tensor(X)
    y = (x * c).sum()
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require"):
        flow.autograd.grad(y, c)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        flow.autograd.grad(c.sum(), x)


def test_is_grads_batched_matches_per_row_vjps():
    x = _leaf(flow)
    y = x.exp() * 2
    eye = flow.eye(4, dtype=flow.float64)
    (jac,) = flow.autograd.grad(y, x, grad_outputs=eye, is_grads_batched=True)
    tx = _leaf(torch)
    (tjac,) = torch.autograd.grad(
        torch.exp(tx) * 2, tx, torch.eye(4, dtype=torch.float64), is_grads_batched=True
    )
    np.testing.assert_allclose(jac.numpy(), tjac.numpy(), rtol=1e-12)


def _backward_inputs(m):
    x, w = _leaf(m), _leaf(m, W)
    h = x * w
    loss = (h.sin() * w).sum()
    loss.backward(inputs=[w], retain_graph=True)  # only w accumulates
    assert x.grad is None
    loss.backward(inputs=[h, x])  # a non-leaf input gets .grad too
    return _np(w.grad), _np(h.grad), _np(x.grad)


def test_backward_inputs_matches_torch():
    for a, b in zip(_backward_inputs(flow), _backward_inputs(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_backward_inputs_runs_only_the_needed_nodes():
    x, w = _leaf(flow), _leaf(flow, W)
    h = x.exp()
    loss = (h * w).sum()
    loss.backward(inputs=[w])  # ExpBackward0 (below h, not on the way to w) does not run
    h.sum().backward()  # so h's history is still there
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X))
    np.testing.assert_allclose(w.grad.numpy(), np.exp(X))
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        flow.autograd.backward((x * 2).sum(), inputs=[])


def test_grad_runs_the_hooks_of_the_nodes_it_needs_only():
    x = _leaf(flow)
    seen = []
    h = x.exp()
    h.grad_fn.register_prehook(lambda g: seen.append("exp_pre"))
    h.register_hook(lambda g: seen.append("h_tensor_hook"))
    y = (h * 2).sum()
    flow.autograd.grad(y, h)
    # h's grad_fn does not run; its tensor hook does, as torch 2.x documents ("Backward Hooks
    # execution": the hook of a Tensor passed as grad()'s inputs always runs; 1.13 skipped it)
    assert seen == ["h_tensor_hook"]


# ---- numpy() -----------------------------------------------------------------------------------


def test_numpy_of_tensor_requiring_grad_raises_torch_runtime_error():
    for m in (flow, torch):
        x = _leaf(m)
        with pytest.raises(
            RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"
        ):
            x.numpy()
        with pytest.raises(RuntimeError, match="requires grad"):
            (x * 2).numpy()
        with m.no_grad():  # torch checks grad mode too
            np.testing.assert_array_equal(x.numpy(), X)
        np.testing.assert_array_equal(x.detach().numpy(), X)
        if m is flow:  # torch 2.x's numpy(*, force=False); 1.13 has no force
            np.testing.assert_array_equal(x.numpy(force=True), X)
        with pytest.raises(RuntimeError, match="requires grad"):
            np.asarray(x)
        assert x.tolist() == X.tolist() and x[1].item() == X[1]  # these still work, as torch


# ---- views made in no_grad mode ------------------------------------------------------------------


def _no_grad_view_flags(m):
    x = _leaf(m, np.arange(12.0).reshape(3, 4))
    y = x * 2
    with m.no_grad():
        views = [x[0], x.view(12), x.t(), x.reshape(12), x.expand(2, 3, 4), x[1:][0], y[1]]
        d = x.detach()
        dv = d[0]
        copy = x.clone()  # not a view
    out = [(v.requires_grad, v.is_leaf, v.grad_fn is None) for v in views]
    out += [(t.requires_grad, t.is_leaf, t.grad_fn is None) for t in (d, dv, copy)]
    out.append(tuple(v.detach().requires_grad for v in views[:2]))
    return out


def test_no_grad_view_of_tensor_requiring_grad_matches_torch_flags():
    assert _no_grad_view_flags(flow) == _no_grad_view_flags(torch)


def _no_grad_view_use(m):
    x = _leaf(m, np.arange(12.0).reshape(3, 4))
    with m.no_grad():
        v = x[0]
    r = v * 2  # recorded, but the gradient reaches neither v nor x
    assert r.requires_grad and r.grad_fn is not None
    r.sum().backward()
    assert v.grad is None and x.grad is None
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        v.mul_(2)
    with pytest.raises(RuntimeError, match="detach views in-place"):
        v.detach_()
    with m.no_grad():
        v.mul_(2)  # fine without grad
    return x.detach().numpy()


def test_no_grad_view_use_matches_torch():
    np.testing.assert_array_equal(_no_grad_view_use(flow), _no_grad_view_use(torch))


def test_detach_in_place_of_any_view_is_refused_as_torch():
    x = flow.randn(3, 4)
    for m in (flow, torch):
        x = m.randn(3, 4)
        with pytest.raises(RuntimeError, match="detach views in-place"):
            x[0].detach_()
    assert flow.randn(3).detach_() is not None
