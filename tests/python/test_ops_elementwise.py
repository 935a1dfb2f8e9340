"""Elementwise families (unary, binary, ternary): every op forward (f32 and f64 against a float64
NumPy reference) and backward (against numerical gradients in float64), plus integer/bool
behaviour, broadcasting, scalar fusion, in-place semantics and error messages."""
import math

import numpy as np
import pytest

import oneflow_like as flow
from op_testing import RNG, check_forward, check_op, rand

_erf = np.vectorize(math.erf)


def away(shape, low=-2.0, high=2.0, points=(0.0,), margin=0.05):
    """Uniform samples kept `margin` away from the non-differentiable `points`."""
    x = rand(shape, low, high)
    for p in points:
        near = np.abs(x - p) < margin
        x[near] = p + np.where(x[near] >= p, margin, -margin) * 2
    return x


def np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def np_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_logit(x, eps=None):
    z = x if eps is None else np.clip(x, eps, 1 - eps)
    return np.log(z / (1 - z))


def torch_special(name):
    """A float64 reference from PyTorch (Debian python3-torch) for functions NumPy lacks."""

    def ref(x):
        import torch

        return getattr(torch.special, name)(torch.tensor(x, dtype=torch.float64)).numpy()

    return ref


# (id, op, reference, input sampler)
UNARY = [
    ("neg", flow.neg, np.negative, lambda s: rand(s)),
    ("abs", flow.abs, np.abs, lambda s: away(s)),
    ("exp", flow.exp, np.exp, lambda s: rand(s)),
    ("log", flow.log, np.log, lambda s: rand(s, 0.2, 3.0)),
    ("log1p", flow.log1p, np.log1p, lambda s: rand(s, -0.5, 2.0)),
    ("sqrt", flow.sqrt, np.sqrt, lambda s: rand(s, 0.2, 3.0)),
    ("rsqrt", flow.rsqrt, lambda x: 1 / np.sqrt(x), lambda s: rand(s, 0.2, 3.0)),
    ("sin", flow.sin, np.sin, lambda s: rand(s, -3, 3)),
    ("cos", flow.cos, np.cos, lambda s: rand(s, -3, 3)),
    ("tanh", flow.tanh, np.tanh, lambda s: rand(s, -3, 3)),
    ("sigmoid", flow.sigmoid, sigmoid, lambda s: rand(s, -5, 5)),
    ("relu", flow.relu, lambda x: np.maximum(x, 0), lambda s: away(s)),
    ("gelu", flow.gelu, np_gelu, lambda s: rand(s, -3, 3)),
    (
        "gelu_tanh",
        lambda x: flow.gelu(x, approximate="tanh"),
        lambda x: np_gelu(x, "tanh"),
        lambda s: rand(s, -3, 3),
    ),
    ("silu", flow.silu, lambda x: x * sigmoid(x), lambda s: rand(s, -4, 4)),
    ("softplus", flow.softplus, np_softplus, lambda s: rand(s, -4, 4)),
    (
        "softplus_beta",
        lambda x: flow.softplus(x, beta=2.0, threshold=3.0),
        lambda x: np_softplus(x, 2.0, 3.0),
        lambda s: away(s, -3, 3, points=(1.5,)),
    ),
    ("erf", flow.erf, _erf, lambda s: rand(s, -2, 2)),
    ("reciprocal", flow.reciprocal, lambda x: 1 / x, lambda s: away(s, points=(0.0,), margin=0.2)),
    ("square", flow.square, np.square, lambda s: rand(s)),
    ("pow2", lambda x: x**2, lambda x: x**2, lambda s: rand(s)),
    ("pow3", lambda x: flow.pow(x, 3), lambda x: x**3, lambda s: rand(s)),
    ("pow_half", lambda x: x.pow(0.5), np.sqrt, lambda s: rand(s, 0.2, 3.0)),
    ("pow_neg", lambda x: x**-1.5, lambda x: x**-1.5, lambda s: rand(s, 0.3, 3.0)),
    ("pow_frac", lambda x: x**2.7, lambda x: x**2.7, lambda s: rand(s, 0.3, 3.0)),
    ("rpow", lambda x: 2.5**x, lambda x: 2.5**x, lambda s: rand(s)),
    (
        "leaky_relu",
        lambda x: flow.leaky_relu(x, 0.2),
        lambda x: np.where(x > 0, x, 0.2 * x),
        lambda s: away(s),
    ),
    (
        "elu",
        lambda x: flow.elu(x, alpha=1.5),
        lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)),
        lambda s: away(s),
    ),
    ("tan", flow.tan, np.tan, lambda s: rand(s, -1.2, 1.2)),
    ("asin", flow.asin, np.arcsin, lambda s: rand(s, -0.9, 0.9)),
    ("acos", flow.acos, np.arccos, lambda s: rand(s, -0.9, 0.9)),
    ("atan", flow.atan, np.arctan, lambda s: rand(s, -3, 3)),
    ("sinh", flow.sinh, np.sinh, lambda s: rand(s, -3, 3)),
    ("cosh", flow.cosh, np.cosh, lambda s: rand(s, -3, 3)),
    ("asinh", flow.asinh, np.arcsinh, lambda s: rand(s, -3, 3)),
    ("acosh", flow.acosh, np.arccosh, lambda s: rand(s, 1.2, 4)),
    ("atanh", flow.atanh, np.arctanh, lambda s: rand(s, -0.9, 0.9)),
    ("expm1", flow.expm1, np.expm1, lambda s: rand(s, -2, 2)),
    ("exp2", flow.exp2, np.exp2, lambda s: rand(s, -2, 2)),
    ("log2", flow.log2, np.log2, lambda s: rand(s, 0.2, 3.0)),
    ("log10", flow.log10, np.log10, lambda s: rand(s, 0.2, 3.0)),
    ("erfc", flow.erfc, lambda x: 1 - _erf(x), lambda s: rand(s, -2, 2)),
    ("mish", flow.mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), lambda s: rand(s, -4, 4)),
    (
        "trunc_frac",
        flow.frac,
        lambda x: x - np.trunc(x),
        lambda s: away(s, -3, 3, (-2.0, -1.0, 0.0, 1.0, 2.0)),
    ),
    (
        "hardsigmoid",
        flow.hardsigmoid,
        lambda x: np.clip(x + 3, 0, 6) / 6,
        lambda s: away(s, -5, 5, points=(-3.0, 3.0)),
    ),
    (
        "hardswish",
        flow.hardswish,
        lambda x: x * np.clip(x + 3, 0, 6) / 6,
        lambda s: away(s, -5, 5, points=(-3.0, 3.0)),
    ),
    ("softsign", flow.softsign, lambda x: x / (1 + np.abs(x)), lambda s: away(s)),
    ("tanhshrink", flow.tanhshrink, lambda x: x - np.tanh(x), lambda s: rand(s, -3, 3)),
    (
        "hardshrink",
        lambda x: flow.hardshrink(x, 0.3),
        lambda x: np.where(np.abs(x) > 0.3, x, 0),
        lambda s: away(s, points=(-0.3, 0.3)),
    ),
    (
        "softshrink",
        lambda x: x.softshrink(lambd=0.3),
        lambda x: np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0)),
        lambda s: away(s, points=(-0.3, 0.3)),
    ),
    ("logit", flow.logit, np_logit, lambda s: rand(s, 0.05, 0.95)),
    (
        "logit_eps",
        lambda x: x.logit(eps=0.2),
        lambda x: np_logit(x, 0.2),
        lambda s: away(s, 0.0, 1.0, points=(0.2, 0.8)),
    ),
    ("lgamma", flow.lgamma, np.vectorize(math.lgamma), lambda s: away(s, -3.5, 6, (-3, -2, -1, 0))),
    ("digamma", flow.digamma, torch_special("digamma"), lambda s: away(s, -2.5, 12, (-2, -1, 0))),
    ("erfinv", flow.erfinv, torch_special("erfinv"), lambda s: rand(s, -0.95, 0.95)),
    ("i0", flow.i0, torch_special("i0"), lambda s: rand(s, -4, 4)),
    ("special_i0e", flow.special.i0e, torch_special("i0e"), lambda s: away(s, -4, 4)),
    ("special_i1", flow.special.i1, torch_special("i1"), lambda s: rand(s, -4, 4)),
    ("special_i1e", flow.special.i1e, torch_special("i1e"), lambda s: away(s, -4, 4)),
    ("special_ndtri", flow.special.ndtri, torch_special("ndtri"), lambda s: rand(s, 0.02, 0.98)),
    (
        "special_log_ndtr",
        flow.special.log_ndtr,
        torch_special("log_ndtr"),
        lambda s: rand(s, -8, 4),
    ),
    ("special_erfcx", flow.special.erfcx, torch_special("erfcx"), lambda s: rand(s, -1.5, 6)),
    ("hardtanh", flow.hardtanh, lambda x: np.clip(x, -1, 1), lambda s: away(s, points=(-1.0, 1.0))),
    ("relu6", flow.relu6, lambda x: np.clip(x, 0, 6), lambda s: away(s, -2, 8, points=(0.0, 6.0))),
    (
        "clamp",
        lambda x: flow.clamp(x, -0.5, 0.5),
        lambda x: np.clip(x, -0.5, 0.5),
        lambda s: away(s, points=(-0.5, 0.5)),
    ),
    (
        "clamp_min",
        lambda x: x.clamp(min=0.3),
        lambda x: np.maximum(x, 0.3),
        lambda s: away(s, points=(0.3,)),
    ),
    (
        "clamp_max",
        lambda x: flow.clamp_max(x, 0.3),
        lambda x: np.minimum(x, 0.3),
        lambda s: away(s, points=(0.3,)),
    ),
    (
        "clip",
        lambda x: x.clip(-0.5, None),
        lambda x: np.maximum(x, -0.5),
        lambda s: away(s, points=(-0.5,)),
    ),
]


@pytest.mark.parametrize("name,fn,ref,sample", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, fn, ref, sample):
    check_op(fn, ref, [sample((3, 4))])


@pytest.mark.parametrize("name,fn,ref,sample", UNARY, ids=[u[0] for u in UNARY])
def test_unary_strided_and_empty(name, fn, ref, sample):
    # A transposed (non-contiguous) input and an empty one.
    x = sample((4, 3))
    check_forward(
        lambda t: fn(t.transpose(0, 1)),
        lambda a: ref(a.T),
        [x],
        dtype=flow.float64,
        atol=1e-10,
        rtol=1e-10,
    )
    assert tuple(fn(flow.zeros(0, 3)).shape) == (0, 3)


def test_unary_methods():
    x = flow.tensor(rand((5,), 0.2, 2.0))
    a = x.numpy()
    for name, ref in [
        ("exp", np.exp),
        ("log", np.log),
        ("sqrt", np.sqrt),
        ("sigmoid", sigmoid),
        ("tanh", np.tanh),
        ("neg", np.negative),
        ("abs", np.abs),
        ("reciprocal", np.reciprocal),
        ("rsqrt", lambda v: v**-0.5),
    ]:
        np.testing.assert_allclose(getattr(x, name)().numpy(), ref(a), rtol=1e-6, err_msg=name)
    np.testing.assert_allclose((-x).numpy(), -a)
    np.testing.assert_allclose(abs(-x).numpy(), a)


@pytest.mark.parametrize("dtype", [flow.float32, flow.float64, flow.int32, flow.int64])
def test_rounding_and_sign(dtype):
    a = np.array([-2.5, -1.5, -0.4, 0.0, 0.5, 1.5, 2.6, 3.0])
    if not dtype.is_floating_point:
        a = np.array([-7, -1, 0, 3, 9])
    x = flow.tensor(a, dtype=dtype)
    for fn, ref in [
        (flow.floor, np.floor),
        (flow.ceil, np.ceil),
        (flow.round, np.round),
        (flow.sign, np.sign),
        (flow.trunc, np.trunc),
        (flow.fix, np.trunc),
    ]:
        y = fn(x)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y.numpy(), ref(a).astype(y.numpy().dtype))


def test_non_differentiable_outputs_do_not_require_grad():
    x = flow.tensor(rand((3,)), requires_grad=True)
    for y in [
        flow.sign(x),
        flow.floor(x),
        flow.ceil(x),
        flow.round(x),
        x > 0,
        x == x,
        flow.logical_not(x),
        x // 1.0,
    ]:
        assert not y.requires_grad


@pytest.mark.parametrize("dtype", [flow.int32, flow.int64, flow.int8])
def test_unary_integer(dtype):
    a = np.array([-3, -1, 0, 2, 5])
    x = flow.tensor(a, dtype=dtype)
    for fn, ref in [
        (flow.neg, np.negative),
        (flow.abs, np.abs),
        (flow.relu, lambda v: np.maximum(v, 0)),
        (flow.square, np.square),
        (lambda t: t**3, lambda v: v**3),
        (lambda t: flow.clamp(t, -1, 2), lambda v: np.clip(v, -1, 2)),
    ]:
        y = fn(x)
        assert y.dtype == dtype
        np.testing.assert_array_equal(y.numpy(), ref(a))
    assert (x**0.5).dtype == flow.float32  # fractional exponent -> float
    assert flow.clamp(x, 0.5).dtype == flow.float32
    np.testing.assert_array_equal((2 ** flow.tensor([0, 1, 3])).numpy(), [1, 2, 8])


def test_angle_of_real_tensors():
    # torch.angle on real input: pi below zero, 0 elsewhere (-0.0 included), NaN kept; integers
    # give float32. Eager and nn.Graph (the formula lowers to HLO) agree.
    import torch

    a = np.array([-2.5, -0.0, 0.0, 3.0, np.nan, -np.inf, np.inf])
    for dt in (flow.float32, flow.float64):
        y = flow.angle(flow.tensor(a, dtype=dt))
        assert y.dtype == dt
        want = torch.angle(torch.tensor(a, dtype=getattr(torch, str(dt).split(".")[-1])))
        np.testing.assert_array_equal(y.numpy(), want.numpy())
    i = flow.tensor([-3, 0, 4]).angle()
    assert i.dtype == flow.float32
    np.testing.assert_allclose(i.numpy(), [np.pi, 0, 0], rtol=1e-7)
    check_forward(
        flow.angle, lambda v: np.angle(v), [rand((3, 4))], dtype=flow.float64, atol=0, rtol=0
    )

    class AngleGraph(flow.nn.Graph):
        def build(self, x):
            return flow.angle(x) * x

    x = flow.tensor(rand((5, 3)))
    np.testing.assert_array_equal(AngleGraph()(x).numpy(), (flow.angle(x) * x).numpy())


@pytest.mark.parametrize("dtype", [flow.int32, flow.int64, flow.uint8, flow.bool])
def test_float_math_functions_promote_integers(dtype):
    # As in PyTorch, the float-only math functions take integer and bool tensors and compute them
    # in float32; their in-place forms keep rejecting them.
    import torch

    a = np.array([0, 1, 2, 5]) if dtype != flow.bool else np.array([True, False, True, True])
    x = flow.tensor(a, dtype=dtype)
    t = torch.tensor(a)
    for name in [
        "exp",
        "log",
        "sqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "erf",
        "rsqrt",
        "log1p",
        "expm1",
        "atan",
        "reciprocal",
        "lgamma",
        "digamma",
        "angle",
        "erfinv",
        "i0",
    ]:
        y = getattr(flow, name)(x)
        want = getattr(torch, name)(t)
        assert y.dtype == flow.float32, name
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=2e-6, atol=1e-7, err_msg=name)
    with pytest.raises(TypeError, match=r"\[exp_\] expected a floating point tensor"):
        x.clone().exp_()


def test_float_math_functions_follow_the_default_dtype_for_integers():
    flow.set_default_dtype(flow.float64)
    try:
        x = flow.tensor([1, 2])
        for y in (flow.sin(x), x.exp(), flow._C._special.special_i1(x), flow.logit(x)):
            assert y.dtype == flow.float64
        np.testing.assert_allclose(flow.sin(x).numpy(), np.sin([1.0, 2.0]), rtol=1e-15)
    finally:
        flow.set_default_dtype(flow.float32)
    assert flow.sin(flow.tensor([1, 2])).dtype == flow.float32


def test_half_precision_unary():
    for dt in (flow.float16, flow.bfloat16):
        x = flow.tensor([0.5, -1.0, 2.0], dtype=dt)
        y = x.exp()
        assert y.dtype == dt
        np.testing.assert_allclose(
            y.numpy().astype(np.float32), np.exp([0.5, -1.0, 2.0]), rtol=1e-2
        )


# ---- binary ----

BROADCAST = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((), (2, 2)), ((2, 2), ())]


@pytest.mark.parametrize("shapes", BROADCAST)
def test_pow_tensor(shapes):
    a, b = rand(shapes[0], 0.5, 2.0), rand(shapes[1], -1.5, 2.0)
    check_op(flow.pow, np.power, [a, b])
    check_op(lambda x, y: x**y, np.power, [a, b])


@pytest.mark.parametrize("shapes", BROADCAST)
@pytest.mark.parametrize("name,ref", [("maximum", np.maximum), ("minimum", np.minimum)])
def test_maximum_minimum(name, ref, shapes):
    check_op(
        getattr(flow, name), ref, [rand(shapes[0]), rand(shapes[1])]
    )  # ties have probability zero


def test_maximum_ties_split_gradient_and_nan():
    a = flow.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = flow.tensor([1.0, 5.0, 0.0], requires_grad=True)
    flow.maximum(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 0, 1])
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 1, 0])
    m = flow.maximum(flow.tensor([np.nan, 1.0]), flow.tensor([0.0, np.nan])).numpy()
    assert np.isnan(m).all()
    np.testing.assert_array_equal(
        flow.maximum(flow.tensor([1, 5]), flow.tensor([3, 2])).numpy(), [3, 5]
    )


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 2), ())])
@pytest.mark.parametrize("name,ref", [("remainder", np.remainder), ("fmod", np.fmod)])
def test_remainder_fmod(name, ref, shapes):
    b = np.asarray(rand(shapes[1], 0.7, 1.9) * np.where(rand(shapes[1]) > 0, 1, -1))
    # a / b stays away from integers, where the result jumps
    q = RNG.integers(-4, 4, size=shapes[0]) + rand(shapes[0], 0.1, 0.9)
    a = q * b
    check_op(getattr(flow, name), ref, [a, b])
    check_forward(lambda x, y: x % y if name == "remainder" else flow.fmod(x, y), ref, [a, b])


def test_remainder_grad():
    a = np.array([[2.3, -3.7, 4.1], [0.4, -0.2, 5.6]])
    b = np.array([1.1, -0.9, 1.7])
    check_op(flow.remainder, np.remainder, [a, b])
    check_op(flow.fmod, np.fmod, [a, b])


@pytest.mark.parametrize("dtype", [flow.int32, flow.int64, flow.float32, flow.float64])
def test_integer_division_semantics(dtype):
    a = np.array([7, -7, 7, -7, 0, 9])
    b = np.array([2, 2, -2, -2, 3, -4])
    x, y = flow.tensor(a, dtype=dtype), flow.tensor(b, dtype=dtype)
    np.testing.assert_array_equal((x // y).numpy(), a // b)
    np.testing.assert_array_equal((x % y).numpy(), np.remainder(a, b))
    np.testing.assert_array_equal(flow.fmod(x, y).numpy(), np.fmod(a, b))
    np.testing.assert_array_equal((x // 2).numpy(), a // 2)
    np.testing.assert_array_equal((x % 3).numpy(), a % 3)
    np.testing.assert_array_equal((17 // y).numpy(), 17 // b)
    assert (x // y).dtype == dtype


def test_integer_division_by_zero_fails_cleanly():
    x = flow.tensor([1, 2, 3])
    with pytest.raises(Exception, match=r"floor_divide.*division by zero"):
        (x // flow.tensor([1, 0, 1])).numpy()
    with pytest.raises(Exception, match=r"remainder.*division by zero"):
        (x % 0).numpy()
    flow.sync()  # both errors were raised by the reads above: a sync does not raise them again
    # the process survives and keeps working
    np.testing.assert_array_equal((x // 1).numpy(), [1, 2, 3])
    i64min = flow.tensor([np.iinfo(np.int64).min])
    assert (i64min // -1).numpy()[0] == np.iinfo(np.int64).min  # wraps, no SIGFPE


# ---- the binary table's rows ----
# One row per entry of oneflow_like/opdefs/binary.def (test_op_tables checks that): (id, op,
# reference, input sampler (shapes -> arrays), differentiable). Differentiable rows run forward
# (f32 and f64), backward against numerical gradients and eager == lazy; the others forward and
# eager == lazy. Integer/bool behaviour, promotion and errors have their own tests below.


def np_xlogy(a, b):
    return np.where((a == 0) & ~np.isnan(b), 0.0, a * np.log(np.where(a == 0, 1.0, b)))


def _scipy(name):  # SciPy's float64 function (python3-scipy)
    def fn(a, b):
        from scipy import special

        return getattr(special, name)(a, b)

    return fn


def _poly_ref(name):  # SciPy's eval_<poly>(n, x), arguments swapped to (x, n)
    def fn(x, n):
        from scipy import special

        return getattr(special, name)(n.astype(np.int64), x)

    return fn


def _torch_poly(name):  # torch.special's float64 (SciPy has no Chebyshev V/W)
    def fn(x, n):
        import torch

        return getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()

    return fn


def _degree(sa, sb):  # x in [-1.2, 1.2], integer degrees 0..9 as floats
    return [rand(sa, -1.2, 1.2), RNG.integers(0, 10, size=sb).astype(np.float64)]


def _pair(lo_a=-1.0, hi_a=1.0, lo_b=-1.0, hi_b=1.0):
    return lambda sa, sb: [rand(sa, lo_a, hi_a), rand(sb, lo_b, hi_b)]


def _nonzero(shape, lo=0.5, hi=2.0):
    return rand(shape, lo, hi) * np.where(rand(shape) > 0, 1, -1)


def _grid(sa, sb):  # small integers as floats: comparisons and floor_divide hit ties
    return [RNG.integers(-3, 4, size=sa).astype(np.float64), _nonzero_int(sb)]


def _nonzero_int(shape):
    return (RNG.integers(1, 4, size=shape) * np.where(rand(shape) > 0, 1, -1)).astype(np.float64)


def _away_from_integers(sa, sb):  # a / b stays away from integers, where the result jumps
    b = _nonzero(sb, 0.7, 1.9)
    return [(RNG.integers(-4, 4, size=sa) + rand(sa, 0.1, 0.9)) * b, b]


def _one(fn, lo=-1.0, hi=1.0):
    return lambda sa, sb: [fn(sa) if fn else rand(sa, lo, hi)]


def _small_ints(shape):
    return RNG.integers(-3, 4, size=shape).astype(np.float64)


BINARY = [
    ("add", lambda x, y: flow.add(x, y, alpha=0.5), lambda a, b: a + 0.5 * b, _pair(), True),
    ("sub", lambda x, y: flow.sub(x, y, alpha=2.0), lambda a, b: a - 2.0 * b, _pair(), True),
    ("mul", flow.mul, np.multiply, _pair(), True),
    ("div", flow.div, np.divide, lambda sa, sb: [rand(sa), _nonzero(sb)], True),
    ("pow", flow.pow, np.power, _pair(0.5, 2.0, -1.5, 2.0), True),
    ("maximum", flow.maximum, np.maximum, _pair(), True),  # ties have probability zero
    ("minimum", flow.minimum, np.minimum, _pair(), True),
    ("floor_divide", flow.floor_divide, np.floor_divide, _grid, False),
    ("remainder", flow.remainder, np.remainder, _away_from_integers, True),
    ("fmod", flow.fmod, np.fmod, _away_from_integers, True),
    ("eq", flow.eq, np.equal, _grid, False),
    ("ne", flow.ne, np.not_equal, _grid, False),
    ("lt", flow.lt, np.less, _grid, False),
    ("le", flow.le, np.less_equal, _grid, False),
    ("gt", flow.gt, np.greater, _grid, False),
    ("ge", flow.ge, np.greater_equal, _grid, False),
    ("logical_and", flow.logical_and, np.logical_and, _grid, False),
    ("logical_or", flow.logical_or, np.logical_or, _grid, False),
    ("logical_xor", flow.logical_xor, np.logical_xor, _grid, False),
    # bitwise ops take bool/integer tensors only: test_logical_and_bitwise and the integer rows
    ("xlogy", flow.xlogy, np_xlogy, _pair(-2.0, 2.0, 0.2, 3.0), True),
    # gradients (x only) and edges: test_special
    ("igamma", flow.igamma, _scipy("gammainc"), _pair(0.2, 4.0, 0.0, 6.0), False),
    ("igammac", flow.igammac, _scipy("gammaincc"), _pair(0.2, 4.0, 0.0, 6.0), False),
    (
        "special_zeta",
        flow._C._special.special_zeta,
        _scipy("zeta"),
        _pair(1.2, 5.0, 0.2, 3.0),
        False,
    ),
    # the orthogonal polynomials p_n(x) (x, then the degree n); SciPy's eval_* or torch's
    (
        "special_chebyshev_polynomial_t",
        flow._C._special.special_chebyshev_polynomial_t,
        _poly_ref("eval_chebyt"),
        _degree,
        False,
    ),
    (
        "special_chebyshev_polynomial_u",
        flow._C._special.special_chebyshev_polynomial_u,
        _poly_ref("eval_chebyu"),
        _degree,
        False,
    ),
    (
        "special_chebyshev_polynomial_v",
        flow._C._special.special_chebyshev_polynomial_v,
        _torch_poly("chebyshev_polynomial_v"),
        _degree,
        False,
    ),
    (
        "special_chebyshev_polynomial_w",
        flow._C._special.special_chebyshev_polynomial_w,
        _torch_poly("chebyshev_polynomial_w"),
        _degree,
        False,
    ),
    (
        "special_hermite_polynomial_h",
        flow._C._special.special_hermite_polynomial_h,
        _poly_ref("eval_hermite"),
        _degree,
        False,
    ),
    (
        "special_hermite_polynomial_he",
        flow._C._special.special_hermite_polynomial_he,
        _poly_ref("eval_hermitenorm"),
        _degree,
        False,
    ),
    (
        "special_laguerre_polynomial_l",
        flow._C._special.special_laguerre_polynomial_l,
        _poly_ref("eval_laguerre"),
        _degree,
        False,
    ),
    (
        "special_legendre_polynomial_p",
        flow._C._special.special_legendre_polynomial_p,
        _poly_ref("eval_legendre"),
        _degree,
        False,
    ),
    (
        "special_shifted_chebyshev_polynomial_t",
        flow._C._special.special_shifted_chebyshev_polynomial_t,
        _poly_ref("eval_sh_chebyt"),
        _degree,
        False,
    ),
    (
        "special_shifted_chebyshev_polynomial_u",
        flow._C._special.special_shifted_chebyshev_polynomial_u,
        _poly_ref("eval_sh_chebyu"),
        _degree,
        False,
    ),
    (
        "special_shifted_chebyshev_polynomial_v",
        flow._C._special.special_shifted_chebyshev_polynomial_v,
        _torch_poly("shifted_chebyshev_polynomial_v"),
        _degree,
        False,
    ),
    (
        "special_shifted_chebyshev_polynomial_w",
        flow._C._special.special_shifted_chebyshev_polynomial_w,
        _torch_poly("shifted_chebyshev_polynomial_w"),
        _degree,
        False,
    ),
    ("add_scalar", lambda x: x + 1.5, lambda a: a + 1.5, _one(None), True),
    ("mul_scalar", lambda x: x * 2.5, lambda a: a * 2.5, _one(None), True),
    ("rsub_scalar", lambda x: 1.5 - x, lambda a: 1.5 - a, _one(None), True),
    ("rdiv_scalar", lambda x: 2.0 / x, lambda a: 2.0 / a, _one(_nonzero), True),
    ("eq_scalar", lambda x: x == 1.0, lambda a: a == 1.0, _one(_small_ints), False),
    ("ne_scalar", lambda x: x != 1.0, lambda a: a != 1.0, _one(_small_ints), False),
    ("lt_scalar", lambda x: x < 1.0, lambda a: a < 1.0, _one(_small_ints), False),
    ("le_scalar", lambda x: x <= 1.0, lambda a: a <= 1.0, _one(_small_ints), False),
    ("gt_scalar", lambda x: x > 1.0, lambda a: a > 1.0, _one(_small_ints), False),
    ("ge_scalar", lambda x: x >= 1.0, lambda a: a >= 1.0, _one(_small_ints), False),
]
# Integer-only rows: (id, op, reference), on int64 with broadcasting.
BINARY_INT = [
    ("bitwise_and", flow.bitwise_and, np.bitwise_and),
    ("bitwise_or", flow.bitwise_or, np.bitwise_or),
    ("bitwise_xor", flow.bitwise_xor, np.bitwise_xor),
    ("floor_divide", flow.floor_divide, np.floor_divide),
    ("remainder", flow.remainder, np.remainder),
    ("fmod", flow.fmod, np.fmod),
    ("pow", flow.pow, np.power),
    ("maximum", flow.maximum, np.maximum),
    ("minimum", flow.minimum, np.minimum),
]


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5))])
@pytest.mark.parametrize("name,fn,ref,sample,grad", BINARY, ids=[r[0] for r in BINARY])
def test_binary(name, fn, ref, sample, grad, shapes):
    arrays = sample(*shapes)
    check_op(fn, ref, arrays, backward=grad)


@pytest.mark.parametrize("name,fn,ref", BINARY_INT, ids=[r[0] for r in BINARY_INT])
def test_binary_integer(name, fn, ref):
    a = RNG.integers(-20, 20, size=(3, 4))
    b = RNG.integers(1, 5, size=(4,)) * np.array([1, -1, 1, -1])
    if name == "pow":
        a, b = a % 5, np.abs(b)
    out = fn(flow.tensor(a), flow.tensor(b))
    assert out.dtype == flow.int64
    np.testing.assert_array_equal(out.numpy(), ref(a, b))


def test_xlogy_zero_nan_promotion_and_gradient():
    x = flow.tensor([0.0, 0.0, 0.0, 2.0, np.nan])
    y = flow.tensor([0.0, np.nan, np.inf, 0.0, 1.0])
    r = flow.xlogy(x, y).numpy()
    np.testing.assert_array_equal(r[:1], [0.0])
    assert np.isnan(r[1]) and r[2] == 0.0 and r[3] == -np.inf and np.isnan(r[4])
    i = flow.xlogy(flow.tensor([0, 1, 2]), flow.tensor([5, 1, 4]))  # integers compute in float32
    assert i.dtype == flow.float32
    np.testing.assert_allclose(i.numpy(), [0.0, 0.0, 2 * np.log(4)], rtol=1e-6)
    np.testing.assert_allclose(
        flow.tensor([1.0, 2.0]).xlogy(3.0).numpy(), np.log([3.0, 9.0]), rtol=1e-6
    )
    a = flow.tensor([0.0, 1.5], dtype=flow.float64, requires_grad=True)
    b = flow.tensor([2.0, 3.0], dtype=flow.float64, requires_grad=True)
    flow.xlogy(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.0, np.log(3.0)])  # 0 where a == 0 (PyTorch)
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 0.5])
    with pytest.raises(TypeError, match=r"\[xlogy\] unsupported operand type 'object'"):
        flow.xlogy(flow.tensor([1.0]), object())


CMP = [
    ("eq", np.equal, "__eq__"),
    ("ne", np.not_equal, "__ne__"),
    ("lt", np.less, "__lt__"),
    ("le", np.less_equal, "__le__"),
    ("gt", np.greater, "__gt__"),
    ("ge", np.greater_equal, "__ge__"),
]


@pytest.mark.parametrize("name,ref,dunder", CMP)
@pytest.mark.parametrize(
    "dtype", [flow.float32, flow.float64, flow.int32, flow.int64, flow.uint8, flow.bool]
)
def test_comparisons(name, ref, dunder, dtype):
    a = RNG.integers(0, 3, size=(3, 4))
    b = RNG.integers(0, 3, size=(4,))
    x, y = flow.tensor(a, dtype=dtype), flow.tensor(b, dtype=dtype)
    av, bv = x.numpy(), y.numpy()
    for out, exp in [
        (getattr(flow, name)(x, y), ref(av, bv)),
        (getattr(x, dunder)(y), ref(av, bv)),
        (getattr(x, name)(1), ref(av, 1)),
        (getattr(x, dunder)(1), ref(av, 1)),
    ]:
        assert out.dtype == flow.bool
        np.testing.assert_array_equal(out.numpy(), exp)


def test_comparison_dunders_and_promotion():
    x = flow.tensor([1.0, 2.0, 3.0])
    i = flow.tensor([1, 2, 3])
    np.testing.assert_array_equal((x == 2.0).numpy(), [False, True, False])
    np.testing.assert_array_equal((2 < x).numpy(), [False, False, True])  # reflected
    np.testing.assert_array_equal(
        (i > 1.5).numpy(), [False, True, True]
    )  # int vs fractional scalar
    np.testing.assert_array_equal((i == x).numpy(), [True, True, True])  # int vs float tensor
    np.testing.assert_array_equal((x != [1.0, 0.0, 3.0]).numpy(), [False, True, False])
    assert (x == None) is False  # noqa: E711
    assert (x != None) is True  # noqa: E711
    assert x in {x} and len({x, i}) == 2  # __hash__ survives __eq__
    np.testing.assert_array_equal(flow.greater_equal(x, 2).numpy(), [False, True, True])
    assert flow.equal(x, flow.tensor([1.0, 2.0, 3.0])) and not flow.equal(x, i * 2)


def test_logical_and_bitwise():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    x, y = flow.tensor(a), flow.tensor(b)
    for name, ref in [
        ("logical_and", np.logical_and),
        ("logical_or", np.logical_or),
        ("logical_xor", np.logical_xor),
    ]:
        out = getattr(flow, name)(x, y)
        assert out.dtype == flow.bool
        np.testing.assert_array_equal(out.numpy(), ref(a, b))
    np.testing.assert_array_equal((x & y).numpy(), a & b)
    np.testing.assert_array_equal((x | y).numpy(), a | b)
    np.testing.assert_array_equal((x ^ y).numpy(), a ^ b)
    np.testing.assert_array_equal((~x).numpy(), ~a)
    np.testing.assert_array_equal(
        flow.logical_not(flow.tensor([0.0, 2.0, -1.0])).numpy(), [True, False, False]
    )
    np.testing.assert_array_equal(
        flow.logical_and(flow.tensor([0.0, 2.0]), flow.tensor([3, 4])).numpy(), [False, True]
    )
    i, j = np.array([12, -7, 5]), np.array([10, 3, -1])
    ti, tj = flow.tensor(i), flow.tensor(j)
    np.testing.assert_array_equal((ti & tj).numpy(), i & j)
    np.testing.assert_array_equal((ti | tj).numpy(), i | j)
    np.testing.assert_array_equal((ti ^ tj).numpy(), i ^ j)
    np.testing.assert_array_equal((~ti).numpy(), ~i)
    np.testing.assert_array_equal((ti & 6).numpy(), i & 6)


def test_scalar_ops_are_fused():
    x = flow.tensor(rand((3,)), requires_grad=True)
    for y, op in [
        (x * 2.0, "MulBackward0"),
        (x + 1, "AddBackward0"),
        (1 - x, "RsubBackward1"),
        (x**2, "PowBackward0"),
        (2.0**x, "PowBackward2"),
    ]:
        # torch's node names; one node with one input (the scalar is an attribute, no tensor)
        assert y.grad_fn.name() == op, (op, str(y.grad_fn))
        assert len(y.grad_fn.next_functions) == 1
    w = flow.where(x > 0, x, 0.0).grad_fn  # where_scalar_other: the condition and x only
    assert w.name() == "WhereBackward0" and len(w.next_functions) == 2


def test_type_promotion():
    i = flow.tensor([1, 2, 3])
    f = flow.tensor([0.5, 0.5, 0.5])
    d = flow.tensor([1.0], dtype=flow.float64)
    assert (i + f).dtype == flow.float32
    assert (f + d).dtype == flow.float64
    assert (f + flow.tensor(1.0, dtype=flow.float64)).dtype == flow.float32  # 0-dim doesn't widen
    assert (i + flow.tensor(1.5)).dtype == flow.float32  # but lifts the category
    assert flow.maximum(i, f).dtype == flow.float32
    assert flow.pow(i, 2).dtype == flow.int64
    assert (i**f).dtype == flow.float32
    assert flow.where(i > 1, i, f).dtype == flow.float32
    assert flow.where(i > 1, i, 0).dtype == flow.int64
    assert flow.where(i > 1, i, 0.5).dtype == flow.float32


# ---- ternary ----


# ---- the ternary table (oneflow_like/opdefs/ternary.def) ----


def _three(lo_z=-1.0, hi_z=1.0):
    return lambda sx, sy, sz: [rand(sx), rand(sy), rand(sz, lo_z, hi_z)]


def _bounds(sx, sy, sz):  # overlapping ranges: some min > max (the result is max there)
    return [rand(sx, -2.0, 2.0), rand(sy, -1.0, 0.5), rand(sz, -0.5, 1.0)]


def _cond_and(n):  # a condition (tested > 0 inside the row) and n value operands
    return lambda sx, sy, sz: [rand(sx), rand(sy), rand(sz)][: n + 1]


# (id, the call, a float64 NumPy reference, a sampler of the operands for three shapes, the
# operands to differentiate: None all, () none). The where rows take a float condition operand
# and test it > 0 in the call, so it is not differentiated.
TERNARY = [
    (
        "where",
        lambda c, x, y: flow.where(c > 0, x, y),
        lambda c, x, y: np.where(c > 0, x, y),
        _cond_and(2),
        [1, 2],
    ),
    (
        "where_scalar_other",
        lambda c, x: flow.where(c > 0, x, 0.5),
        lambda c, x: np.where(c > 0, x, 0.5),
        _cond_and(1),
        [1],
    ),
    (
        "where_scalar_input",
        lambda c, y: flow.where(c > 0, -1.0, y),
        lambda c, y: np.where(c > 0, -1.0, y),
        _cond_and(1),
        [1],
    ),
    (
        "addcmul",
        lambda x, y, z: flow.addcmul(x, y, z, value=0.7),
        lambda x, y, z: x + 0.7 * y * z,
        _three(),
        None,
    ),
    (
        "addcdiv",
        lambda x, y, z: flow.addcdiv(x, y, z, value=-0.3),
        lambda x, y, z: x - 0.3 * y / z,
        _three(0.5, 1.5),
        None,
    ),
    ("lerp", flow.lerp, lambda x, y, z: x + z * (y - x), _three(-0.3, 1.3), None),  # both branches
    (
        "lerp_scalar",
        lambda x, y: flow.lerp(x, y, 0.3),
        lambda x, y: x + 0.3 * (y - x),
        lambda sx, sy, sz: [rand(sx), rand(sy)],
        None,
    ),
    (
        "clamp_tensor",
        lambda x, lo, hi: flow.clamp(x, lo, hi),
        lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
        _bounds,
        None,
    ),
]
# Ops with no Python entry of their own, tested through their owner.
TERNARY_DEDICATED = {"minmax_grad": "test_maximum_ties_split_gradient_and_nan"}


@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((2, 1), (1, 3), ())]
)
@pytest.mark.parametrize("name,fn,ref,sample,grad", TERNARY, ids=[r[0] for r in TERNARY])
def test_ternary(name, fn, ref, sample, grad, shapes):
    arrays = sample(*shapes)
    check_op(fn, ref, arrays, grad_inputs=grad, backward=grad != ())


def test_ternary_methods():
    cond = rand((3, 4)) > 0
    x, y, z = rand((3, 4)), rand((4,)), rand((3, 1), 0.5, 1.5)
    check_op(
        lambda a, b: a.where(flow.tensor(cond, device=a.device), b),
        lambda a, b: np.where(cond, a, b),
        [x, y],
    )
    check_op(lambda a, b, c: a.addcmul(b, c), lambda a, b, c: a + b * c, [x, y, z])
    check_op(lambda a, b, c: a.addcdiv(b, c, value=2.0), lambda a, b, c: a + 2.0 * b / c, [x, y, z])
    check_op(lambda a, b: a.lerp(b, 0.8), lambda a, b: a + 0.8 * (b - a), [x, y])
    check_op(lambda a, b, c: a.clamp(min=b, max=c), lambda a, b, c: np.clip(a, b, c), [x, y, z])


def test_clamp_tensor_bounds():
    x = flow.tensor([-3.0, 0.0, np.nan, 2.0, 5.0])
    lo = flow.tensor([-1.0, np.nan, 0.0, 3.0, 0.0])
    hi = flow.tensor([1.0, 1.0, 1.0, 1.0, np.nan])
    r = flow.clamp(x, lo, hi).numpy()  # a NaN input or bound gives NaN; min > max gives max
    np.testing.assert_array_equal(r[[0, 3]], [-1.0, 1.0])
    assert np.isnan(r[[1, 2, 4]]).all()
    np.testing.assert_array_equal(flow.clamp(x[:2], min=flow.tensor(-1.0)).numpy(), [-1.0, 0.0])
    np.testing.assert_array_equal(x[:2].clamp_max(flow.tensor([-4.0, 4.0])).numpy(), [-4.0, 0.0])
    np.testing.assert_array_equal(flow.clamp(x[:2], flow.tensor(-1.0), 0.5).numpy(), [-1.0, 0.0])
    i = flow.clamp(flow.tensor([-5, 0, 5]), flow.tensor([-2, 1, 2]), flow.tensor([2, 2, 9]))
    assert i.dtype == flow.int64
    np.testing.assert_array_equal(i.numpy(), [-2, 1, 5])
    assert flow.clamp(flow.tensor([1, 2]), flow.tensor([1.5, 0.5])).dtype == flow.float32
    y = flow.tensor([-3.0, 0.5, 3.0])
    y.clamp_(flow.tensor([-1.0, -1.0, -1.0]), flow.tensor(1.0))
    np.testing.assert_array_equal(y.numpy(), [-1.0, 0.5, 1.0])
    with pytest.raises(TypeError, match=r"\[clamp\]"):
        flow.clamp(flow.ones(2), flow.ones(2), "max")


def test_clamp_tensor_gradient_follows_pytorch_at_ties():
    # input == min: the input gets the gradient (min does not); min > max: max gets it.
    x = flow.tensor([0.0, 0.5, 2.0, 0.0], dtype=flow.float64, requires_grad=True)
    lo = flow.tensor([0.0, 1.0, 0.0, 1.0], dtype=flow.float64, requires_grad=True)
    hi = flow.tensor([1.0, 2.0, 1.0, 0.5], dtype=flow.float64, requires_grad=True)
    flow.clamp(x, lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(lo.grad.numpy(), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(hi.grad.numpy(), [0.0, 0.0, 1.0, 1.0])
    b = flow.tensor([1.0, 1.0], requires_grad=True)
    flow.clamp(flow.tensor([0.0, 2.0]), min=b).sum().backward()  # one bound: the other absent
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 0.0])


def test_where_dtypes():
    c = flow.tensor([True, False, True])
    np.testing.assert_array_equal(flow.where(c, 1, 0).numpy(), [1, 0, 1])
    assert flow.where(c, 1, 0).dtype == flow.int64
    assert flow.where(c, 1.0, 0).dtype == flow.float32
    np.testing.assert_array_equal(
        flow.where(c, c, flow.tensor([True, True, False])).numpy(), [True, True, True]
    )
    np.testing.assert_array_equal(
        flow.where(flow.tensor([1, 0, 2]), flow.ones(3), flow.zeros(3)).numpy(), [1, 0, 1]
    )


def test_optimizer_style_inplace():
    p = rand((4, 5))
    m, v = rand((4, 5)), rand((4, 5), 0.5, 1.5)
    t = flow.tensor(p)
    r = t.addcdiv_(flow.tensor(m), flow.tensor(v), value=-0.01)
    np.testing.assert_allclose(t.numpy(), p - 0.01 * m / v, rtol=1e-6)
    assert r._same(t)
    t.addcmul_(flow.tensor(m), flow.tensor(m), value=0.5)
    np.testing.assert_allclose(t.numpy(), p - 0.01 * m / v + 0.5 * m * m, rtol=1e-5)
    s = flow.zeros(4, 5)
    s.lerp_(flow.ones(4, 5), 0.25)
    np.testing.assert_allclose(s.numpy(), 0.25)
    np.testing.assert_allclose(
        flow.lerp(flow.zeros(2), flow.tensor([2.0, 4.0]), 1.0).numpy(), [2.0, 4.0]
    )


# ---- in place ----

INPLACE = [
    ("relu_", lambda x: np.maximum(x, 0)),
    ("exp_", np.exp),
    ("sigmoid_", sigmoid),
    ("tanh_", np.tanh),
    ("neg_", np.negative),
    ("abs_", np.abs),
    ("floor_", np.floor),
    ("ceil_", np.ceil),
    ("round_", np.round),
    ("sign_", np.sign),
    ("square_", np.square),
    ("sin_", np.sin),
    ("cos_", np.cos),
]


@pytest.mark.parametrize("name,ref", INPLACE)
def test_inplace_unary(name, ref):
    a = rand((3, 4))
    x = flow.tensor(a)
    v = x._version
    y = getattr(x, name)()
    assert y._same(x) and x._version > v
    np.testing.assert_allclose(x.numpy(), ref(a), rtol=1e-6, atol=1e-7)


def test_inplace_clamp_and_pow():
    a = rand((3, 4), -3, 3)
    x = flow.tensor(a)
    x.clamp_(-1, 1)
    np.testing.assert_allclose(x.numpy(), np.clip(a, -1, 1))
    x.clamp_(min=0.0)
    np.testing.assert_allclose(x.numpy(), np.clip(a, 0, 1))
    x.pow_(2)
    np.testing.assert_allclose(x.numpy(), np.clip(a, 0, 1) ** 2, rtol=1e-6)
    i = flow.tensor([-5, 0, 5])
    i.clamp_(-2, 2)
    np.testing.assert_array_equal(i.numpy(), [-2, 0, 2])
    x = flow.tensor(a)
    x.div_(2.0)
    x.div_(flow.tensor([2.0, 4.0, 8.0, 16.0]))
    np.testing.assert_allclose(x.numpy(), a / 2 / np.array([2.0, 4.0, 8.0, 16.0]), rtol=1e-6)


def test_inplace_autograd():
    a = rand((3, 4))
    leaf = flow.tensor(a, requires_grad=True)
    with pytest.raises(ValueError, match=r"leaf"):
        leaf.relu_()
    for name, dref in [
        ("relu_", lambda v: (v > 0) * 1.0),
        ("sigmoid_", lambda v: sigmoid(v) * (1 - sigmoid(v))),
        ("tanh_", lambda v: 1 - np.tanh(v) ** 2),
        ("exp_", np.exp),
    ]:
        leaf = flow.tensor(a, dtype=flow.float64, requires_grad=True)
        y = leaf * 1.0
        getattr(y, name)()
        y.sum().backward()
        np.testing.assert_allclose(leaf.grad.numpy(), dref(a), rtol=1e-6, err_msg=name)


def test_inplace_dtype_errors():
    i = flow.tensor([1, 2, 3])
    with pytest.raises(TypeError, match=r"\[exp_\].*s64\[3\]"):
        i.exp_()
    with pytest.raises(TypeError, match=r"\[div_\]"):
        i.div_(2)


# ---- errors ----


def test_error_messages():
    with pytest.raises(ValueError, match=r"\[maximum\].*\[2,3\].*\[4\]"):
        flow.maximum(flow.zeros(2, 3), flow.zeros(4))
    with pytest.raises(ValueError, match=r"\[eq\].*\[2,3\].*\[4\]"):
        flow.zeros(2, 3) == flow.zeros(4)
    with pytest.raises(ValueError, match=r"\[where\].*\[2\].*\[3\]"):
        flow.where(flow.tensor([True, False]), flow.zeros(3), 0.0)
    with pytest.raises(ValueError, match=r"\[addcmul\]"):
        flow.addcmul(flow.zeros(2), flow.zeros(3), flow.zeros(3))
    # Activations reject integer tensors (as PyTorch's "not implemented for 'Long'"); the math
    # functions compute them in float32 (test_float_math_functions_promote_integers).
    for fn, op in [
        (flow.gelu, "gelu"),
        (flow.nn.functional.elu, "elu"),
        (flow.nn.functional.softplus, "softplus"),
    ]:
        with pytest.raises(TypeError, match=rf"\[{op}\].*s64\[2\]"):
            fn(flow.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"\[bitwise_and\].*f32"):
        flow.zeros(2) & flow.zeros(2)
    with pytest.raises(TypeError, match=r"\[bitwise_not\].*f32"):
        ~flow.zeros(2)
    with pytest.raises(ValueError, match=r"\[gelu\].*approximate"):
        flow.gelu(flow.zeros(2), approximate="fast")
    with pytest.raises(ValueError, match=r"\[clamp\].*min"):
        flow.clamp(flow.zeros(2))
    with pytest.raises(ValueError, match=r"\[pow\].*negative"):
        flow.tensor([1, 2]) ** -1
    with pytest.raises(TypeError, match=r"\[addcdiv\]"):
        flow.addcdiv(flow.tensor([1]), flow.tensor([1]), flow.tensor([1]))
    with pytest.raises(ValueError, match=r"\[add_?\].*\[3\]"):
        flow.zeros(3).add_(flow.zeros(2, 3))
