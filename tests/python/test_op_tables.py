"""The op tables (oneflow_like/opdefs/*.def) against their tests: every declared op has a row in
its family's op test table (forward and backward against NumPy, eager == lazy), every op lowered
from its formula compiles to HLO that matches the kernel bit for bit in float32, and the
Python bindings take the table's attribute defaults."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import FnGraph, rand
from test_ops_elementwise import BINARY, BINARY_INT, TERNARY, TERNARY_DEDICATED, UNARY

TABLE = flow._C._unary_table()
FORWARD = [op for op in TABLE if op["grad"] != "backward"]
# Ops tested by rows under other names, or (no gradient, integer-only) by dedicated tests.
ROW_ALIASES = {"pow_scalar": "pow2", "rpow_scalar": "rpow", "frac": "trunc_frac"}
DEDICATED = {
    "sign": "test_rounding_and_sign",
    "floor": "test_rounding_and_sign",
    "ceil": "test_rounding_and_sign",
    "round": "test_rounding_and_sign",
    "trunc": "test_rounding_and_sign",
    "bitwise_not": "test_lowering_elementwise::test_logical_not_and_bitwise_ops_bit_exact",
    "polygamma": "test_special::test_polygamma_against_scipy_and_torch",  # takes n first
    "angle": "test_ops_elementwise::test_angle_of_real_tensors",  # no gradient, as sign
}
# torch.special's ops without gradients (as in PyTorch): test_special::test_bessel_family.
DEDICATED.update(
    {
        "special_" + n: "test_special::test_bessel_family_against_torch_float64"
        for n in (
            "bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_k0 modified_bessel_k1 "
            "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 airy_ai"
        ).split()
    }
)


def test_table_lists_forward_and_backward_ops():
    names = [op["name"] for op in TABLE]
    assert len(names) == len(set(names))
    for op in TABLE:
        if op["grad"] in ("bw_in", "bw_out"):
            assert op["name"] + "_grad" in names, op
    logit = next(op for op in TABLE if op["name"] == "logit")
    assert logit["attrs"] == {"eps": -1.0} and logit["api"] == "gen_ip"


@pytest.mark.parametrize("op", [o["name"] for o in FORWARD])
def test_every_forward_op_has_a_test_row(op):
    rows = {r[0] for r in UNARY}
    if op in DEDICATED:
        return
    assert ROW_ALIASES.get(op, op) in rows, f"{op} has no row in test_ops_elementwise.UNARY"


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view({4: np.uint32, 8: np.uint64}[a.itemsize])


LOWERED = [
    o["name"]
    for o in FORWARD
    if o["lower"] == "L" and o["api"] in ("gen", "gen_ip", "fn_only") and o["name"] != "round"
]


# Compiled f32 loops call the compiler's vectorised ofl_expf (within an ulp of expf; 2 after
# silu's multiply), so ops whose formula has an exp match the kernel bit for bit in float64 only.
USES_EXP_F32 = {"sigmoid", "silu"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", LOWERED)
def test_lowered_formula_matches_kernel_bits(op, dtype):
    fn = getattr(flow, op)
    x = flow.tensor(rand((5, 7), 0.05, 0.95).astype(dtype))
    eager = fn(x)
    g = FnGraph(fn)
    lazy = g(x)
    assert op not in g.stats()["kernel_call_ops"]
    if dtype == "float32" and op in USES_EXP_F32:
        np.testing.assert_array_max_ulp(lazy.numpy(), eager.numpy(), maxulp=2)
    else:
        np.testing.assert_array_equal(_bits(lazy.numpy()), _bits(eager.numpy()))


def test_generated_bindings_take_attrs_by_position_name_or_none():
    x = flow.tensor([0.05, 0.5, 0.97])
    a = flow.logit(x, 0.1).numpy()
    b = flow.logit(x, eps=0.1).numpy()
    c = x.logit(0.1).numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_allclose(a[[0, 2]], np.log([0.1 / 0.9, 0.9 / 0.1]), rtol=1e-6)
    np.testing.assert_array_equal(flow.logit(x, None).numpy(), flow.logit(x).numpy())
    with pytest.raises(TypeError):
        flow.logit(x, epsilon=0.1)
    y = x.clone()
    assert y.logit_(eps=0.1) is y
    np.testing.assert_array_equal(y.numpy(), a)


def test_logit_gradient_is_zero_where_eps_clamps():
    x = flow.tensor([0.05, 0.5, 0.97], dtype=flow.float64, requires_grad=True)
    flow.logit(x, eps=0.1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 4.0, 0.0])


def test_logit_computes_integer_tensors_in_float32():
    # As torch.logit: integers are computed in float32; the in-place form rejects them.
    y = flow.logit(flow.tensor([0, 1, 2]))
    assert y.dtype == flow.float32
    np.testing.assert_array_equal(y.numpy(), np.array([-np.inf, np.inf, np.nan], np.float32))
    with pytest.raises(TypeError, match=r"\[logit_\]"):
        flow.tensor([1, 2]).logit_()


# ---- the binary table (oneflow_like/opdefs/binary.def) ----
BINARY_TABLE = flow._C._binary_table()


def _declared_once(table, same):
    """Each op once; scalar variants name a declared base op with the same `same` column and
    take only the `scalar` attribute. Returns the table by name."""
    names = [op["name"] for op in table]
    assert len(names) == len(set(names))
    by_name = {op["name"]: op for op in table}
    for op in table:
        if op["api"].startswith("scalar_"):  # a scalar variant evaluates its base op's formula
            base = by_name.get(op["base"].lower())
            assert base is not None and base[same] == op[same], op
            assert op["attrs"] == {"scalar": 0.0}
    return by_name


def test_binary_table_declares_each_op_once():
    by_name = _declared_once(BINARY_TABLE, "out")
    assert by_name["add"]["attrs"] == {"alpha": 1.0} and by_name["sub"]["attrs"] == {"alpha": 1.0}
    assert by_name["xlogy"]["lower"] == "L" and by_name["xlogy"]["types"] == "Float"
    assert {op["name"] for op in BINARY_TABLE if op["out"] == "bool"} >= {"eq", "lt_scalar"}


@pytest.mark.parametrize("op", [o["name"] for o in BINARY_TABLE])
def test_every_binary_op_has_a_test_row(op):
    rows = {r[0] for r in BINARY} | {r[0] for r in BINARY_INT}
    assert op in rows, f"{op} has no row in test_ops_elementwise.BINARY / BINARY_INT"


@pytest.mark.parametrize(
    "op", [o for o in BINARY_TABLE if not o["api"].startswith("scalar_")], ids=lambda o: o["name"]
)
def test_binary_gradient_hookup_follows_the_table(op):
    # api special: torch.special's, bound only as flow._C._special.name (as torch._C._special)
    fn = getattr(flow._C._special if op["api"] == "special" else flow, op["name"])
    assert op["api"] != "special" or not hasattr(flow, op["name"]), op
    float_ok = op["types"] in ("Float", "Numeric", "NumericBool")
    if not float_ok:
        return
    x = flow.tensor(rand((3,), 0.5, 1.5), requires_grad=True)
    y = flow.tensor(rand((3,), 0.5, 1.5))
    assert fn(x, y).requires_grad == (op["grad"] != "none"), op


LOWERED_BINARY = [o["name"] for o in BINARY_TABLE if o["lower"] == "L"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", LOWERED_BINARY)
def test_lowered_binary_formula_matches_kernel_bits(op, dtype):
    fn = getattr(flow, op)
    x = rand((5, 7), -2.0, 2.0).astype(dtype)
    x[0, :3] = 0.0  # the formula's special cases
    y = rand((7,), 0.05, 3.0).astype(dtype)
    y[1] = np.nan
    xs, ys = flow.tensor(x), flow.tensor(y)
    eager = fn(xs, ys)
    g = FnGraph(fn)
    lazy = g(xs, ys)
    assert op not in g.stats()["kernel_call_ops"]
    np.testing.assert_array_equal(_bits(lazy.numpy()), _bits(eager.numpy()))


# ---- the ternary table (oneflow_like/opdefs/ternary.def) ----
TERNARY_TABLE = flow._C._ternary_table()
TERNARY_ROWS = {r[0]: r for r in TERNARY}


def test_ternary_table_declares_each_op_once():
    by_name = _declared_once(TERNARY_TABLE, "types")
    assert by_name["addcmul"]["attrs"] == {"value": 1.0} and by_name["addcmul"]["api"] == "gen_ip"
    assert by_name["where"]["first"] == "cond" and by_name["where"]["types"] == "All"
    assert by_name["lerp_scalar"]["base"] == "Lerp"


@pytest.mark.parametrize("op", [o["name"] for o in TERNARY_TABLE])
def test_every_ternary_op_has_a_test_row(op):
    if op in TERNARY_DEDICATED:
        return
    assert op in TERNARY_ROWS, f"{op} has no row in test_ops_elementwise.TERNARY"


def test_generated_ternary_bindings_take_attrs_by_keyword_only():
    t, a, b = (flow.tensor(rand((2, 3))) for _ in range(3))
    np.testing.assert_array_equal(
        flow.addcmul(t, a, b, value=None).numpy(), flow.addcmul(t, a, b).numpy()
    )
    np.testing.assert_array_equal(
        t.addcdiv(a, b, value=2.0).numpy(), flow.addcdiv(t, a, b, value=2.0).numpy()
    )
    with pytest.raises(TypeError):
        flow.addcmul(t, a, b, 0.5)
    with pytest.raises(TypeError, match=r"\[addcmul\]"):
        flow.addcmul(t, a, b, scale=0.5)
    with pytest.raises(TypeError, match=r"\[addcdiv\]"):  # a Float op: integer tensors rejected
        flow.addcdiv(flow.tensor([1, 2]), flow.tensor([1, 2]), flow.tensor([1, 2]))
    u = t.clone()
    assert u.addcmul_(a, b, value=0.5) is u
    np.testing.assert_array_equal(u.numpy(), flow.addcmul(t, a, b, value=0.5).numpy())


LOWERED_TERNARY = [o["name"] for o in TERNARY_TABLE if o["lower"] in ("L", "LI", "LA")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", LOWERED_TERNARY)
def test_lowered_ternary_formula_matches_kernel_bits(op, dtype):
    if op in TERNARY_DEDICATED:
        return
    _, fn, _, sample, _ = TERNARY_ROWS[op]
    xs = [flow.tensor(a.astype(dtype)) for a in sample((5, 7), (7,), (5, 1))]
    eager = fn(*xs)
    g = FnGraph(fn)
    lazy = g(*xs)
    assert op not in g.stats()["kernel_call_ops"]
    np.testing.assert_array_equal(_bits(lazy.numpy()), _bits(eager.numpy()))


@pytest.mark.parametrize("dtype", [flow.int32, flow.int64])
def test_integer_ternary_ops_lower_from_the_formula(dtype):
    rng = np.random.default_rng(0)
    x, lo, hi = (flow.tensor(rng.integers(-50, 50, (4, 5)), dtype=dtype) for _ in range(3))
    for op, fn in (
        ("clamp_tensor", lambda x, lo, hi: flow.clamp(x, lo, hi)),
        ("addcmul", lambda x, lo, hi: flow.addcmul(x, lo, hi, value=-3)),
        ("where", lambda x, lo, hi: flow.where(x > 0, lo, hi)),
    ):
        g = FnGraph(fn)
        lazy = g(x, lo, hi)
        assert op not in g.stats()["kernel_call_ops"], op
        np.testing.assert_array_equal(lazy.numpy(), fn(x, lo, hi).numpy())
