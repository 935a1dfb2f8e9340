"""torch._foreach_* (flow._foreach_*): every name torch 1.13 has, against it, with scalar, scalar
list, tensor list (and one tensor) operands; in-place forms return None and write every tensor;
the 2.x additions (lerp, pow, clamp_min/max, sign, copy_) against the single-tensor ops."""
import numpy as np
import pytest
import torch

import oneflow_like as flow


def lists(seed=0, n=3, positive=False):
    rng = np.random.default_rng(seed)
    arrs = [
        rng.uniform(0.2, 0.9, (2, k + 1)) if positive else rng.standard_normal((2, k + 1))
        for k in range(n)
    ]
    return [flow.tensor(a) for a in arrs], [torch.tensor(a) for a in arrs]


def close(fs, ts):
    assert len(fs) == len(ts)
    for f, t in zip(fs, ts):
        np.testing.assert_allclose(f.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


TORCH_NAMES = sorted(n for n in dir(torch) if n.startswith("_foreach"))


def test_every_torch_name_exists():
    missing = [n for n in TORCH_NAMES if not hasattr(flow, n)]
    assert not missing


UNARY = sorted(
    {n[len("_foreach_") :].rstrip("_") for n in TORCH_NAMES}
    - {"add", "sub", "mul", "div", "addcmul", "addcdiv", "maximum", "minimum", "norm", "zero"}
)


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    positive = name in ("acos", "asin", "log", "log10", "log1p", "log2", "sqrt", "lgamma")
    xf, xt = lists(1, positive=positive)
    close(getattr(flow, "_foreach_" + name)(xf), getattr(torch, "_foreach_" + name)(xt))
    assert getattr(flow, "_foreach_" + name + "_")(xf) is None
    getattr(torch, "_foreach_" + name + "_")(xt)
    close(xf, xt)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_binary_with_every_operand_kind(name):
    xf, xt = lists(2)
    yf, yt = lists(3, positive=True)
    operands = [(yf, yt)]
    if name in ("add", "sub", "mul", "div"):
        operands += [(0.5, 0.5), ([0.5, 2.0, -1.0], [0.5, 2.0, -1.0])]
    for of, ot in operands:
        close(getattr(flow, "_foreach_" + name)(xf, of), getattr(torch, "_foreach_" + name)(xt, ot))
    if name in ("add", "sub"):
        close(
            getattr(flow, "_foreach_" + name)(xf, yf, alpha=3.0),
            getattr(torch, "_foreach_" + name)(xt, yt, alpha=3.0),
        )
        assert getattr(flow, "_foreach_" + name + "_")(xf, yf, alpha=2.0) is None
        getattr(torch, "_foreach_" + name + "_")(xt, yt, alpha=2.0)
        close(xf, xt)
    else:
        getattr(flow, "_foreach_" + name + "_")(xf, yf)
        getattr(torch, "_foreach_" + name + "_")(xt, yt)
        close(xf, xt)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_pointwise(name):
    xf, xt = lists(4)
    af, at = lists(5)
    bf, bt = lists(6, positive=True)
    for vf, vt in ((1, 1), (0.3, 0.3), ([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])):
        close(
            getattr(flow, "_foreach_" + name)(xf, af, bf, vf),
            getattr(torch, "_foreach_" + name)(xt, at, bt, vt),
        )
    getattr(flow, "_foreach_" + name + "_")(xf, af, bf, 0.5)
    getattr(torch, "_foreach_" + name + "_")(xt, at, bt, 0.5)
    close(xf, xt)


def test_norm_zero_and_the_2x_additions():
    xf, xt = lists(7)
    close(flow._foreach_norm(xf), torch._foreach_norm(xt))
    close(flow._foreach_norm(xf, 1), torch._foreach_norm(xt, 1))
    ef, _ = lists(8)
    expect = [x + 0.25 * (e - x) for x, e in zip(xf, ef)]
    close(flow._foreach_lerp(xf, ef, 0.25), expect)
    close(flow._foreach_pow(xf, 2), [x * x for x in xf])
    close(flow._foreach_clamp_min(xf, 0.0), [x.clamp(min=0.0) for x in xf])
    close(flow._foreach_clamp_max(xf, 0.0), [x.clamp(max=0.0) for x in xf])
    close(flow._foreach_sign(xf), [x.sign() for x in xf])
    flow._foreach_lerp_(xf, ef, 1.0)
    close(xf, ef)
    flow._foreach_copy_(xf, [e * 2 for e in ef])
    close(xf, [e * 2 for e in ef])
    flow._foreach_zero_(xf)
    assert all(float(x.abs().sum()) == 0 for x in xf)


def test_ema_update_as_libraries_write_it_and_errors():
    ema = [flow.ones(3), flow.ones(2)]
    params = [flow.full((3,), 3.0), flow.full((2,), 5.0)]
    with flow.no_grad():
        flow._foreach_mul_(ema, 0.9)
        flow._foreach_add_(ema, params, alpha=0.1)
    np.testing.assert_allclose(ema[0].numpy(), 0.9 + 0.3, rtol=1e-6)
    np.testing.assert_allclose(ema[1].numpy(), 0.9 + 0.5, rtol=1e-6)
    with pytest.raises(RuntimeError, match="same number of tensors"):
        flow._foreach_add(ema, [flow.ones(3)])
    with pytest.raises(TypeError, match="entry 1 is int"):
        flow._foreach_exp([flow.ones(1), 3])
    with pytest.raises(TypeError, match="unexpected keyword"):
        flow._foreach_mul(ema, 2.0, alpha=2)
