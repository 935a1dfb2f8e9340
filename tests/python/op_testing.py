"""The op test helper: checks an op forward and backward against a float64 NumPy reference on
fresh random inputs, plus a numerical gradient check in float64.

    check_op(flow.relu, np_relu, shapes=[(3, 4)])

`np_fn` computes the reference in float64 NumPy. The backward check compares the op's gradient
(for a random upstream gradient) with central finite differences of the float64 op itself.
"""
import os

import numpy as np

import oneflow_like as flow

RNG = np.random.default_rng()
# The device the forward and backward checks run the op on (the float64 references and the
# numerical gradients stay on the host): OFL_TEST_DEVICE=cuda runs the op table on the GPU
# (tools/gpu/run.sh). The eager == lazy checks compile for the CPU.
DEVICE = os.environ.get("OFL_TEST_DEVICE", "cpu")


def rand(shape, low=-1.0, high=1.0, dtype=np.float64):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def to_np(t):
    return (
        t.detach().numpy().astype(np.float64) if t.dtype.is_floating_point else t.detach().numpy()
    )


def check_forward(fn, np_fn, arrays, atol=1e-5, rtol=1e-4, dtype=flow.float32, **kw):
    ins = [flow.tensor(a, dtype=dtype, device=DEVICE) for a in arrays]
    out = fn(*ins, **kw)
    ref = np_fn(*[a.astype(np.float64) for a in arrays], **kw)
    outs = out if isinstance(out, (tuple, list)) else [out]
    refs = ref if isinstance(ref, (tuple, list)) else [ref]
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(to_np(o), np.asarray(r), atol=atol, rtol=rtol)
    return out


def numerical_grad(fn, arrays, index, upstream, eps=1e-6, **kw):
    """d(sum(fn(...) * upstream))/d arrays[index] by central differences, in float64."""
    base = [flow.tensor(a, dtype=flow.float64) for a in arrays]
    x = arrays[index].astype(np.float64).copy()
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        vals = []
        for delta in (eps, -eps):
            flat[i] = orig + delta
            ins = list(base)
            ins[index] = flow.tensor(x, dtype=flow.float64)
            out = fn(*ins, **kw)
            out = out[0] if isinstance(out, (tuple, list)) else out
            vals.append(float(np.sum(out.detach().numpy() * upstream)))
        flat[i] = orig
        grad.reshape(-1)[i] = (vals[0] - vals[1]) / (2 * eps)
    return grad


def check_backward(fn, arrays, grad_inputs=None, atol=1e-5, rtol=1e-4, **kw):
    """Analytic float64 gradient vs numerical differences for each input in `grad_inputs`."""
    grad_inputs = list(range(len(arrays))) if grad_inputs is None else grad_inputs
    ins = [flow.tensor(a, dtype=flow.float64, device=DEVICE) for a in arrays]
    for i in grad_inputs:
        ins[i].requires_grad = True
    out = fn(*ins, **kw)
    out = out[0] if isinstance(out, (tuple, list)) else out
    upstream = RNG.uniform(-1, 1, size=tuple(out.shape))
    out.backward(flow.tensor(upstream, dtype=flow.float64, device=DEVICE))
    for i in grad_inputs:
        assert ins[i].grad is not None, f"input {i} got no gradient"
        num = numerical_grad(fn, arrays, i, upstream, **kw)
        np.testing.assert_allclose(
            ins[i].grad.detach().numpy(),
            num,
            atol=atol,
            rtol=rtol,
            err_msg=f"gradient of input {i}",
        )


class FnGraph(flow.nn.Graph):
    """A graph whose build() is fn(*inputs)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def build(self, *args):
        return self.fn(*args)


class _FnGraph(flow.nn.Graph):
    def __init__(self, fn, grad_inputs, kw):
        super().__init__()
        self.fn, self.grad_inputs, self.kw = fn, grad_inputs, kw

    def build(self, upstream, *xs):
        xs = [x.requires_grad_() if i in self.grad_inputs else x for i, x in enumerate(xs)]
        out = self.fn(*xs, **self.kw)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        grads = ()
        if self.grad_inputs:
            grads = flow.autograd.grad(
                (outs[0] * upstream).sum(), [xs[i] for i in self.grad_inputs], allow_unused=True
            )
        return outs, tuple(grads)


def check_lazy(fn, arrays, grad_inputs=(), lowered_ops=(), dtype=flow.float64, tol=1e-9, **kw):
    """eager == lazy: the same computation compiled as an nn.Graph (forward, and the gradients of
    `grad_inputs` for a random upstream gradient) gives the eager results, in `dtype` (float64 by
    default) to rtol = atol = `tol`. The ops in `lowered_ops` must have been lowered to HLO (not
    run as kernel calls). Integer arrays keep their dtype."""
    ins = [
        flow.tensor(a, dtype=dtype if np.issubdtype(a.dtype, np.floating) else None) for a in arrays
    ]
    for i in grad_inputs:
        ins[i].requires_grad = True
    out = fn(*ins, **kw)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    up = (
        flow.tensor(RNG.uniform(-1, 1, size=tuple(outs[0].shape)), dtype=outs[0].dtype)
        if outs[0].dtype.is_floating_point
        else flow.zeros(1, dtype=flow.float64)
    )
    eager_grads = ()
    if grad_inputs:
        eager_grads = flow.autograd.grad(
            (outs[0] * up).sum(), [ins[i] for i in grad_inputs], allow_unused=True
        )
    g = _FnGraph(fn, tuple(grad_inputs), kw)
    lazy_outs, lazy_grads = g(up, *[t.detach() for t in ins])
    called = set(g.stats()["kernel_call_ops"])
    assert not called & set(
        lowered_ops
    ), f"kernel calls {sorted(called)} include ops that should lower to HLO"
    for e, l in zip(outs, lazy_outs):
        assert tuple(e.shape) == tuple(l.shape) and e.dtype == l.dtype, (
            e.shape,
            l.shape,
            e.dtype,
            l.dtype,
        )
        np.testing.assert_allclose(to_np(l), to_np(e), rtol=tol, atol=tol, err_msg="lazy forward")
    for e, l in zip(eager_grads, lazy_grads):
        if e is None:
            assert l is None
            continue
        np.testing.assert_allclose(
            l.detach().numpy(), e.detach().numpy(), rtol=tol, atol=tol, err_msg="lazy gradient"
        )


def check_op(
    fn,
    np_fn,
    arrays,
    grad_inputs=None,
    atol=1e-5,
    rtol=1e-4,
    backward=True,
    lazy=True,
    lowered_ops=(),
    **kw,
):
    check_forward(fn, np_fn, arrays, atol=atol, rtol=rtol, **kw)
    check_forward(fn, np_fn, arrays, atol=1e-10, rtol=1e-10, dtype=flow.float64, **kw)
    if backward:
        check_backward(fn, arrays, grad_inputs=grad_inputs, **kw)
    if lazy:
        gi = (
            (list(range(len(arrays))) if grad_inputs is None else list(grad_inputs))
            if backward
            else []
        )
        check_lazy(fn, arrays, grad_inputs=gi, lowered_ops=lowered_ops, **kw)


class TrainGraph(flow.nn.Graph):
    """One training step: loss_fn(x, y), backward, the optimizer's update."""

    def __init__(self, loss_fn, opt):
        super().__init__()
        self.loss_fn = loss_fn
        self.add_optimizer(opt)

    def build(self, x, y):
        loss = self.loss_fn(x, y)
        loss.backward()
        return loss


def train_losses(loss_fn, opt, x, y, steps, use_graph):
    """`steps` training steps (loss_fn(x, y), backward, opt.step()), eager or as one nn.Graph;
    returns (the losses, the graph or None)."""
    if use_graph:
        g = TrainGraph(loss_fn, opt)
        return [g(x, y).item() for _ in range(steps)], g
    losses = []
    for _ in range(steps):
        loss = loss_fn(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, None


# ---- PyTorch as the reference (python3-torch), for layers NumPy has no reference for ----


def same_as_torch(fn_flow, fn_torch, *arrays, tol=1e-10):
    """fn on float64 tensors in both libraries: outputs and the input gradients (for a random
    upstream gradient) agree to `tol`. Returns our input tensors."""
    import torch

    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    fs = [flow.tensor(a, requires_grad=True) for a in arrays]
    ot, of = fn_torch(*ts), fn_flow(*fs)
    assert tuple(of.shape) == tuple(ot.shape), (of.shape, ot.shape)
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=tol, atol=tol)
    up = RNG.uniform(-1, 1, size=tuple(ot.shape))
    (ot * torch.tensor(up)).sum().backward()
    (of * flow.tensor(up)).sum().backward()
    for t, f in zip(ts, fs):
        np.testing.assert_allclose(
            f.grad.detach().numpy(), t.grad.detach().numpy(), rtol=tol, atol=tol
        )
    return fs


def copy_torch_weights(torch_module, module):
    """Loads a torch module's state_dict into ours (same names)."""
    module.load_state_dict(
        {k: flow.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()}
    )
