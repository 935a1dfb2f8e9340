"""torch.func (flow.func) against functorch 1.13 (torch.func's predecessor, same semantics):
vmap over pytrees with in_dims/out_dims and randomness, grad / grad_and_value with argnums and
has_aux, vjp, jvp, jacrev, jacfwd, hessian, their compositions (per-sample gradients, grad of
grad), stack_module_state + functional_call ensembles, and the errors."""
import functorch
import numpy as np
import pytest
import torch

import oneflow_like as flow
from oneflow_like import func as ff


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def both(a):
    return flow.tensor(a, dtype=flow.float64), torch.tensor(a, dtype=torch.float64)


def close(a, b, tol=1e-10):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            close(a[k], b[k], tol)
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_vmap_in_dims_out_dims_and_pytrees():
    (xf, xt), (yf, yt) = both(arr(3, 4)), both(arr(4, 3, seed=1))
    close(ff.vmap(flow.dot)(xf, xf), functorch.vmap(torch.dot)(xt, xt))
    close(
        ff.vmap(lambda a, b: a * b, in_dims=(0, 1))(xf, yf),
        functorch.vmap(lambda a, b: a * b, in_dims=(0, 1))(xt, yt),
    )
    close(
        ff.vmap(lambda a, b: a + b, in_dims=(0, None), out_dims=1)(xf, xf[0]),
        functorch.vmap(lambda a, b: a + b, in_dims=(0, None), out_dims=1)(xt, xt[0]),
    )

    def fn(d, scale):
        return {"s": d["a"].sum() * scale, "pair": (d["a"] * 2, d["b"].exp())}

    df, dt = {"a": xf, "b": yf.t()}, {"a": xt, "b": yt.t()}
    close(
        ff.vmap(fn, in_dims=({"a": 0, "b": 0}, None))(df, 2.0),
        functorch.vmap(fn, in_dims=({"a": 0, "b": 0}, None))(dt, 2.0),
    )
    # nested vmap == an outer product
    close(
        ff.vmap(ff.vmap(lambda a, b: a * b, (None, 0)), (0, None))(xf[0], yf[0]),
        torch.outer(xt[0], yt[0]),
    )


def test_vmap_randomness_modes():
    x = flow.zeros(4, 3)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ff.vmap(lambda a: a + flow.rand(3))(x)
    same = ff.vmap(lambda a: a + flow.rand(3), randomness="same")(x)
    assert np.allclose(same.detach().numpy(), same.detach().numpy()[0:1])
    diff = ff.vmap(lambda a: a + flow.rand(3), randomness="different")(x)
    assert not np.allclose(diff.detach().numpy()[0], diff.detach().numpy()[1])


def test_vmap_errors():
    x = flow.zeros(4, 3)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        ff.vmap(lambda a, b: a + b)(x, flow.zeros(5, 3))
    with pytest.raises(ValueError, match="at least one input must be mapped"):
        ff.vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(ValueError, match="in_dim=2 for an input but the input is of dimension 2"):
        ff.vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(ValueError, match="must only return Tensors"):
        ff.vmap(lambda a: 3)(x)
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        ff.vmap(lambda a: a, randomness="sometimes")


def test_grad_argnums_has_aux_and_grad_and_value():
    (xf, xt), (yf, yt) = both(arr(5)), both(arr(5, seed=2))

    def f(lib):
        return lambda a, b: ((a.sin() * b).sum(), {"n": a.norm()})

    close(
        ff.grad(f(flow), has_aux=True)(xf, yf)[0], functorch.grad(f(torch), has_aux=True)(xt, yt)[0]
    )
    close(
        ff.grad(f(flow), argnums=(0, 1), has_aux=True)(xf, yf)[0],
        functorch.grad(f(torch), argnums=(0, 1), has_aux=True)(xt, yt)[0],
    )
    gv_f = ff.grad_and_value(lambda a: (a**3).sum())(xf)
    gv_t = functorch.grad_and_value(lambda a: (a**3).sum())(xt)
    close(gv_f, gv_t)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        ff.grad(lambda a: a * 2)(xf)
    with pytest.raises(RuntimeError, match="argnums=3"):
        ff.grad(lambda a: a.sum(), argnums=3)(xf)


def test_grad_of_grad_and_hessian():
    xf, xt = both(arr(4, seed=3))

    def f(a):
        return (a.exp() * a).sum()

    close(
        ff.grad(lambda a: ff.grad(f)(a).sum())(xf),
        functorch.grad(lambda a: functorch.grad(f)(a).sum())(xt),
    )
    close(ff.hessian(f)(xf), functorch.hessian(f)(xt), 1e-9)


def test_per_sample_gradients_vmap_of_grad_with_functional_call():
    model_f, model_t = flow.nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        model_t.weight.copy_(torch.tensor(model_f.weight.detach().numpy()))
        model_t.bias.copy_(torch.tensor(model_f.bias.detach().numpy()))
    (xf, xt), (yf, yt) = both(arr(6, 3, seed=4)), both(arr(6, 2, seed=5))
    pf = {k: v.detach() for k, v in model_f.named_parameters()}

    def loss_f(params, x, y):
        out = ff.functional_call(model_f, params, (x.unsqueeze(0),))
        return ((out - y.unsqueeze(0)) ** 2).mean()

    got = ff.vmap(ff.grad(loss_f), in_dims=(None, 0, 0))(pf, xf, yf)
    for i in range(6):  # each sample's gradient by torch autograd
        model_t.zero_grad()
        ((model_t(xt[i : i + 1]) - yt[i : i + 1]) ** 2).mean().backward()
        close({k: v[i] for k, v in got.items()}, {k: p.grad for k, p in model_t.named_parameters()})


def test_vjp_jvp_jacrev_jacfwd_match_functorch():
    (xf, xt), (vf, vt) = both(arr(3, seed=6)), both(arr(2, seed=7))
    (tf, tt) = both(arr(3, seed=8))

    def g(a):
        return (
            torch.stack([a.sum() ** 2, (a * a.flip(0)).prod()])
            if isinstance(a, torch.Tensor)
            else flow.stack([a.sum() ** 2, (a * a.flip(0)).prod()])
        )

    of, fnf = ff.vjp(g, xf)
    ot, fnt = functorch.vjp(g, xt)
    close(of, ot)
    close(fnf(vf), fnt(vt))
    close(ff.jvp(g, (xf,), (tf,)), functorch.jvp(g, (xt,), (tt,)))
    close(ff.jacrev(g)(xf), functorch.jacrev(g)(xt))
    close(ff.jacfwd(g)(xf), functorch.jacfwd(g)(xt))

    def h(a, b):
        return (a[:, None] * b[None, :]).sin()

    (bf, bt) = both(arr(2, seed=9))
    close(ff.jacrev(h, argnums=(0, 1))(xf, bf), functorch.jacrev(h, argnums=(0, 1))(xt, bt))
    close(ff.jacfwd(h, argnums=1)(xf, bf), functorch.jacfwd(h, argnums=1)(xt, bt))


def test_stack_module_state_ensemble_equals_each_model():
    models = [flow.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = ff.stack_module_state(models)
    assert tuple(params["weight"].shape) == (4, 2, 3) and params["weight"].is_leaf
    base = flow.nn.Linear(3, 2)
    x = flow.randn(5, 3)

    def run(p, b, x):
        return ff.functional_call(base, (p, b), (x,))

    out = ff.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="same class"):
        ff.stack_module_state([flow.nn.Linear(3, 2), flow.nn.Conv1d(1, 1, 1)])


def test_flow_vmap_alias():
    assert flow.vmap is ff.vmap
