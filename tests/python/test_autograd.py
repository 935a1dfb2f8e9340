"""Autograd semantics: leaves, accumulation, retain_graph, create_graph, hooks, no_grad,
autograd.grad, user-defined Functions, in-place checks."""
import numpy as np
import pytest

import oneflow_like as flow


def t(values, rg=False, dtype=flow.float64):
    return flow.tensor(values, dtype=dtype, requires_grad=rg)


def test_leaf_accumulates_and_zeroing():
    x = t([1.0, 2.0], True)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6, 6])
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 4])
    assert x.is_leaf and not (x * 2).is_leaf


def test_second_backward_needs_retain_graph():
    x = t([1.0, 2.0], True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4, 8])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_double_backward():
    x = t([2.0], True)
    y = x * x * x
    (g,) = flow.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [12.0])
    (g2,) = flow.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), [12.0])
    assert x.grad is None


def test_no_grad_and_detach():
    x = t([1.0], True)
    with flow.no_grad():
        y = x * 2
    assert not y.requires_grad
    z = (x * 2).detach()
    assert not z.requires_grad and z.is_leaf

    @flow.no_grad()
    def f(a):
        return a * 2

    assert not f(x).requires_grad
    assert flow.is_grad_enabled()


def test_hooks_and_retain_grad():
    x = t([1.0, 2.0], True)
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [10, 10])
    np.testing.assert_allclose(x.grad.numpy(), [20, 20])
    np.testing.assert_allclose(seen[0], [20, 20])


def test_grad_of_nonscalar_requires_gradient():
    x = t([1.0, 2.0], True)
    with pytest.raises(RuntimeError, match="scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(flow.tensor([1.0, 0.5], dtype=flow.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2, 1])


def test_inplace_checks():
    x = t([1.0, 2.0], True)
    with pytest.raises(ValueError, match="leaf"):
        x.add_(1)
    y = x * 2
    z = y * y
    y.add_(1)
    with pytest.raises(ValueError, match="in-place"):
        z.sum().backward()
    w = x * 2
    w.mul_(3)  # fine: mul_scalar saves nothing
    w.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6, 6])


def test_requires_grad_only_for_floats():
    with pytest.raises(TypeError):
        flow.tensor([1, 2], requires_grad=True)


class Cube(flow.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * x * (3 * ctx.k), None


def test_custom_function():
    x = t([1.0, 2.0], True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6, 24])


class StopGrad(flow.autograd.Function):
    """Passes its first input through with no gradient for it; scales the second."""

    @staticmethod
    def forward(ctx, a, b):
        return a * 1.0, b * 3.0

    @staticmethod
    def backward(ctx, ga, gb):
        return None, gb * 3.0


def test_custom_function_returning_none_for_an_interior_input():
    # The None reaches interior nodes (mul, exp) whose only gradient it is: they pass nothing on,
    # as in PyTorch; the leaf behind them gets no gradient and the other path is unaffected.
    x = t([1.0, 2.0], True)
    w = t([0.5, 4.0], True)
    a, b = StopGrad.apply((x * 2).exp(), w * 1.0)
    (a * 5 + b).sum().backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 3.0])
    # Same through flow.autograd.grad: the interior path's input gets no gradient.
    x2 = t([1.0], True)
    (g,) = flow.autograd.grad(StopGrad.apply(x2 * 2, x2 * 1)[0].sum() + (x2 * 0).sum(), [x2])
    np.testing.assert_allclose(g.numpy(), [0.0])


def test_broadcast_gradients_reduce_to_input_shape():
    a = t(np.ones((3, 1)), True)
    b = t(np.ones((4,)), True)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full((4,), 3.0))


def test_unused_input_in_grad():
    x = t([1.0], True)
    y = t([1.0], True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        flow.autograd.grad((x * 2).sum(), [x, y])
    gx, gy = flow.autograd.grad((x * 2).sum(), [x, y], allow_unused=True)
    assert gy is None


def test_inference_mode_and_bare_decorators():
    x = flow.ones(2, requires_grad=True)
    with flow.inference_mode():
        assert not (x * 2).requires_grad and flow.is_inference_mode_enabled()
    assert (x * 2).requires_grad and not flow.is_inference_mode_enabled()
    with flow.inference_mode(False):
        assert (x * 2).requires_grad

    @flow.inference_mode()
    def f(a):
        return a * 2

    @flow.no_grad
    def g(a):
        return a * 2

    assert not f(x).requires_grad and not g(x).requires_grad and (x * 2).requires_grad
