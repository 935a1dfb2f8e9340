"""nn.Graph lowers addcmul/addcdiv/lerp, masked_fill(_), tril/triu, remainder/fmod/floor_divide,
logical_not and the bitwise ops, cat, flip, arange/linspace/eye to HLO (oneflow_like/lazy/lowering/
{ternary,binary,index,shape,creation}.cc): eager == lazy in float64 (forward and gradients, through
op_testing.check_op / check_lazy, which also fail if the op ran as a kernel call), float32 results
bit for bit, the kernel-call fallbacks, and Adam/AdamW training graphs without kernel calls."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import FnGraph, check_lazy, check_op, rand, train_losses

nn = flow.nn
F = nn.functional
RNG = np.random.default_rng()


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({4: np.uint32, 8: np.uint64}[a.itemsize]) if a.dtype.kind == "f" else a


def check_bitwise(fn, inputs, lowered_ops):
    """fn eager and as a graph: identical bits (float32 included), shapes and dtypes; the ops in
    `lowered_ops` ran as HLO."""
    eager = fn(*inputs)
    g = FnGraph(fn)
    lazy = g(*inputs)
    called = g.stats()["kernel_call_ops"]
    assert not set(called) & set(lowered_ops), called
    eager = eager if isinstance(eager, tuple) else (eager,)
    lazy = lazy if isinstance(lazy, tuple) else (lazy,)
    assert len(eager) == len(lazy)
    for e, l in zip(eager, lazy):
        assert tuple(e.shape) == tuple(l.shape) and e.dtype == l.dtype, (
            e.shape,
            l.shape,
            e.dtype,
            l.dtype,
        )
        np.testing.assert_array_equal(_bits(l.detach().numpy()), _bits(e.detach().numpy()))
    return g


def f32(a):
    return flow.tensor(np.asarray(a, dtype=np.float32))


# ---- addcmul / addcdiv / lerp ------------------------------------------------------------------


def test_addcmul_addcdiv_f64_forward_backward():
    check_op(
        lambda t, a, b: flow.addcmul(t, a, b, value=0.3),
        lambda t, a, b: t + 0.3 * a * b,
        [rand((3, 4)), rand((3, 4)), rand((4,))],
        lowered_ops=("addcmul",),
    )
    check_op(
        lambda t, a, b: flow.addcdiv(t, a, b, value=-1.7),
        lambda t, a, b: t + -1.7 * a / b,
        [rand((2, 3, 4)), rand((3, 4)), rand((2, 3, 4), low=0.5, high=2.0)],
        lowered_ops=("addcdiv",),
    )


def test_lerp_f64_forward_backward_both_branches():
    # weights below and above 0.5 take the kernel's two formulas; 1.0 must give `end` exactly
    w = np.array([[0.0, 0.2, 0.49, 0.5], [0.51, 0.9, 1.0, 1.3], [-0.4, 0.7, 0.3, 0.6]])
    ref = lambda s, e, w: s + w * (e - s)  # noqa: E731
    check_op(
        lambda s, e, w: flow.lerp(s, e, w),
        ref,
        [rand((3, 4)), rand((3, 4)), w],
        lowered_ops=("lerp",),
    )
    for ws in (0.25, 0.5, 0.75, 1.0):
        check_op(
            lambda s, e: flow.lerp(s, e, ws),
            lambda s, e: s + ws * (e - s),
            [rand((3, 4)), rand((4,))],
            lowered_ops=("lerp_scalar",),
        )


def test_ternary_float32_bit_exact():
    t, a, b = f32(rand((64, 33), -3, 3)), f32(rand((64, 33), -3, 3)), f32(rand((33,), 0.1, 3))
    w = f32(rand((64, 33), -0.5, 1.5))
    check_bitwise(
        lambda t, a, b, w: (
            flow.addcmul(t, a, b, value=0.1),
            flow.addcmul(t, a, b),
            flow.addcdiv(t, a, b, value=-0.37),
            flow.lerp(t, a, w),
            flow.lerp(t, a, 0.3),
            flow.lerp(t, a, 0.8),
            flow.lerp(t, a, 1.0),
        ),
        [t, a, b, w],
        ("addcmul", "addcdiv", "lerp", "lerp_scalar"),
    )


def test_in_place_addcmul_addcdiv_lerp_on_captured_tensors():
    m = f32(rand((5, 6)))
    v = f32(rand((5, 6), 0.1, 1.0))  # noqa: E702
    m0, v0 = m.detach().numpy().copy(), v.detach().numpy().copy()
    g_in = f32(rand((5, 6)))

    # (No product feeding these updates: GCC contracts a fused `v * 0.99 + (0.01 * g) * g` into
    # fma(v, 0.99, ...) where the eager kernels round v * 0.99 first, a 1-ulp difference.)
    def step(g):
        m.lerp_(g, 0.1)
        v.addcmul_(g, g, value=0.01)
        return m.addcdiv(g, v.sqrt() + 1e-8, value=-0.5)

    gr = FnGraph(step)
    out = gr(g_in)
    assert not {"addcmul", "addcdiv", "lerp_scalar"} & set(gr.stats()["kernel_call_ops"])
    me, ve = flow.tensor(m0), flow.tensor(v0)
    me.lerp_(g_in, 0.1)
    ve.addcmul_(g_in, g_in, value=0.01)
    oe = me.addcdiv(g_in, ve.sqrt() + 1e-8, value=-0.5)
    for a, b in ((m, me), (v, ve), (out, oe)):
        np.testing.assert_array_equal(_bits(a.detach().numpy()), _bits(b.detach().numpy()))


def test_integer_addcmul_lowers_and_u8_falls_back():
    t = flow.tensor(RNG.integers(-50, 50, (4, 5)), dtype=flow.int64)
    a = flow.tensor(RNG.integers(-50, 50, (4, 5)), dtype=flow.int64)
    check_bitwise(
        lambda t, a: (
            flow.addcmul(t, a, a, value=3),
            flow.addcmul(t.int(), a.int(), a.int(), value=-2.7),
        ),
        [t, a],
        ("addcmul",),
    )
    g = check_bitwise(
        lambda t, a: flow.addcmul(t.to(flow.uint8), a.to(flow.uint8), a.to(flow.uint8), value=2),
        [t.abs(), a.abs()],
        (),
    )
    assert g.stats()["kernel_call_ops"] == ["addcmul"]  # u8/i8 promote to int inside the kernel


# ---- masked_fill / tril / where ------------------------------------------------------------------


def _mask_rows(shape):
    m = RNG.uniform(-1, 1, size=shape)
    m[0] = 1.0  # an all-True row
    m[1] = -1.0  # an all-False row
    return m


def test_masked_fill_f64_forward_backward():
    check_op(
        lambda x, m: x.masked_fill(m > 0, 2.5),
        lambda x, m: np.where(m > 0, 2.5, x),
        [rand((4, 6)), _mask_rows((4, 6))],
        grad_inputs=[0],
        lowered_ops=("masked_fill",),
    )
    # a mask broadcast over the leading dim, and -inf as the attention-style fill
    check_lazy(
        lambda x, m: (x.masked_fill(m > 0, float("-inf")).softmax(-1) * 1.0),
        [rand((2, 4, 6)), _mask_rows((4, 6)) * np.array([1, 1, 1, 1, 1, -1.0])],
        grad_inputs=[0],
        lowered_ops=("masked_fill",),
    )


def test_masked_fill_dtypes_bit_exact():
    x = f32(rand((4, 7), -2, 2))
    m = flow.tensor(_mask_rows((4, 7)) > 0)
    check_bitwise(
        lambda x, m: (
            x.masked_fill(m, -0.1),
            x.double().masked_fill(m, 1e300),
            x.long().masked_fill(m, -7.9),
            (x > 0).masked_fill(m, 0.5),
            x.int().masked_fill(m[0], 3),
        ),
        [x, m],
        ("masked_fill",),
    )


def test_masked_fill_in_place_in_graph_keeps_unmasked_values():
    # A trace sees only an op's inputs: masked_fill_ on a graph value (and on a captured eager
    # tensor) must keep the target's other values (before, the kernel call wrote into fresh memory).
    buf = f32(rand((3, 5)))
    buf0 = buf.detach().numpy().copy()
    x = f32(rand((3, 5)))
    m = flow.tensor(_mask_rows((3, 5)) > 0)

    def fn(x, m):
        y = x * 2
        y.masked_fill_(m, 5.0)
        buf.masked_fill_(~m, -1.0)
        return y

    g = FnGraph(fn)
    out = g(x, m)
    assert (
        "masked_fill_" not in g.stats()["kernel_call_ops"]
        and "masked_fill" not in g.stats()["kernel_call_ops"]
    )
    np.testing.assert_array_equal(
        out.detach().numpy(),
        np.where(m.detach().numpy(), 5.0, x.detach().numpy() * 2).astype(np.float32),
    )
    np.testing.assert_array_equal(
        buf.detach().numpy(), np.where(~m.detach().numpy(), -1.0, buf0).astype(np.float32)
    )
    with pytest.raises(ValueError, match="masked_fill"):
        FnGraph(lambda x, m: x.masked_fill_(m[:, :2], 1.0))(x, m)


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu_f64_forward_backward(k):
    check_op(
        lambda x: (flow.tril(x, k), flow.triu(x, k)),
        lambda x: (np.tril(x, k), np.triu(x, k)),
        [rand((2, 4, 5))],
        lowered_ops=("tril",),
    )


def test_tril_dtypes_bit_exact():
    x = f32(rand((3, 6, 4), -2, 2))
    check_bitwise(
        lambda x: (
            flow.tril(x),
            flow.triu(x, 1),
            flow.tril(x.long(), -1),
            flow.triu(x > 0, -1),
            flow.tril(-x * 0.0),
        ),
        [x],
        ("tril",),
    )


# ---- remainder / fmod / floor_divide / logical and bitwise ops -----------------------------------

# Away from the jumps of x mod y (x / y not near an integer), so finite differences hold.
_X = np.array([[-5.3, -2.7, -0.4, 0.6, 2.2, 5.9], [-7.1, 7.1, -1.25, 1.25, 3.4, -3.4]])
_Y = np.array([[2.0, -2.0, 1.5, -1.5, 0.7, -0.7], [-3.0, 3.0, 1.0, -1.0, 1.6, 1.6]])


def test_remainder_fmod_floor_divide_f64_signs():
    check_op(
        lambda x, y: flow.remainder(x, y),
        lambda x, y: np.mod(x, y),
        [_X, _Y],
        lowered_ops=("remainder",),
    )
    check_op(
        lambda x, y: flow.fmod(x, y), lambda x, y: np.fmod(x, y), [_X, _Y], lowered_ops=("fmod",)
    )
    check_op(
        lambda x, y: flow.floor_divide(x, y),
        lambda x, y: np.floor_divide(x, y),
        [_X, _Y],
        backward=False,
        lowered_ops=("floor_divide",),
    )
    # Python operators and scalars: x % 2.5, -7 % x, x // -1.5
    check_lazy(
        lambda x: (x % 2.5, -7.0 % x, x // -1.5, x % -2.0),
        [_X],
        lowered_ops=("remainder", "floor_divide"),
    )


def test_division_family_float32_bit_exact_edge_cases():
    x = f32(
        np.concatenate(
            [
                rand((40,), -9, 9),
                [0.0, -0.0, 6.0, -6.0, 6.0, -6.0, 1e30, -1e-30, np.inf, 5.0, np.nan],
            ]
        )
    )
    y = f32(
        np.concatenate(
            [rand((40,), -3, 3), [3.0, 3.0, 3.0, 3.0, -3.0, -3.0, 7.0, 7.0, 2.0, 0.0, 1.0]]
        )
    )
    check_bitwise(
        lambda x, y: (
            flow.remainder(x, y),
            flow.fmod(x, y),
            flow.floor_divide(x, y),
            flow.remainder(x.double(), y.double()),
            flow.fmod(x.double(), -y.double()),
        ),
        [x, y],
        ("remainder", "fmod", "floor_divide"),
    )


def test_integer_division_stays_a_kernel_call_and_raises():
    a = flow.tensor([7, -7, 7, -7, 0], dtype=flow.int64)
    b = flow.tensor([2, 2, -2, -2, 3], dtype=flow.int64)
    g = check_bitwise(
        lambda a, b: (flow.remainder(a, b), flow.floor_divide(a, b), flow.fmod(a, b)), [a, b], ()
    )
    assert sorted(g.stats()["kernel_call_ops"]) == ["floor_divide", "fmod", "remainder"]
    with pytest.raises(ValueError, match="ZeroDivisionError"):
        FnGraph(lambda a, b: flow.remainder(a, b))(a, b * 0).detach().numpy()


def test_logical_not_and_bitwise_ops_bit_exact():
    a = flow.tensor(RNG.integers(-100, 100, (5, 6)), dtype=flow.int64)
    b = flow.tensor(RNG.integers(-100, 100, (6,)), dtype=flow.int64)
    x = f32(np.array([0.0, -0.0, np.nan, 1.5, -2.0, np.inf]))

    def fn(a, b, x):
        ai, bi = a.int(), b.int()
        pa, pb = a > 0, b > 0
        return (
            flow.bitwise_and(a, b),
            flow.bitwise_or(ai, bi),
            flow.bitwise_xor(a, b),
            flow.bitwise_not(a),
            flow.bitwise_not(ai),
            flow.bitwise_and(pa, pb),
            flow.bitwise_or(pa, pb),
            flow.bitwise_xor(pa, pb),
            flow.bitwise_not(pa),
            flow.bitwise_and(a.to(flow.uint8), b.to(flow.uint8)),
            flow.logical_not(x),
            flow.logical_not(a),
            flow.logical_not(pa),
            flow.logical_not(x.double()),
        )

    check_bitwise(
        fn, [a, b, x], ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "logical_not")
    )


# ---- cat / flip / one_hot ---------------------------------------------------------------------------


def test_cat_three_tensors_middle_dim_f64():
    check_op(
        lambda a, b, c: flow.cat([a, b, c], 1),
        lambda a, b, c: np.concatenate([a, b, c], 1),
        [rand((2, 3, 4)), rand((2, 1, 4)), rand((2, 5, 4))],
        lowered_ops=("cat",),
    )
    check_op(
        lambda a, b: flow.cat([a, b, a], -1),
        lambda a, b: np.concatenate([a, b, a], -1),
        [rand((3, 2)), rand((3, 4))],
        lowered_ops=("cat",),
    )


def test_cat_dtypes_and_empty_inputs_bit_exact():
    a, b = f32(rand((2, 3))), f32(rand((4, 3)))
    e = flow.zeros(0, 3)
    check_bitwise(
        lambda a, b, e: (
            flow.cat([a, e, b], 0),
            flow.cat([a.long(), b.long()], 0),
            flow.cat([a > 0, b > 0, a > 0]),
            flow.cat([e, e]),
        ),
        [a, b, e],
        ("cat",),
    )


def test_flip_f64_and_long_dims_fall_back():
    check_op(
        lambda x: (flow.flip(x, [0, 2]), x.flip([-1])),
        lambda x: (np.flip(x, (0, 2)), np.flip(x, -1)),
        [rand((3, 4, 5))],
        lowered_ops=("flip",),
    )
    x = f32(rand((2, 100)))
    g = check_bitwise(lambda x: (flow.flip(x, [0]), flow.flip(x, [1])), [x], ())
    assert g.stats()["kernel_call_ops"] == ["flip"]  # the 100-long dim: no HLO reverse


def test_one_hot_stays_a_kernel_call_that_validates():
    idx = flow.tensor([0, 2, 1, 2], dtype=flow.int64)
    g = check_bitwise(lambda i: F.one_hot(i, 3), [idx], ())
    assert g.stats()["kernel_call_ops"] == ["one_hot"]
    with pytest.raises(Exception, match="one_hot"):
        FnGraph(lambda i: F.one_hot(i, 3))(idx + 1).detach().numpy()


# ---- creation ops inside a graph --------------------------------------------------------------------


def test_creation_ops_in_graph_bit_exact():
    x = f32(rand((4,)))

    def fn(x):
        return (
            flow.arange(7) + x.sum().long(),
            flow.arange(0.3, 2.9, 0.1, dtype=flow.float32) * x.sum(),
            flow.arange(5.0, -3.0, -0.7, dtype=flow.float64),
            flow.arange(-3, 9, 2, dtype=flow.int32),
            flow.linspace(-1.3, 2.9, 10) + x.sum(),
            flow.linspace(0.1, 0.7, 7, dtype=flow.float64),
            flow.linspace(2.0, 3.0, 1),
            flow.linspace(0, 10, 6, dtype=flow.int64),
            flow.eye(4) * x,
            flow.eye(3, 5, dtype=flow.int64),
            flow.eye(2, dtype=flow.bool),
        )

    g = check_bitwise(fn, [x], ("arange", "linspace", "eye"))
    assert g.stats()["kernel_call_ops"] == []


def test_creation_ops_f64_check_lazy():
    check_lazy(
        lambda x: (
            x * flow.arange(0.5, 3.0, 0.5, dtype=flow.float64),
            x * flow.linspace(-2.0, 1.0, 5, dtype=flow.float64),
            flow.eye(5, dtype=flow.float64) @ x.reshape(5, 1),
        ),
        [rand((5,))],
        grad_inputs=[0],
        lowered_ops=("arange", "linspace", "eye"),
    )


# ---- optimizers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["adam", "adamw"])
def test_adam_mlp_graph_has_no_kernel_calls_but_nll_and_matches_eager(name):
    cls = flow.optim.Adam if name == "adam" else flow.optim.AdamW
    rs = np.random.RandomState(3)
    x = flow.tensor(rs.randn(64, 20).astype(np.float32))
    y = flow.tensor(rs.randint(0, 5, size=(64,)).astype(np.int64))

    def run(use_graph):
        flow.manual_seed(0)
        model = nn.Sequential(
            nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5)
        )
        opt = cls(model.parameters(), lr=0.01, weight_decay=0.01)
        losses, g = train_losses(lambda a, b: F.cross_entropy(model(a), b), opt, x, y, 5, use_graph)
        return losses, [p.detach().numpy() for p in model.parameters()], g

    le, pe, _ = run(False)
    lg, pg, g = run(True)
    assert sorted(set(g.stats()["kernel_call_ops"])) == ["nll_loss", "nll_loss_grad"], g.stats()[
        "kernel_call_ops"
    ]
    np.testing.assert_allclose(lg, le, rtol=1e-5)
    for a, b in zip(pg, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert le[-1] < le[0]
