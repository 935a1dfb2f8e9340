"""The activation family as modules and functions, against PyTorch in float64 (forward and input
gradient, and parameters for PReLU), plus the aliases of the new table ops."""
import numpy as np
import pytest
import torch

import oneflow_like as flow
import oneflow_like.nn.functional as F

RNG = np.random.default_rng(0)

MODULES = [
    ("ELU", (), {"alpha": 0.7}),
    ("CELU", (1.5,), {}),
    ("SELU", (), {}),
    ("GLU", (), {"dim": 1}),
    ("Hardshrink", (0.3,), {}),
    ("Softshrink", (), {"lambd": 0.3}),
    ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}),
    ("Hardtanh", (-0.5, 0.5), {}),
    ("ReLU6", (), {}),
    ("LogSigmoid", (), {}),
    ("Mish", (), {}),
    ("Softplus", (), {"beta": 2.0, "threshold": 3.0}),
    ("Softsign", (), {}),
    ("Tanhshrink", (), {}),
    ("Threshold", (0.1, -2.0), {}),
    ("Softmin", (), {"dim": 1}),
    ("Softmax2d", (), {}),
    ("RReLU", (), {}),  # eval mode: the mean slope
    ("PReLU", (), {"num_parameters": 4}),
]


def sample(shape):
    """Values away from the kinks at 0, +-0.3, +-0.5, 0.1, +-3, 6."""
    x = RNG.uniform(-4, 7, size=shape)
    for k in (0.0, 0.3, -0.3, 0.5, -0.5, 0.1, 3.0, -3.0, 6.0):
        near = np.abs(x - k) < 0.02
        x[near] += 0.05
    return x


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, args, kw):
    tm = getattr(torch.nn, name)(*args, **kw).double().eval()
    fm = getattr(flow.nn, name)(*args, **kw).eval()
    if name == "PReLU":
        fm = fm.to(flow.float64)
        w = RNG.uniform(0.1, 0.5, size=4)
        tm.weight.data = torch.tensor(w)
        fm.weight.data = flow.tensor(w)
    x = sample((2, 4, 3, 2))
    xt, xf = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
    ot, of = tm(xt), fm(xf)
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=1e-10, atol=1e-12)
    up = RNG.uniform(-1, 1, size=tuple(ot.shape))
    (ot * torch.tensor(up)).sum().backward()
    (of * flow.tensor(up)).sum().backward()
    # PyTorch's hardsigmoid gradient multiplies by a float32 1/6 even in float64.
    rtol = 1e-7 if name == "Hardsigmoid" else 1e-9
    np.testing.assert_allclose(
        xf.grad.detach().numpy(), xt.grad.detach().numpy(), rtol=rtol, atol=1e-12
    )
    if name == "PReLU":
        np.testing.assert_allclose(
            fm.weight.grad.detach().numpy(), tm.weight.grad.detach().numpy(), rtol=1e-9
        )
    assert repr(fm).startswith(name)


def test_functional_forms_and_inplace():
    x = flow.tensor([-2.0, -0.2, 0.4, 5.0])
    np.testing.assert_allclose(
        F.normalize(x.reshape(2, 2), dim=1).detach().numpy(),
        torch.nn.functional.normalize(torch.tensor([[-2.0, -0.2], [0.4, 5.0]]), dim=1)
        .detach()
        .numpy(),
        rtol=1e-6,
    )
    y = x.clone()
    assert F.hardswish(y, inplace=True) is y
    np.testing.assert_allclose(y.detach().numpy(), F.hardswish(x).detach().numpy())
    rr = F.rrelu(flow.full((1000,), -1.0), training=True).detach().numpy()
    assert ((rr >= -1 / 3) & (rr <= -1 / 8)).all() and rr.std() > 0.01
    with pytest.raises(RuntimeError, match="halving dimension must be even"):
        F.glu(flow.ones(3, 5))


def test_required_constructor_arguments():
    with pytest.raises(TypeError, match=r"Threshold missing required arguments: \['value'\]"):
        flow.nn.Threshold(0.1)


def test_aliases():
    x = flow.tensor([0.25, -0.5])
    np.testing.assert_array_equal(flow.arcsin(x).detach().numpy(), flow.asin(x).detach().numpy())
    np.testing.assert_array_equal(x.arctanh().detach().numpy(), flow.atanh(x).detach().numpy())
    np.testing.assert_array_equal(flow.fix(flow.tensor([-1.5, 1.5])).detach().numpy(), [-1.0, 1.0])
    y = x.clone()
    y.arccos_()
    np.testing.assert_allclose(y.detach().numpy(), np.arccos([0.25, -0.5]), rtol=1e-6)
