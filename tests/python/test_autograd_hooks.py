"""torch.autograd hooks and forward-mode AD (issue 19): saved_tensors_hooks / save_on_cpu /
disable_saved_tensors_hooks, Tensor.register_hook handles, register_post_accumulate_grad_hook,
grad_fn Node objects (name, next_functions, metadata, register_hook / register_prehook),
register_multi_grad_hook, increment_version, and torch.autograd.forward_ad, against torch 1.13
in float64 where torch has the feature."""
import threading

import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like.autograd import forward_ad as fwAD
from oneflow_like.autograd.graph import (
    disable_saved_tensors_hooks,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)

F64 = flow.float64


def rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape)


def both(a, rg=True):
    """The same float64 values as a flow and a torch leaf."""
    return (
        flow.tensor(a, dtype=F64, requires_grad=rg),
        torch.tensor(a, dtype=torch.float64, requires_grad=rg),
    )


def close(f, t, tol=1e-10):
    np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


class NumpyHooks:
    """Packs every saved tensor to a NumPy copy (dropping the tensor), unpacks it back."""

    def __init__(self):
        self.packed = 0
        self.unpacked = 0

    def pack(self, t):
        self.packed += 1
        return (t.detach().numpy().copy(), t.dtype, t.device)

    def unpack(self, p):
        self.unpacked += 1
        arr, dtype, device = p
        return flow.tensor(arr, dtype=dtype, device=device)

    def __call__(self):
        return saved_tensors_hooks(self.pack, self.unpack)


def grads_of(model, loss_fn, hooks=None):
    model.zero_grad()
    if hooks is None:
        loss = loss_fn(model)
    else:
        with hooks():
            loss = loss_fn(model)
    loss.backward()
    return loss.item(), [p.grad.numpy().copy() for p in model.parameters()]


def check_numpy_roundtrip(model, loss_fn):
    ref_loss, ref = grads_of(model, loss_fn)
    h = NumpyHooks()
    loss, got = grads_of(model, loss_fn, h)
    assert loss == ref_loss
    for a, b in zip(got, ref):  # unpacked copies are contiguous: a kernel may sum in another order
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    assert h.packed > 0 and 0 < h.unpacked <= h.packed
    return h


# ---------------------------------------------------------------- saved_tensors_hooks


def test_numpy_pack_mlp_matches_torch():
    flow.manual_seed(0)
    model = flow.nn.Sequential(
        flow.nn.Linear(5, 7), flow.nn.Tanh(), flow.nn.Linear(7, 3), flow.nn.Sigmoid()
    ).to(F64)
    x = rand(4, 5, seed=1)

    def loss_fn(m):
        return (m(flow.tensor(x, dtype=F64)) ** 2).sum()

    check_numpy_roundtrip(model, loss_fn)
    tm = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3), torch.nn.Sigmoid()
    ).double()
    with torch.no_grad():
        for pt, pf in zip(tm.parameters(), model.parameters()):
            pt.copy_(torch.tensor(pf.detach().numpy()))
    count = [0]

    def tpack(t):
        count[0] += 1
        return t.detach().numpy().copy()

    with torch.autograd.graph.saved_tensors_hooks(tpack, torch.from_numpy):
        (tm(torch.tensor(x)) ** 2).sum().backward()
    h = NumpyHooks()
    _, got = grads_of(model, loss_fn, h)
    for g, pt in zip(got, tm.parameters()):
        np.testing.assert_allclose(g, pt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_numpy_pack_cnn():
    flow.manual_seed(1)
    model = flow.nn.Sequential(
        flow.nn.Conv2d(2, 4, 3, padding=1),
        flow.nn.BatchNorm2d(4),
        flow.nn.ReLU(),
        flow.nn.MaxPool2d(2),
        flow.nn.Flatten(),
        flow.nn.Linear(4 * 3 * 3, 5),
    ).to(F64)
    x = flow.tensor(rand(3, 2, 6, 6, seed=2), dtype=F64)
    target = flow.tensor([0, 3, 4])
    check_numpy_roundtrip(model, lambda m: flow.nn.functional.cross_entropy(m(x), target))


def test_numpy_pack_lstm():
    flow.manual_seed(2)
    model = flow.nn.LSTM(3, 4, num_layers=2, batch_first=True).to(F64)
    x = flow.tensor(rand(2, 5, 3, seed=3), dtype=F64)
    check_numpy_roundtrip(model, lambda m: (m(x)[0] ** 2).mean())


def test_pack_counts_match_torch():
    a, ta = both(rand(3, 4))
    b, tb = both(rand(3, 4, seed=1))
    for fn in (lambda x, y: x * y, lambda x, y: x.sin() + y):
        counts = []
        for lib, x, y in ((flow, a, b), (torch, ta, tb)):
            n = [0]

            def pack(t, n=n):
                n[0] += 1
                return t

            hooks = (
                saved_tensors_hooks(pack, lambda t: t)
                if lib is flow
                else torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t)
            )
            with hooks:
                fn(x, y)
            counts.append(n[0])
        assert counts[0] == counts[1], counts


def test_nothing_packed_without_grad_or_outside_context():
    h = NumpyHooks()
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    with h():
        with flow.no_grad():
            x * x
        flow.tensor(rand(3)) * 2
    (x * x).sum().backward()
    assert h.packed == 0 and h.unpacked == 0


def test_identity_hooks_see_the_saved_tensor_and_unpack_in_backward():
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t) or len(seen) - 1, lambda i: seen[i]):
        y = x * x
    assert len(seen) >= 1 and any(
        np.array_equal(s.detach().numpy(), x.detach().numpy()) for s in seen
    )
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_custom_function_save_for_backward_goes_through_hooks():
    class Cube(flow.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = flow.tensor(rand(4), dtype=F64, requires_grad=True)
    h = NumpyHooks()
    with h():
        y = Cube.apply(x)
    assert h.packed == 1 and h.unpacked == 0
    y.sum().backward()
    assert h.unpacked == 1
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)

    with saved_tensors_hooks(lambda t: t, lambda t: t[:2]):
        y = Cube.apply(x)
    with pytest.raises(RuntimeError, match=r"CubeBackward.*unpack_hook.*\(2,\).*\(4,\)"):
        y.sum().backward()


def test_save_on_cpu_gives_the_same_gradients():
    flow.manual_seed(3)
    model = flow.nn.Sequential(flow.nn.Linear(4, 6), flow.nn.GELU(), flow.nn.Linear(6, 2))
    x = flow.randn(5, 4)
    ref_loss, ref = grads_of(model, lambda m: m(x).pow(2).sum())
    for pin in (False, True):
        loss, got = grads_of(model, lambda m: m(x).pow(2).sum(), lambda: save_on_cpu(pin))
        assert loss == ref_loss
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)


def test_packed_objects_are_freed_with_the_graph():
    import gc
    import weakref

    class Box:
        def __init__(self, t):
            self.arr = t.detach().numpy().copy()

    refs = []

    def pack(t):
        b = Box(t)
        refs.append(weakref.ref(b))
        return b

    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    with saved_tensors_hooks(pack, lambda b: flow.tensor(b.arr)):
        y = (x.sin() * x).sum()
    y.backward(retain_graph=True)
    gc.collect()
    assert refs and all(r() is not None for r in refs)  # retained for another backward
    y.backward()
    gc.collect()
    assert all(r() is None for r in refs)  # released with the graph's saved tensors


def test_nested_contexts_use_the_innermost_pair():
    outer, inner = NumpyHooks(), NumpyHooks()
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    with outer():
        y1 = x.sin()
        n1 = outer.packed
        with inner():
            y2 = x.cos()
        assert outer.packed == n1 and inner.packed > 0
        y3 = x.exp()
        assert outer.packed > n1
    (y1 + y2 + y3).sum().backward()
    assert outer.unpacked == outer.packed and inner.unpacked == inner.packed
    xv = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) - np.sin(xv) + np.exp(xv))


def test_hooks_are_thread_local():
    h = NumpyHooks()
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    with h():
        t = threading.Thread(target=lambda: (x * x).sum().backward())
        t.start()
        t.join()
    assert h.packed == 0
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_double_backward_through_unpacked_tensors_matches_torch():
    x, tx = both(rand(4))
    h = NumpyHooks()
    with h():
        y = (x.sin() * x).sum()
    (g,) = flow.autograd.grad(y, x, create_graph=True)
    (g2,) = flow.autograd.grad(g.sum(), x)
    ty = (tx.sin() * tx).sum()
    (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
    (tg2,) = torch.autograd.grad(tg.sum(), tx)
    close(g, tg)
    close(g2, tg2)


def test_unpack_errors_name_the_op():
    x = flow.tensor(rand(2, 3), dtype=F64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t.reshape(-1)):
        y = x.exp()
    with pytest.raises(ValueError, match=r"Backward0\].*unpack_hook.*\[6\].*\[2,3\]"):
        y.sum().backward()
    with saved_tensors_hooks(lambda t: t, lambda t: t.float()):
        y = x.exp()
    with pytest.raises(ValueError, match=r"Backward0\].*unpack_hook.*dtype"):
        y.sum().backward()
    with saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
        y = x.exp()
    with pytest.raises(TypeError, match="unpack_hook.*expected a Tensor, got str"):
        y.sum().backward()


def test_pack_hook_error_raises_from_the_forward_op():
    def bad(t):
        raise KeyError("no room")

    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    with saved_tensors_hooks(bad, lambda p: p):
        with pytest.raises(RuntimeError, match="pack_hook.*no room"):
            x.exp()


def test_in_place_change_after_packing_is_caught():
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    a = x * 1
    with saved_tensors_hooks(lambda t: t.detach().numpy().copy(), flow.tensor):
        y = a.sin()  # saves its input
    a.add_(1)
    with pytest.raises(ValueError, match="modified by an in-place operation"):
        y.sum().backward()


def test_disable_saved_tensors_hooks():
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    with disable_saved_tensors_hooks("no hooks in here"):
        with pytest.raises(RuntimeError, match="no hooks in here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        (x * x).sum().backward()
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
        y = x * x
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="not while packing"):
            with disable_saved_tensors_hooks("not while packing"):
                pass
    y.sum().backward()

    @disable_saved_tensors_hooks("decorated")
    def f():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    with pytest.raises(RuntimeError, match="decorated"):
        f()


# ---------------------------------------------------------------- tensor and node hooks


def test_register_hook_handles_on_leaf_and_non_leaf_match_torch():
    res = []
    for lib, (x, y) in ((flow, both(rand(3))), (torch, both(rand(3))[::-1])):
        z = x * 2
        h1 = x.register_hook(lambda g: g * 3)
        h2 = z.register_hook(lambda g: g + 1)
        (z * z).sum().backward()
        first = x.grad.numpy().copy() if lib is flow else x.grad.detach().numpy().copy()
        h1.remove()
        h2.remove()
        x.grad = None
        z = x * 2
        (z * z).sum().backward()
        second = x.grad.numpy().copy() if lib is flow else x.grad.detach().numpy().copy()
        res.append((first, second))
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(a, b)


def test_leaf_hook_runs_in_autograd_grad_as_torch2():
    # torch 2.x: "if the Tensor is passed as part of the inputs argument to torch.autograd.grad
    # ... the hook registered to that Tensor will always be executed" (1.13 skipped it).
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (g,) = flow.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), 20 * x.detach().numpy())
    y = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    seen = []
    y.register_hook(lambda g: seen.append(g))
    flow.autograd.grad((x * y).sum(), x)  # y is not an input: its hook does not run
    assert seen == []


def test_post_accumulate_grad_hook():
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [2, 2, 2])
    np.testing.assert_allclose(seen[1], [5, 5, 5])  # after accumulation
    h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require"):
        flow.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(TypeError, match="callable"):
        x.register_post_accumulate_grad_hook(3)


def test_optimizer_step_in_backward_matches_a_plain_loop():
    def make():
        flow.manual_seed(4)
        return flow.nn.Sequential(flow.nn.Linear(4, 8), flow.nn.ReLU(), flow.nn.Linear(8, 1))

    xs = [flow.randn(6, 4) for _ in range(3)]
    ref = make()
    opt = flow.optim.Adam(ref.parameters(), lr=0.01)
    for x in xs:
        opt.zero_grad()
        ref(x).pow(2).mean().backward()
        opt.step()

    model = make()
    opts = {p: flow.optim.Adam([p], lr=0.01) for p in model.parameters()}

    def step_hook(p):
        opts[p].step()
        opts[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_hook)
    for x in xs:
        model(x).pow(2).mean().backward()
    for a, b in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
        assert a.grad is None


def test_grad_fn_node_api():
    x, tx = both(rand(2, 3))
    w, tw = both(rand(3, 2, seed=1))
    y = (x @ w).relu()
    ty = (tx @ tw).relu()
    node = y.grad_fn
    assert isinstance(node, flow.autograd.graph.Node)
    assert "Backward" in node.name() and node.name() in repr(node)
    assert "Backward" in repr(y)
    ((mm, nr),) = [e for e in node.next_functions if e[0] is not None]
    assert nr == 0 and "Backward" in mm.name()
    leaves = mm.next_functions
    assert [n.name() for n, _ in leaves] == ["AccumulateGrad", "AccumulateGrad"]
    assert leaves[0][0].variable._same(x)
    assert len(ty.grad_fn.next_functions) == len(node.next_functions)
    node.metadata["tag"] = 5
    assert y.grad_fn.metadata["tag"] == 5 and y.grad_fn == node
    assert x.grad_fn is None
    assert flow.autograd.graph.get_gradient_edge(x)[0] == leaves[0][0]


def test_node_hook_and_prehook():
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    y = x.exp()
    calls = []

    def prehook(grad_outputs):
        calls.append("pre")
        return (grad_outputs[0] * 2,)

    def hook(grad_inputs, grad_outputs):
        calls.append("post")
        np.testing.assert_allclose(grad_outputs[0].numpy(), [2, 2, 2])
        return (grad_inputs[0] + 1,)

    hp = y.grad_fn.register_prehook(prehook)
    hh = y.grad_fn.register_hook(hook)
    y.sum().backward(retain_graph=True)
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()) + 1)
    hp.remove()
    hh.remove()
    x.grad = None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))
    y = x.exp()
    y.grad_fn.register_prehook(lambda g: (g[0], g[0]))
    with pytest.raises(ValueError, match="pre-hook returned 2 gradients, expected 1"):
        y.sum().backward()


def test_multi_grad_hook_all_and_any():
    a = flow.tensor(rand(2), dtype=F64, requires_grad=True)
    b = flow.tensor(rand(2, seed=1), dtype=F64, requires_grad=True)
    c = flow.tensor(rand(2, seed=2), dtype=F64, requires_grad=True)
    got = []
    h = register_multi_grad_hook((a, b, c), lambda grads: got.append(grads))
    (a * 2 + b * 3).sum().backward()
    assert len(got) == 1
    np.testing.assert_allclose(got[0][0].numpy(), [2, 2])
    np.testing.assert_allclose(got[0][1].numpy(), [3, 3])
    assert got[0][2] is None
    (a * c).sum().backward()
    assert len(got) == 2 and got[1][1] is None
    flow.autograd.grad((a * b * c).sum(), [a, b])  # c's gradient is not computed by grad()
    assert len(got) == 3 and got[2][2] is None
    h.remove()
    (a + b + c).sum().backward()
    assert len(got) == 3

    anys = []
    h = register_multi_grad_hook((a, b), lambda g: anys.append(g), mode="any")
    (a * 4 + b).sum().backward()
    (b * 5).sum().backward()
    assert len(anys) == 2
    np.testing.assert_allclose(anys[1].numpy(), [5, 5])
    h.remove()
    with pytest.raises(ValueError, match="mode"):
        register_multi_grad_hook((a,), print, mode="some")


def test_increment_version():
    x = flow.tensor(rand(3), dtype=F64, requires_grad=True)
    a = x * 1
    y = a.sin()
    v = a._version
    flow.autograd.graph.increment_version(a)
    assert a._version == v + 1
    with pytest.raises(ValueError, match="modified by an in-place operation"):
        y.sum().backward()


# ---------------------------------------------------------------- forward_ad


def _fwd(fn, primals, tangents):
    """(outputs, tangents) of fn by our forward_ad and by torch 1.13's, both float64."""
    res = []
    for lib, ad in ((flow, fwAD), (torch, torch.autograd.forward_ad)):
        mk = (lambda a: flow.tensor(a, dtype=F64)) if lib is flow else torch.tensor
        with ad.dual_level():
            duals = [ad.make_dual(mk(p), mk(t)) for p, t in zip(primals, tangents)]
            out = fn(lib, *duals)
            outs = out if isinstance(out, tuple) else (out,)
            res.append([ad.unpack_dual(o) for o in outs])
    return res


FWD_CASES = {
    "elementwise": (lambda L, x, y: x.sin() * y.exp() + x**2 / (1 + y * y), [(3, 4), (3, 4)]),
    "broadcast": (lambda L, x, y: x * y - x, [(3, 4), (4,)]),
    "matmul": (lambda L, x, w: x @ w, [(3, 4), (4, 5)]),
    "linear": (
        lambda L, x, w, b: L.nn.functional.linear(x, w, b),
        [(3, 4), (5, 4), (5,)],
    ),
    "reductions": (lambda L, x: (x.sum(1), x.mean(0), (x * x).sum(), x.amax(1)), [(3, 4)]),
    "activations": (
        lambda L, x: (
            x.relu(),
            L.sigmoid(x),
            L.tanh(x),
            L.nn.functional.gelu(x),
            L.nn.functional.softplus(x),
            L.nn.functional.silu(x),
        ),
        [(3, 4)],
    ),
    "softmax": (
        lambda L, x: (L.softmax(x, 1), L.log_softmax(x, 0)),
        [(3, 4)],
    ),
    "conv2d": (
        lambda L, x, w: L.nn.functional.conv2d(x, w, padding=1),
        [(2, 3, 5, 5), (4, 3, 3, 3)],
    ),
    "views": (
        lambda L, x: (x.reshape(4, 3), x.t(), x[1:, ::2], x.unsqueeze(0).expand(2, 3, 4)),
        [(3, 4)],
    ),
    "layer_norm": (lambda L, x: L.nn.functional.layer_norm(x, (4,)), [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(FWD_CASES))
def test_forward_ad_matches_torch(name):
    fn, shapes = FWD_CASES[name]
    primals = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    tangents = [rand(*s, seed=10 + i) for i, s in enumerate(shapes)]
    ours, theirs = _fwd(fn, primals, tangents)
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        close(p, tp)
        close(t, tt)


def test_forward_ad_of_an_mlp_module_matches_func_jvp():
    flow.manual_seed(5)
    model = flow.nn.Sequential(flow.nn.Linear(3, 5), flow.nn.Tanh(), flow.nn.Linear(5, 2)).to(F64)
    x = flow.tensor(rand(4, 3), dtype=F64)
    v = flow.tensor(rand(4, 3, seed=1), dtype=F64)
    with fwAD.dual_level():
        p, t = fwAD.unpack_dual(model(fwAD.make_dual(x, v)))
    _, jv = flow.func.jvp(model, (x,), (v,))
    np.testing.assert_allclose(t.numpy(), jv.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p.numpy(), model(x).detach().numpy())


def test_unpack_dual_without_tangent_and_levels():
    x = flow.tensor(rand(3), dtype=F64)
    assert fwAD.unpack_dual(x).tangent is None
    with fwAD.dual_level() as lvl:
        assert lvl == 0
        d = fwAD.make_dual(x, flow.ones(3, dtype=F64))
        p, t = fwAD.unpack_dual(d)
        np.testing.assert_allclose(t.numpy(), [1, 1, 1])
        assert isinstance(fwAD.unpack_dual(d), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(x * 2).tangent is None
        assert fwAD.unpack_dual(p).tangent is None
        np.testing.assert_allclose(fwAD.unpack_dual(d * 0).tangent.numpy(), [0, 0, 0])
    assert fwAD.unpack_dual(d).tangent is None  # the level is gone
    lvl = fwAD.enter_dual_level()
    fwAD.exit_dual_level(level=lvl)


def test_forward_ad_errors():
    x = flow.tensor(rand(3), dtype=F64)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"different size.*\[3\].*\[4\]"):
            fwAD.make_dual(x, flow.zeros(4, dtype=F64))
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="floating point"):
            fwAD.make_dual(flow.tensor([1, 2]), flow.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="not the last one"):
        fwAD.exit_dual_level()
