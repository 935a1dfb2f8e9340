"""nn.utils: weight_norm / spectral_norm (hook and parametrize styles), parametrize,
fuse_conv_bn_*, skip_init, stateless.functional_call and func.functional_call, clip_grad,
against torch 1.13 in float64 with the same weights and inputs (eager and nn.Graph)."""
import numpy as np
import pytest

import oneflow_like as flow

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape)


def same_weights(ours, ref):
    """Copies ref's state (float64) into ours."""
    with torch.no_grad():
        ref.double()
    ours.double()
    ours.load_state_dict({k: flow.tensor(v.numpy()) for k, v in ref.state_dict().items()})


def close(a, b, tol=1e-8):
    np.testing.assert_allclose(
        a.detach().numpy() if hasattr(a, "detach") else a,
        b.detach().numpy() if hasattr(b, "detach") else b,
        rtol=tol,
        atol=tol,
    )


def forward_backward(lib, m, x_np):
    x = lib.tensor(x_np, requires_grad=True)
    y = m(x)
    (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
    return y, x.grad


def check_against_torch(ours, ref, x_np, grads_of):
    y, gx = forward_backward(flow, ours, x_np)
    ry, rgx = forward_backward(torch, ref, x_np)
    close(y, ry)
    close(gx, rgx)
    for name in grads_of:
        close(dict(ours.named_parameters())[name].grad, dict(ref.named_parameters())[name].grad)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_hook_style_matches_torch(dim):
    ref = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3), dim=dim)
    ours = flow.nn.utils.weight_norm(flow.nn.Linear(4, 3), dim=dim)
    assert sorted(ours.state_dict()) == sorted(ref.state_dict()) == ["bias", "weight_g", "weight_v"]
    same_weights(ours, ref)
    check_against_torch(ours, ref, arr(5, 4), ["weight_g", "weight_v", "bias"])
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        flow.nn.utils.weight_norm(ours, dim=dim)
    flow.nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(ref)
    assert sorted(ours.state_dict()) == ["bias", "weight"]
    close(ours.weight, ref.weight)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        flow.nn.utils.remove_weight_norm(ours)


@pytest.mark.parametrize("conv", ["Conv2d", "ConvTranspose2d"])
def test_spectral_norm_hook_style_matches_torch(conv):
    ref = torch.nn.utils.spectral_norm(getattr(torch.nn, conv)(2, 3, 3), n_power_iterations=2)
    ours = flow.nn.utils.spectral_norm(getattr(flow.nn, conv)(2, 3, 3), n_power_iterations=2)
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    same_weights(ours, ref)
    x = arr(2, 2, 5, 5)
    for _ in range(2):  # training: power iterations update u and v in place
        for m in (ours, ref):
            m.zero_grad()
        check_against_torch(ours, ref, x, ["weight_orig", "bias"])
        close(ours.weight_u, ref.weight_u)
        close(ours.weight_v, ref.weight_v)
    ours.eval(), ref.eval()
    u = ours.weight_u.numpy().copy()
    close(ours(flow.tensor(x)), ref(torch.tensor(x)))
    np.testing.assert_array_equal(ours.weight_u.numpy(), u)  # eval: no iteration
    flow.nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(ref)
    close(ours.weight, ref.weight)
    assert sorted(ours.state_dict()) == ["bias", "weight"]


class Symmetric:
    @staticmethod
    def make(lib):
        class Sym(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(0, 1)

            def right_inverse(self, a):
                return a.triu()

        return Sym()


def test_register_parametrization_matches_torch():
    results = []
    w, xs = arr(3, 3), arr(2, 3)
    for lib in (flow, torch):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        P.register_parametrization(m, "weight", Symmetric.make(lib))
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
        assert not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is lib.nn.Linear
        keys = sorted(m.state_dict())
        orig = m.parametrizations.weight.original.detach().numpy().copy()
        sym = m.weight.detach().numpy().copy()
        (m(lib.tensor(xs)) * lib.tensor(xs[:, ::-1].copy())).sum().backward()
        g = m.parametrizations.weight.original.grad.numpy().copy()
        with P.cached():
            a = m.weight
            assert m.weight is a
        m.weight = lib.tensor(np.eye(3) * 2.0)  # through right_inverse
        after_set = m.parametrizations.weight.original.detach().numpy().copy()
        P.remove_parametrizations(m, "weight")
        assert not P.is_parametrized(m) and type(m) is lib.nn.Linear
        results.append(
            (keys, orig, sym, g, after_set, m.weight.detach().numpy(), sorted(m.state_dict()))
        )
    for a, b in zip(*results):
        if isinstance(a, np.ndarray):
            close(a, b)
        else:
            assert a == b
    np.testing.assert_allclose(results[0][2], results[0][2].T)


def test_parametrization_errors_and_chaining():
    P = flow.nn.utils.parametrize
    m = flow.nn.Linear(3, 3)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="may not change the shape"):

        class Shrink(flow.nn.Module):
            def forward(self, x):
                return x[:2]

        P.register_parametrization(m, "weight", Shrink())
    assert not P.is_parametrized(m)

    class Double(flow.nn.Module):
        def forward(self, x):
            return x * 2

    w = m.weight.detach().numpy().copy()
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "weight", Double())
    close(m.weight, 4 * w, 1e-6)
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    close(m.weight, w, 1e-6)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm_matches_torch_weight_norm(dim):
    # torch 1.13 has no parametrizations.weight_norm: its hook-style weight_norm is the reference
    ref = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 3, 3).double(), dim=dim)
    ours = flow.nn.utils.parametrizations.weight_norm(flow.nn.Conv1d(2, 3, 3), dim=dim).double()
    assert sorted(ours.state_dict()) == [
        "bias",
        "parametrizations.weight.original0",
        "parametrizations.weight.original1",
    ]
    sd = ref.state_dict()
    ours.load_state_dict(
        {
            "bias": flow.tensor(sd["bias"].numpy()),
            "parametrizations.weight.original0": flow.tensor(sd["weight_g"].numpy()),
            "parametrizations.weight.original1": flow.tensor(sd["weight_v"].numpy()),
        }
    )
    x = arr(2, 2, 6)
    y, gx = forward_backward(flow, ours, x)
    ry, rgx = forward_backward(torch, ref, x)
    close(y, ry)
    close(gx, rgx)
    close(ours.parametrizations.weight.original0.grad, ref.weight_g.grad)
    close(ours.parametrizations.weight.original1.grad, ref.weight_v.grad)


def test_parametrizations_spectral_norm_matches_torch():
    ref = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(5, 4).double())
    ours = flow.nn.utils.parametrizations.spectral_norm(flow.nn.Linear(5, 4).double())
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    ours.load_state_dict({k: flow.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    x = arr(3, 5)
    for _ in range(2):
        for m in (ours, ref):
            m.zero_grad()
        y, gx = forward_backward(flow, ours, x)
        ry, rgx = forward_backward(torch, ref, x)
        close(y, ry)
        close(gx, rgx)
        close(ours.parametrizations.weight.original.grad, ref.parametrizations.weight.original.grad)
        close(ours.parametrizations.weight[0]._u, ref.parametrizations.weight[0]._u)
    # the largest singular value of the normalized weight is about 1 after 15 + a few steps
    m = flow.nn.utils.parametrizations.spectral_norm(flow.nn.Linear(6, 6).double())
    for _ in range(30):
        m(flow.ones(1, 6, dtype=flow.float64))
    assert abs(np.linalg.svd(m.weight.detach().numpy())[1][0] - 1) < 1e-3


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval_matches_torch_and_the_unfused_pair(transpose):
    C = "ConvTranspose2d" if transpose else "Conv2d"
    pairs = []
    for lib in (flow, torch):
        conv, bn = getattr(lib.nn, C)(2, 3, 3).double(), lib.nn.BatchNorm2d(3).double()
        pairs.append((conv, bn))
    for o, r in zip(pairs[0], pairs[1]):
        with torch.no_grad():
            for p in r.parameters():
                p.copy_(torch.tensor(arr(*p.shape)))
            if isinstance(r, torch.nn.BatchNorm2d):
                r.running_mean.copy_(torch.tensor(arr(3)))
                r.running_var.copy_(torch.tensor(np.abs(arr(3)) + 0.5))
        o.load_state_dict({k: flow.tensor(v.numpy()) for k, v in r.state_dict().items()})
        o.eval(), r.eval()
    fused = flow.nn.utils.fuse_conv_bn_eval(*pairs[0], transpose=transpose)
    ref = torch.nn.utils.fuse_conv_bn_eval(*pairs[1], transpose=transpose)
    close(fused.weight, ref.weight)
    close(fused.bias, ref.bias)
    x = arr(1, 2, 5, 5)
    close(fused(flow.tensor(x)), pairs[0][1](pairs[0][0](flow.tensor(x))))
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        flow.nn.utils.fuse_conv_bn_eval(pairs[0][0].train(), pairs[0][1])
    w, b = flow.nn.utils.fuse_conv_bn_weights(
        *[
            flow.tensor(t.detach().numpy()) if t is not None else None
            for t in (pairs[1][0].weight, None, pairs[1][1].running_mean, pairs[1][1].running_var)
        ],
        1e-5,
        None,
        None,
        transpose,
    )
    rw, rb = torch.nn.utils.fuse_conv_bn_weights(
        pairs[1][0].weight,
        None,
        pairs[1][1].running_mean,
        pairs[1][1].running_var,
        1e-5,
        None,
        None,
        transpose,
    )
    assert isinstance(w, flow.nn.Parameter)
    close(w, rw)
    close(b, rb)


def test_fuse_linear_bn_eval():
    lin, bn = flow.nn.Linear(3, 4).double().eval(), flow.nn.BatchNorm1d(4).double().eval()
    with flow.no_grad():
        bn.running_mean.copy_(flow.tensor(arr(4)))
        bn.running_var.copy_(flow.tensor(np.abs(arr(4)) + 0.5))
        bn.weight.copy_(flow.tensor(arr(4)))
    x = flow.tensor(arr(5, 3))
    close(flow.nn.utils.fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)))


def test_skip_init():
    m = flow.nn.utils.skip_init(flow.nn.Linear, 4, 3, bias=False)
    assert isinstance(m, flow.nn.Linear) and tuple(m.weight.shape) == (3, 4)
    assert m.bias is None and m.weight.requires_grad
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        flow.nn.utils.skip_init(flow.nn.ReLU)


def test_functional_call_matches_torch_and_restores_the_module():
    results = []
    w, b, x = arr(2, 3), arr(2), arr(4, 3)
    for lib in (flow, torch):
        m = lib.nn.Linear(3, 2).double()
        old = m.weight.detach().numpy().copy()
        W = lib.tensor(w, requires_grad=True)
        y = lib.nn.utils.stateless.functional_call(
            m, {"weight": W, "bias": lib.tensor(b)}, (lib.tensor(x),)
        )
        y.sum().backward()
        np.testing.assert_array_equal(m.weight.detach().numpy(), old)
        assert m.weight.grad is None
        results.append((y.detach().numpy(), W.grad.numpy()))
    close(results[0][0], results[1][0])
    close(results[0][1], results[1][1])
    y = flow.func.functional_call(
        flow.nn.Linear(3, 2).double(),
        ({"weight": flow.tensor(w)}, {"bias": flow.tensor(b)}),
        flow.tensor(x),
    )
    close(y, results[0][0])
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        flow.func.functional_call(
            flow.nn.Linear(3, 2),
            ({"bias": flow.zeros(2)}, {"bias": flow.zeros(2)}),
            flow.ones(1, 3),
        )


def test_functional_call_tied_weights_strict_and_buffers():
    class Tied(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = flow.nn.Linear(2, 2, bias=False)
            self.b = flow.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied().double()
    assert m.a.weight is m.b.weight  # Module._apply keeps tied weights tied
    W = flow.tensor(arr(2, 2))
    x = flow.tensor(arr(1, 2))
    y = flow.nn.utils.stateless.functional_call(m, {"a.weight": W}, (x,))
    close(y, (x.numpy() @ W.numpy().T) @ W.numpy().T, 1e-6)
    y = flow.nn.utils.stateless.functional_call(m, {"a.weight": W}, (x,), tie_weights=False)
    close(y, (x.numpy() @ W.numpy().T) @ m.a.weight.detach().numpy().T, 1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        flow.nn.utils.stateless.functional_call(m, {"a.weight": W, "b.weight": W + 1}, (x,))
    with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing for Tied"):
        flow.nn.utils.stateless.functional_call(m, {"a.weight": W, "zz": W}, (x,), strict=True)
    bn = flow.nn.BatchNorm1d(2).eval()
    out = flow.nn.utils.stateless.functional_call(
        bn, {"running_mean": flow.ones(2), "running_var": flow.ones(2) * 4}, (flow.ones(3, 2),)
    )
    close(out, np.zeros((3, 2)), 1e-6)
    assert bn.running_mean.numpy().tolist() == [0.0, 0.0]


def test_clip_grad_module_alias_and_deprecated_name():
    from oneflow_like.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_

    assert clip_grad_norm_ is flow.nn.utils.clip_grad_norm_
    assert clip_grad_value_ is flow.nn.utils.clip_grad_value_
    p = flow.nn.Parameter(flow.ones(4))
    p.grad = flow.ones(4) * 3
    with pytest.warns(UserWarning, match="deprecated"):
        total = flow.nn.utils.clip_grad_norm(p, 1.0)
    assert abs(total.item() - 6.0) < 1e-5
    assert abs(float((p.grad * p.grad).sum().sqrt().item()) - 1.0) < 1e-4
    from oneflow_like.nn.utils.convert_parameters import parameters_to_vector

    assert parameters_to_vector is flow.nn.utils.parameters_to_vector


def test_weight_norm_eager_equals_graph():
    m = flow.nn.utils.parametrizations.weight_norm(flow.nn.Linear(4, 3))
    h = flow.nn.utils.weight_norm(flow.nn.Linear(3, 2))
    net = flow.nn.Sequential(m, flow.nn.Tanh(), h)

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.net = net

        def build(self, x):
            return self.net(x)

    x = flow.tensor(arr(5, 4), dtype=flow.float32)
    close(G()(x), net(x), 1e-5)


def test_transfer_parametrizations_and_params_shares_the_originals():
    P = flow.nn.utils.parametrize
    src = flow.nn.Linear(3, 3).double()
    P.register_parametrization(src, "weight", Symmetric.make(flow))
    dst = flow.nn.Linear(3, 3).double()
    P.transfer_parametrizations_and_params(src, dst)
    assert P.is_parametrized(dst, "weight")
    assert dst.parametrizations.weight.original is src.parametrizations.weight.original
    close(dst.weight, src.weight)
