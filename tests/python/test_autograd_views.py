"""In-place ops on views that require grad (torch's rebase_history / CopySlices), ops that save
only the inputs a needed gradient reads, and torch's autograd node names.

Every view kind x in-place op kind: the gradients of the leaves upstream (through the base and
through the op's other operand) equal torch 1.13's and float64 finite differences'. torch's
refusals raise torch's messages; saved tensors modified in place still raise in backward."""
import numpy as np
import pytest
import torch

import oneflow_like as flow
import oneflow_like.nn as nn
import oneflow_like.nn.functional as F

rng = np.random.default_rng(0)
A = rng.uniform(0.5, 1.5, (4, 6))

# view kinds: base [4, 6] -> a view (any module m: flow or torch)
VIEWS = {
    "select": lambda b: b[1],
    "slice": lambda b: b[:, 1:4],
    "step_slice": lambda b: b[::2],
    "narrow": lambda b: b.narrow(1, 2, 3),
    "view": lambda b: b.view(24),
    "reshape": lambda b: b.reshape(2, 12),
    "transpose": lambda b: b.t(),
    "permute_slice": lambda b: b.permute(1, 0)[2:],
    "unsqueeze": lambda b: b.unsqueeze(0),
    "view_of_view": lambda b: b[1:][1],
    "as_strided": lambda b: b.as_strided((2, 2), (6, 1), 7),
}
# in-place kinds: (view, w) -> None; w requires grad and broadcasts against any view
INPLACE = {
    "add_scalar": lambda v, w: v.add_(1.5),
    "iadd_tensor": lambda v, w: v.__iadd__(w),
    "mul_tensor": lambda v, w: v.mul_(w),
    "div_tensor": lambda v, w: v.div_(w),
    "exp_": lambda v, w: v.exp_(),
    "sigmoid_": lambda v, w: v.sigmoid_(),
    "copy_": lambda v, w: v.copy_(w.expand(v.shape) * 2),
    "zero_": lambda v, w: v.zero_(),
    "clamp_": lambda v, w: v.clamp_(0.9, 1.2),
}


def _scenario(m, view, op, a, w, c):
    """base = a * c (non-leaf); v = view(base); op(v); loss reads the base, the view and another
    view taken before the in-place op."""
    base = a * c
    other = base[3]  # a view of the same base made before the change
    v = view(base)
    op(v, w)
    return (base * c).sum() + (v * v).sum() + (other * 3).sum()


def _grads(m, view, op, a_np, w_np, c_np):
    a = m.tensor(a_np, dtype=m.float64, requires_grad=True)
    w = m.tensor(w_np, dtype=m.float64, requires_grad=True)
    c = m.tensor(c_np, dtype=m.float64)
    _scenario(m, view, op, a, w, c).backward()
    return a.grad.numpy(), (w.grad.numpy() if w.grad is not None else np.zeros_like(w_np))


@pytest.mark.parametrize("op", sorted(INPLACE))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_inplace_on_view_matches_torch(view, op):
    w_np = rng.uniform(0.5, 1.5, (1,))
    c_np = rng.uniform(0.5, 1.5, (4, 6))
    got = _grads(flow, VIEWS[view], INPLACE[op], A, w_np, c_np)
    ref = _grads(torch, VIEWS[view], INPLACE[op], A, w_np, c_np)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", ["mul_tensor", "exp_", "copy_", "add_scalar"])
@pytest.mark.parametrize("view", ["select", "transpose", "view_of_view", "step_slice"])
def test_inplace_on_view_matches_finite_differences(view, op):
    c = flow.tensor(rng.uniform(0.5, 1.5, (4, 6)), dtype=flow.float64)

    def f(a, w):
        return _scenario(flow, VIEWS[view], INPLACE[op], a, w, c)

    a = flow.tensor(A, dtype=flow.float64, requires_grad=True)
    w = flow.tensor([0.8], dtype=flow.float64, requires_grad=True)
    assert flow.autograd.gradcheck(f, (a, w), eps=1e-6, atol=1e-6)


def test_grad_fns_after_inplace_on_view_are_torchs():
    a = flow.ones(3, 4, dtype=flow.float64, requires_grad=True)
    b = a * 2
    v = b[1]
    assert v.grad_fn.name() == "SelectBackward0"
    v.mul_(3)
    assert b.grad_fn.name() == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is b.grad_fn
    names = [fn.name() for fn, _ in b.grad_fn.next_functions]
    assert names == ["MulBackward0", "MulBackward0"]
    assert b._version == 1 and v._version == 1


def test_base_without_grad_takes_history_from_the_view():
    # h = zeros(); h[t] = x: the ordinary "fill a buffer" pattern
    for m in (flow, torch):
        x = m.tensor(A[:2], dtype=m.float64, requires_grad=True)
        h = m.zeros(5, 6, dtype=m.float64)
        h[1:3] = x * 2
        h[4].copy_(x[0] * x[1])
        assert h.requires_grad and not h.is_leaf
        (h * h).sum().backward()
        if m is flow:
            got = x.grad.numpy()
        else:
            np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-12)


def test_other_views_regenerate_their_history():
    def run(m):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        b = a * 2.0
        v1, v2 = b[0], b[:, 2]  # v2 overlaps v1 at b[0, 2]
        v1.mul_(a[1])
        assert v2.requires_grad
        (v2 * v2).sum().backward()
        return a.grad.numpy()

    np.testing.assert_allclose(run(flow), run(torch), rtol=1e-12)


def test_inplace_on_base_moves_views():
    def run(m):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        b = a * 1.0
        v = b[2:]
        b.mul_(a)  # the base changes: the view's history follows
        (v * 3).sum().backward()
        return a.grad.numpy()

    np.testing.assert_allclose(run(flow), run(torch), rtol=1e-12)


def test_double_backward_through_copyslices():
    def run(m):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        b = a * a
        b[1].mul_(a[2])
        (g,) = m.autograd.grad(b.sum(), a, create_graph=True)
        (g * g).sum().backward()
        return a.grad.numpy()

    np.testing.assert_allclose(run(flow), run(torch), rtol=1e-10)


# ---- torch's refusals ---------------------------------------------------------------------------


def test_view_of_a_leaf_is_refused():
    a = flow.ones(3, 4, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being used in an in-place operation",
    ):
        a[0].add_(1)
    with flow.no_grad():
        a[0].add_(1)  # no grad: allowed, as torch
    np.testing.assert_allclose(a.detach().numpy()[0], 2.0)


def test_view_made_in_no_grad_is_refused():
    a = flow.ones(3, 4, requires_grad=True)
    b = a * 2
    with flow.no_grad():
        v = b[0]
    with pytest.raises(
        RuntimeError,
        match="A view was created in no_grad mode and is being modified inplace with grad mode "
        "enabled. Given that this use case is ambiguous and error-prone, it is forbidden",
    ):
        v.mul_(2)
    with flow.no_grad():
        v.mul_(2)  # both inside no_grad: fine


@pytest.mark.parametrize(
    "make, fn",
    [
        (lambda b: b.unbind(0), "UnbindBackward0"),
        (lambda b: b.split(2, 1), "SplitBackward0"),
        (lambda b: b.split([1, 3], 1), "SplitWithSizesBackward0"),
        (lambda b: b.chunk(2, 1), "SplitBackward0"),
    ],
)
def test_multi_output_views_are_refused(make, fn):
    b = flow.ones(3, 4, requires_grad=True) * 2
    outs = make(b)
    msg = (
        f"Output 1 of {fn} is a view and is being modified inplace. This view is the output of a "
        "function that returns multiple views. Such functions do not allow the output views to be "
        "modified inplace. You should replace the inplace operation by an out-of-place one."
    )
    with pytest.raises(RuntimeError, match=msg):
        outs[1].add_(1)
    tb = torch.ones(3, 4, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=msg):
        make(tb)[1].add_(1)


def test_saved_view_modified_later_still_raises():
    for m in (flow, torch):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        w = m.tensor(A[0], dtype=m.float64, requires_grad=True)
        b = a * 2
        v = b[1]
        s = v * w  # saves v (for dw)
        v.add_(1)
        with pytest.raises(
            (RuntimeError, ValueError),
            match="one of the variables needed for gradient computation has been modified by an "
            "inplace operation",
        ):
            s.sum().backward()


def test_version_numbers_in_the_error():
    a = flow.tensor(A, dtype=flow.float64, requires_grad=True)
    y = a.sigmoid()  # saves its output
    y.mul_(2)
    y.add_(1)
    with pytest.raises(ValueError, match=r"SigmoidBackward0.*is at version 2; expected version 0"):
        y.sum().backward()


# ---- saved inputs: only what a needed gradient reads --------------------------------------------


@pytest.mark.parametrize("op", ["mul_", "div_"])
def test_inplace_with_a_no_grad_other_saves_no_old_value(op):
    def run(m, other_grad):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        w = m.tensor(A[0] + 0.5, dtype=m.float64, requires_grad=other_grad)
        y = a * 2
        getattr(y, op)(w)
        (y * y).sum().backward()
        return a.grad.numpy()

    np.testing.assert_allclose(run(flow, False), run(torch, False), rtol=1e-12)
    # both require grad: the gradient reads y's old value, which the op keeps as a copy made
    # before it overwrote y (torch's original_self), so backward works as torch's does
    np.testing.assert_allclose(run(flow, True), run(torch, True), rtol=1e-12)


def test_in_place_target_old_value_is_copied_only_when_read():
    for m in (flow, torch):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        w = m.tensor(A[0], dtype=m.float64, requires_grad=True)
        y = a * 2
        y.mul_(w)  # saves a copy of y's old value for d/dw
        v0 = y._version
        y.add_(1)  # changes y, not the copy
        assert y._version == v0 + 1
        s = y * w  # saves y at its current version
        y.mul_(2)
        with pytest.raises((RuntimeError, ValueError), match="modified by an inplace operation"):
            s.sum().backward()


def test_out_of_place_ops_skip_inputs_no_gradient_reads():
    # where(cond, x, y), addcmul, matmul with a frozen side: the other side may change in place
    for m in (flow, torch):
        x = m.tensor(A, dtype=m.float64, requires_grad=True)
        frozen = m.tensor(A.T.copy(), dtype=m.float64)
        h = x * 1.0
        out = h @ frozen  # d/dh reads frozen only; h is not saved
        h.add_(1)
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.ones((4, 4)) @ A, rtol=1e-12)
        z = m.tensor(A, dtype=m.float64, requires_grad=True)
        t1 = m.tensor(A, dtype=m.float64)
        t2 = m.tensor(A, dtype=m.float64)
        r = m.addcmul(z, t1, t2)
        t1.add_(1)  # read only by d/dt2, which is not needed
        t2.add_(1)
        r.sum().backward()
        np.testing.assert_allclose(z.grad.numpy(), np.ones((4, 6)))


# ---- models: LSTM out += 1, einsum/unfold/pixel_shuffle outputs, the ResNet block ---------------


def test_lstm_output_modified_in_place():
    flow.manual_seed(0)
    lstm = nn.LSTM(5, 7, batch_first=True).to(flow.float64)
    x = flow.tensor(rng.standard_normal((2, 3, 5)), dtype=flow.float64, requires_grad=True)
    out, (h, c) = lstm(x)
    out += 1
    (out * out).sum().backward()
    g_inplace = x.grad.numpy().copy()
    w_inplace = lstm.weight_ih_l0.grad.numpy().copy()
    x.grad = None
    lstm.zero_grad()
    out, (h, c) = lstm(x)
    ((out + 1) * (out + 1)).sum().backward()
    np.testing.assert_allclose(g_inplace, x.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(w_inplace, lstm.weight_ih_l0.grad.numpy(), rtol=1e-10)


MAKERS = {
    "einsum": lambda m, x: m.einsum("ij,kj->ik", x, x),
    "unfold": lambda m, x: m.nn.functional.unfold(x.reshape(1, 1, 4, 6), (2, 2)),
    "pixel_shuffle": lambda m, x: m.nn.functional.pixel_shuffle(x.reshape(1, 4, 2, 3), 2),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_inplace_on_op_outputs_that_are_views(kind):
    def run(m):
        x = m.tensor(A, dtype=m.float64, requires_grad=True)
        y = MAKERS[kind](m, x)
        y.mul_(2)
        y += 1
        (y * y).sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(flow), run(torch), rtol=1e-10)


def test_resnet_block_in_place_residual():
    def block(m, x, conv, bn, down):
        out = bn(conv(x))
        identity = down(x).flatten(1).view(out.shape)  # a view
        out += identity
        return out.relu_()

    flow.manual_seed(0)
    torch.manual_seed(0)
    xs = rng.standard_normal((2, 3, 6, 6))
    grads = []
    for m in (flow, torch):
        conv = m.nn.Conv2d(3, 4, 3, padding=1).double()
        bn = m.nn.BatchNorm2d(4).double()
        down = m.nn.Conv2d(3, 4, 1).double()
        with m.no_grad():
            for p, q in zip(
                [conv.weight, conv.bias, down.weight, down.bias],
                [
                    np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape))
                    for p in (conv.weight, conv.bias, down.weight, down.bias)
                ],
            ):
                p.copy_(m.tensor(q, dtype=m.float64))
        x = m.tensor(xs, dtype=m.float64, requires_grad=True)
        y = block(m, x, conv, bn, down)
        y.sum().backward()
        grads.append((x.grad.numpy(), conv.weight.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-8, atol=1e-10)


# ---- torch's node names -------------------------------------------------------------------------

NAMED = {
    "mul": lambda m, a, b: a * b,
    "mul_scalar": lambda m, a, b: a * 2,
    "add": lambda m, a, b: a + b,
    "add_scalar": lambda m, a, b: a + 1,
    "sub": lambda m, a, b: a - b,
    "div": lambda m, a, b: a / b,
    "rsub": lambda m, a, b: 1 - a,
    "pow_scalar": lambda m, a, b: a**2,
    "pow": lambda m, a, b: a**b,
    "mm": lambda m, a, b: a @ b.t(),
    "bmm": lambda m, a, b: a.unsqueeze(0).bmm(b.t().unsqueeze(0)),
    "addmm": lambda m, a, b: m.addmm(a[:, :4], a, b.t()),
    "linear": lambda m, a, b: m.nn.functional.linear(a, b, b[:, 0]),
    "relu": lambda m, a, b: m.relu(a),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "tanh": lambda m, a, b: a.tanh(),
    "exp": lambda m, a, b: a.exp(),
    "neg": lambda m, a, b: -a,
    "view": lambda m, a, b: a.view(24),
    "t": lambda m, a, b: a.t(),
    "transpose": lambda m, a, b: a.unsqueeze(0).transpose(0, 2),
    "permute": lambda m, a, b: a.unsqueeze(0).permute(2, 0, 1),
    "select": lambda m, a, b: a[1],
    "slice": lambda m, a, b: a[:, 1:],
    "unsqueeze": lambda m, a, b: a.unsqueeze(0),
    "expand": lambda m, a, b: a.unsqueeze(0).expand(2, 4, 6),
    "sum": lambda m, a, b: a.sum(),
    "sum_dim": lambda m, a, b: a.sum(1),
    "cat": lambda m, a, b: m.cat([a, b]),
    "layer_norm": lambda m, a, b: m.nn.functional.layer_norm(a, (6,)),
    "softmax": lambda m, a, b: a.softmax(1),
    "log_softmax": lambda m, a, b: a.log_softmax(1),
    "where": lambda m, a, b: m.where(a > 1, a, b),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "clone": lambda m, a, b: a.clone(),
    "to": lambda m, a, b: a.to(m.float32),
    "index_select": lambda m, a, b: a.index_select(0, m.tensor([0, 2])),
    "gather": lambda m, a, b: a.gather(1, m.tensor([[0], [1], [2], [3]])),
    "cumsum": lambda m, a, b: a.cumsum(1),
}


@pytest.mark.parametrize("case", sorted(NAMED))
def test_grad_fn_names_are_torchs(case):
    names = []
    for m in (flow, torch):
        a = m.tensor(A, dtype=m.float64, requires_grad=True)
        b = m.tensor(A[::-1].copy(), dtype=m.float64, requires_grad=True)
        fn = NAMED[case](m, a, b).grad_fn
        names.append(fn.name())
        if m is flow:
            assert repr(fn).startswith(f"<{fn.name()} object at 0x")
    assert names[0] == names[1]


def test_node_api_keeps_working_on_named_nodes():
    a = flow.ones(2, 3, requires_grad=True)
    y = a * 3
    fn = y.grad_fn
    assert isinstance(fn, flow.autograd.graph.Node)
    assert fn is y.grad_fn and fn == y.grad_fn
    fn.metadata["k"] = 1
    assert y.grad_fn.metadata["k"] == 1
    assert fn.next_functions[0][0].name() == "AccumulateGrad"
    seen = []
    h1 = fn.register_prehook(lambda g: seen.append("pre"))
    h2 = fn.register_hook(lambda gi, go: seen.append("post"))
    y.sum().backward()
    assert seen == ["pre", "post"]
    h1.remove()
    h2.remove()
    assert f"grad_fn=<{fn.name()}>" in repr(y)
