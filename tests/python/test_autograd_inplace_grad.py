"""In-place ops whose target does not require grad but whose other input does (torch: the
target starts requiring grad and records the op, `torch.zeros_like(h).index_add_(0, idx, src)`),
as a table over every in-place op taking a differentiable second input; and the same ops on a
target that requires grad itself. Gradients equal torch 1.13's (both run in float64)."""
import numpy as np
import pytest
import torch

import oneflow_like as flow

rng = np.random.default_rng(7)
T = rng.uniform(0.5, 1.5, (5, 3))  # the target's value
S = rng.uniform(0.5, 1.5, (4, 3))  # a source with 4 rows
U = rng.uniform(0.5, 1.5, (5, 3))  # an operand of the target's shape
V = rng.uniform(0.5, 1.5, (5, 3))
ROWS = np.array([0, 2, 2, 4])  # index_add / index_put accumulate repeated rows
DISTINCT = np.array([4, 0, 3, 1])  # index_copy / scatter / index_put need one writer per place
SC = np.array([[0, 1, 2], [2, 0, 1], [4, 3, 0], [1, 4, 3]])  # scatter index [4, 3]
SC_DISTINCT = np.array([[0, 1, 2], [2, 0, 1], [4, 3, 0], [1, 4, 3]])
MASK = U > 1.0
FLAT = np.array([0, 7, 14, 3])  # put_ positions in the flattened target


def _ix(m, a):
    return m.tensor(a, dtype=m.int64)


# name -> (the differentiable operands' values, op(m, target, operands) -> target after the op)
CASES = {
    "index_add_": ([S], lambda m, t, s: t.index_add_(0, _ix(m, ROWS), s[0])),
    "index_add_alpha": ([S], lambda m, t, s: t.index_add_(0, _ix(m, ROWS), s[0], alpha=2.5)),
    "index_copy_": ([S], lambda m, t, s: t.index_copy_(0, _ix(m, DISTINCT), s[0])),
    "index_put_": ([S], lambda m, t, s: t.index_put_((_ix(m, DISTINCT),), s[0])),
    "index_put_accumulate": (
        [S],
        lambda m, t, s: t.index_put_((_ix(m, ROWS),), s[0], accumulate=True),
    ),
    "scatter_": ([S], lambda m, t, s: t.scatter_(0, _ix(m, SC_DISTINCT), s[0])),
    "scatter_add_": ([S], lambda m, t, s: t.scatter_add_(0, _ix(m, SC), s[0])),
    "scatter_reduce_sum": (
        [S],
        lambda m, t, s: t.scatter_reduce_(0, _ix(m, SC), s[0], "sum"),
    ),
    "scatter_reduce_mean_no_self": (
        [S],
        lambda m, t, s: t.scatter_reduce_(0, _ix(m, SC), s[0], "mean", include_self=False),
    ),
    "scatter_reduce_amax": (
        [S],
        lambda m, t, s: t.scatter_reduce_(0, _ix(m, SC), s[0], "amax"),
    ),
    "masked_scatter_": (
        [U],
        lambda m, t, s: t.masked_scatter_(m.tensor(MASK), s[0]),
    ),
    "masked_fill_tensor": (
        [np.array(2.5)],
        lambda m, t, s: t.masked_fill_(m.tensor(MASK), s[0]),
    ),
    "copy_": ([U], lambda m, t, s: t.copy_(s[0])),
    "copy_broadcast": ([U[:1]], lambda m, t, s: t.copy_(s[0])),
    "add_": ([U], lambda m, t, s: t.add_(s[0])),
    "add_alpha": ([U], lambda m, t, s: t.add_(s[0], alpha=-0.5)),
    "sub_": ([U], lambda m, t, s: t.sub_(s[0])),
    "mul_": ([U], lambda m, t, s: t.mul_(s[0])),
    "div_": ([U], lambda m, t, s: t.div_(s[0])),
    "addcmul_": ([U, V], lambda m, t, s: t.addcmul_(s[0], s[1], value=0.5)),
    "addcdiv_": ([U, V], lambda m, t, s: t.addcdiv_(s[0], s[1], value=2.0)),
    "lerp_scalar": ([U], lambda m, t, s: t.lerp_(s[0], 0.3)),
    "lerp_tensor": ([U, V], lambda m, t, s: t.lerp_(s[0], s[1])),
    "put_": ([S[:, 0]], lambda m, t, s: t.put_(_ix(m, FLAT), s[0])),
    "put_accumulate": (
        [S[:, 0]],
        lambda m, t, s: t.put_(_ix(m, np.array([0, 7, 7, 3])), s[0], accumulate=True),
    ),
    "setitem_slice": ([S[:2]], lambda m, t, s: t.__setitem__(slice(1, 3), s[0]) or t),
    "setitem_index": ([S], lambda m, t, s: t.__setitem__(_ix(m, DISTINCT), s[0]) or t),
    "setitem_mask": (
        [np.array(1.75)],
        lambda m, t, s: t.__setitem__(m.tensor(MASK), s[0]) or t,
    ),
    "setitem_int_row": ([S[0]], lambda m, t, s: t.__setitem__(2, s[0]) or t),
}


def _run(m, name, target_grad):
    """Returns (the result's requires_grad, is_leaf, the operands' grads, the target's base's
    grad or None)."""
    values, op = CASES[name]
    ops = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in values]
    base = m.tensor(T, dtype=m.float64, requires_grad=target_grad)
    # with target_grad the target is a non-leaf of the base; else a fresh tensor without grad
    t = base * 1.0 if target_grad else m.zeros_like(base) + base
    r = op(m, t, ops)
    assert r._same(t) if m is flow else r is t
    flags = (t.requires_grad, t.is_leaf)
    weights = m.tensor(U * 2.0 - 1.0, dtype=m.float64)
    (t * t * weights).sum().backward()
    grads = [o.grad.detach().numpy() if o.grad is not None else None for o in ops]
    bgrad = base.grad.detach().numpy() if target_grad and base.grad is not None else None
    return flags, grads, bgrad


@pytest.mark.parametrize("target_grad", [False, True], ids=["no_grad_target", "grad_target"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_second_input_gradients_match_torch(name, target_grad):
    flags, grads, bgrad = _run(flow, name, target_grad)
    tflags, tgrads, tbgrad = _run(torch, name, target_grad)
    assert flags == tflags == (True, False)
    for g, tg in zip(grads, tgrads):
        assert g is not None and tg is not None
        np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)
    if target_grad:  # (copy_ overwrites all of it: torch's zeros, None here)
        bgrad = np.zeros_like(tbgrad) if bgrad is None and name.startswith("copy") else bgrad
        np.testing.assert_allclose(bgrad, tbgrad, rtol=1e-10, atol=1e-12)


def test_zeros_like_index_add_backward_gives_src_gradient():
    """The issue's script: the result of index_add_ into zeros_like(h) carries src's gradient."""
    h = flow.randn(5, 3)
    src = flow.randn(4, 3, requires_grad=True)
    out = flow.zeros_like(h).index_add_(0, flow.tensor([0, 2, 2, 4]), src)
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), np.ones((4, 3), np.float32))


def test_inplace_under_no_grad_records_nothing():
    t = flow.zeros(5, 3)
    src = flow.randn(4, 3, requires_grad=True)
    with flow.no_grad():
        t.index_add_(0, flow.tensor([0, 1, 2, 3]), src)
        t[0] = src[1]
    assert not t.requires_grad and t.grad_fn is None
