"""Reduction family: every op forward (f32, f64 vs float64 NumPy) and backward (vs numerical
gradients in float64) over many dim/keepdim combinations and layouts (rows, columns, generic,
strided inputs), plus integer inputs, ties, NaN, large/deterministic reductions and errors."""
import math

import numpy as np
import pytest

import oneflow_like as flow
from op_testing import FnGraph, check_op, rand

# (shape, dim): trailing dims (row path), leading/middle (column path), interleaved (generic).
CASES = [
    ((3, 4, 5), None),
    ((3, 4, 5), 0),
    ((3, 4, 5), 1),
    ((3, 4, 5), 2),
    ((3, 4, 5), -1),
    ((3, 4, 5), (0, 2)),
    ((3, 4, 5), (1, 2)),
    ((3, 4, 5), (0, 1)),
    ((2, 3, 4, 5), (0, 2)),
    ((1, 4, 1, 5), (1, 2)),
    ((6,), 0),
    ((), None),
]


def np_dims(dim):
    return tuple(dim) if isinstance(dim, tuple) else dim


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", CASES)
def test_sum_mean_prod(shape, dim, keepdim):
    x = rand(shape)
    ax = np_dims(dim)
    check_op(
        lambda t: flow.sum(t, dim, keepdim), lambda a: np.sum(a, axis=ax, keepdims=keepdim), [x]
    )
    check_op(lambda t: t.mean(dim, keepdim), lambda a: np.mean(a, axis=ax, keepdims=keepdim), [x])
    xp = np.asarray(rand(shape, 0.5, 1.5) * np.sign(rand(shape)))
    check_op(lambda t: t.prod(dim, keepdim), lambda a: np.prod(a, axis=ax, keepdims=keepdim), [xp])


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", CASES)
def test_nansum(shape, dim, keepdim):
    check_op(
        lambda t: flow.nansum(t, dim, keepdim),
        lambda a: np.nansum(a, axis=np_dims(dim), keepdims=keepdim),
        [rand(shape)],
    )


def test_nansum_skips_nans_and_their_gradient():
    a = np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, 3.0]])
    x = flow.tensor(a, requires_grad=True)
    y = x.nansum(dim=1)
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, 3.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), [[1, 0, 1], [0, 0, 1]])
    assert flow.nansum(flow.tensor([[1, 2], [3, 4]]), 0).tolist() == [4, 6]
    g = FnGraph(lambda t: flow.nansum(t, 0))
    xf = flow.tensor(a.astype(np.float32))
    np.testing.assert_array_equal(g(xf).detach().numpy(), flow.nansum(xf, 0).detach().numpy())
    assert g.stats()["kernel_call_ops"] == []


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", CASES)
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin(name, shape, dim, keepdim):
    ref = {"amax": np.amax, "amin": np.amin}[name]
    d = () if dim is None else dim
    check_op(
        lambda t: getattr(flow, name)(t, d, keepdim),
        lambda a: ref(a, axis=np_dims(dim), keepdims=keepdim),
        [rand(shape)],
    )


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize(
    "shape,dim", [((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), -1), ((7,), 0), ((2, 1, 3), 1)]
)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim(name, shape, dim, keepdim):
    npv = {"max": np.max, "min": np.min}[name]
    npi = {"max": np.argmax, "min": np.argmin}[name]
    x = rand(shape)

    def ref(a):
        idx = npi(a, axis=dim)
        return npv(a, axis=dim, keepdims=keepdim), np.expand_dims(idx, dim) if keepdim else idx

    check_op(lambda t: getattr(t, name)(dim, keepdim), ref, [x])
    r = getattr(flow, name)(flow.tensor(x), dim, keepdim)
    vals, idx = r
    assert vals is r.values and idx is r.indices and idx.dtype == flow.int64
    # The function form and the argmax/argmin ops agree with the indices.
    i2 = getattr(flow, "arg" + name)(flow.tensor(x), dim, keepdim)
    np.testing.assert_array_equal(i2.detach().numpy(), idx.detach().numpy())


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_global(name):
    x = rand((4, 5))
    check_op(lambda t: getattr(flow, name)(t), getattr(np, name), [x])
    check_op(lambda t: getattr(t, name)(), getattr(np, name), [x])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "shape,dim", [((3, 4, 5), None), ((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), 2), ((10,), None)]
)
def test_argmax_argmin(name, shape, dim):
    x = rand(shape)
    for dt in (np.float32, np.float64, np.int64):
        a = (x * 100).astype(dt)
        r = getattr(flow, name)(flow.tensor(a), dim)
        np.testing.assert_array_equal(r.detach().numpy(), getattr(np, name)(a, axis=dim))


def test_max_gradient_goes_to_selected_index_on_ties():
    x = flow.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], dtype=flow.float64, requires_grad=True)
    v, i = x.max(1)
    np.testing.assert_array_equal(i.detach().numpy(), [1, 0])  # the first of the tied maxima
    v.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), [[0, 1, 0], [1, 0, 0]])
    y = flow.tensor([[1.0, 3.0, 3.0]], dtype=flow.float64, requires_grad=True)
    y.amax().backward()  # amax shares the gradient between ties
    np.testing.assert_array_equal(y.grad.detach().numpy(), [[0, 0.5, 0.5]])


def test_nan_propagates():
    x = flow.tensor([[1.0, float("nan"), 5.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(np.isnan(x.amax(1).detach().numpy()), [True, False])
    np.testing.assert_array_equal(x.argmax(1).detach().numpy(), [1, 2])
    np.testing.assert_array_equal(x.max(0).indices.detach().numpy(), [0, 0, 0])


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape,dim", CASES[:-1])
@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("correction", [1, 0])
def test_var_std(name, shape, dim, keepdim, correction):
    ref = {"var": np.var, "std": np.std}[name]
    x = rand(shape)
    ax = np_dims(dim)
    n = (
        x.size
        if dim is None
        else int(np.prod([shape[d] for d in (dim if isinstance(dim, tuple) else (dim,))]))
    )
    if n - correction <= 0:
        pytest.skip("no degrees of freedom")
    check_op(
        lambda t: getattr(flow, name)(t, dim, keepdim=keepdim, correction=correction),
        lambda a: ref(a, axis=ax, keepdims=keepdim, ddof=correction),
        [x],
    )


def test_var_unbiased_signatures():
    x = rand((4, 6))
    t = flow.tensor(x)
    np.testing.assert_allclose(t.var().detach().numpy(), np.var(x, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(t.var(False).detach().numpy(), np.var(x), rtol=1e-5)
    np.testing.assert_allclose(
        flow.std(t, 1, False, True).detach().numpy(), np.std(x, 1, keepdims=True), rtol=1e-5
    )
    np.testing.assert_allclose(
        t.std(0, unbiased=True).detach().numpy(), np.std(x, 0, ddof=1), rtol=1e-5
    )


def test_var_large_mean_precision():
    x = (1e4 + rand((8, 1000))).astype(np.float32)
    np.testing.assert_allclose(
        flow.tensor(x).var(1).detach().numpy(), np.var(x.astype(np.float64), 1, ddof=1), rtol=1e-3
    )


def np_norm(a, p, axis, keepdims):
    ax = axis if axis is None or isinstance(axis, tuple) else (axis,)
    if p == math.inf:
        return np.amax(np.abs(a), axis=ax, keepdims=keepdims)
    if p == -math.inf:
        return np.amin(np.abs(a), axis=ax, keepdims=keepdims)
    if p == 0:
        return np.sum(a != 0, axis=ax, keepdims=keepdims).astype(np.float64)
    return np.sum(np.abs(a) ** p, axis=ax, keepdims=keepdims) ** (1.0 / p)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize(
    "shape,dim",
    [((3, 4, 5), None), ((3, 4, 5), 1), ((3, 4, 5), -1), ((3, 4, 5), (0, 2)), ((7,), 0)],
)
@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, 3, 0.5, 0])
def test_norm(p, shape, dim, keepdim):
    x = np.asarray(rand(shape, 0.1, 1.0) * np.where(rand(shape) > 0, 1, -1))
    check_op(
        lambda t: flow.norm(t, p, dim, keepdim), lambda a: np_norm(a, p, np_dims(dim), keepdim), [x]
    )


def test_norm_fro_and_method():
    x = rand((4, 5))
    check_op(lambda t: t.norm(), lambda a: np.linalg.norm(a), [x])
    check_op(lambda t: flow.norm(t, "fro", (0, 1)), lambda a: np.linalg.norm(a, "fro"), [x])
    check_op(lambda t: t.norm(dim=1), lambda a: np.linalg.norm(a, axis=1), [x])
    z = flow.zeros(3, dtype=flow.float64, requires_grad=True)
    z.norm().backward()  # the gradient at zero is zero (a subgradient), not nan
    np.testing.assert_array_equal(z.grad.detach().numpy(), np.zeros(3))


def np_lse(a, axis, keepdims):
    m = np.amax(a, axis=axis, keepdims=True)
    r = m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))
    return r if keepdims else np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize(
    "shape,dim", [((3, 4, 5), None), ((3, 4, 5), 0), ((3, 4, 5), 2), ((3, 4, 5), (0, 2)), ((6,), 0)]
)
def test_logsumexp(shape, dim, keepdim):
    x = rand(shape, -5, 5)
    check_op(lambda t: t.logsumexp(dim, keepdim), lambda a: np_lse(a, np_dims(dim), keepdim), [x])


def test_logsumexp_extremes():
    x = flow.tensor([[1000.0, 1000.0], [-math.inf, -math.inf], [math.inf, 1.0]], dtype=flow.float32)
    r = flow.logsumexp(x, 1).detach().numpy()
    np.testing.assert_allclose(r[0], 1000.0 + math.log(2), rtol=1e-6)
    assert r[1] == -math.inf and r[2] == math.inf


def test_strided_inputs():
    x = rand((4, 5, 6))
    for name, ref in [("sum", np.sum), ("amax", np.amax), ("prod", np.prod)]:
        check_op(
            lambda t: getattr(t.permute(2, 0, 1), name)(1),
            lambda a: ref(a.transpose(2, 0, 1), axis=1),
            [x],
        )
    check_op(
        lambda t: t.transpose(0, 2).var(0),
        lambda a: np.var(a.transpose(2, 1, 0), axis=0, ddof=1),
        [x],
    )
    check_op(
        lambda t: t.transpose(0, 2).logsumexp(2),
        lambda a: np_lse(a.transpose(2, 1, 0), 2, False),
        [x],
    )


def test_integer_and_bool_inputs():
    a = np.arange(-6, 6).reshape(3, 4)
    t = flow.tensor(a)
    assert t.sum().dtype == flow.int64 and t.sum().item() == a.sum()
    np.testing.assert_array_equal(t.sum(0).detach().numpy(), a.sum(0))
    np.testing.assert_array_equal(t.prod(1).detach().numpy(), a.prod(1))
    np.testing.assert_array_equal(t.amax(1).detach().numpy(), a.max(1))
    np.testing.assert_array_equal(t.max(0).values.detach().numpy(), a.max(0))
    np.testing.assert_array_equal(t.min(1).indices.detach().numpy(), a.argmin(1))
    b = flow.tensor(a > 0)
    assert b.sum().item() == 5
    with pytest.raises(TypeError, match=r"\[mean\]"):
        t.mean()
    with pytest.raises(TypeError, match=r"\[var\]"):
        t.var()


@pytest.mark.parametrize(
    "shape,dim", [((4, 300000), 1), ((300000, 8), 0), ((1 << 20,), None), ((3, 200003), 1)]
)
def test_large_reductions_deterministic(shape, dim):
    x = rand(shape).astype(np.float32)
    t = flow.tensor(x)
    r1 = t.sum(dim).detach().numpy()
    np.testing.assert_allclose(r1, np.sum(x.astype(np.float64), axis=dim), rtol=1e-4, atol=1e-2)
    for _ in range(3):
        np.testing.assert_array_equal(t.sum(dim).detach().numpy(), r1)  # bit-identical
    np.testing.assert_allclose(t.amax(dim).detach().numpy(), np.amax(x, axis=dim))
    np.testing.assert_array_equal(t.argmax(dim).detach().numpy(), np.argmax(x, axis=dim))
    np.testing.assert_allclose(
        t.var(dim).detach().numpy(), np.var(x.astype(np.float64), axis=dim, ddof=1), rtol=1e-4
    )
    np.testing.assert_allclose(
        t.norm(dim=dim).detach().numpy(), np.linalg.norm(x.astype(np.float64), axis=dim), rtol=1e-4
    )
    np.testing.assert_allclose(
        t.logsumexp(dim).detach().numpy(), np_lse(x.astype(np.float64), dim, False), rtol=1e-5
    )


def test_empty_reductions():
    e = flow.zeros(0, 3)
    np.testing.assert_array_equal(e.sum(0).detach().numpy(), np.zeros(3))
    np.testing.assert_array_equal(e.prod(0).detach().numpy(), np.ones(3))
    assert tuple(e.amax(1).shape) == (0,)


def test_double_backward_var_logsumexp():
    x = flow.tensor(rand((3, 4)), dtype=flow.float64, requires_grad=True)
    (g,) = flow.autograd.grad([x.logsumexp(1).sum()], [x], create_graph=True)
    (gg,) = flow.autograd.grad([(g * g).sum()], [x])
    assert tuple(gg.shape) == (3, 4)


def test_errors_name_op_and_shapes():
    with pytest.raises(IndexError, match=r"\[amax\]"):
        flow.amax(flow.zeros(2, 3), 2)
    with pytest.raises(ValueError, match=r"\[max\].*empty.*f32\[0,3\]"):
        flow.zeros(0, 3).max(0)
    with pytest.raises(ValueError, match=r"\[argmax\].*f32\[0\]"):
        flow.zeros(0).argmax()
    with pytest.raises(ValueError, match=r"\[sum\] dim -1 appears twice"):
        flow.sum(flow.zeros(2, 3), (1, -1))
    with pytest.raises(ValueError, match=r"\[norm\]"):
        flow.norm(flow.zeros(2, 3), "nuc")
    with pytest.raises(TypeError, match=r"\[logsumexp\].*s64\[2\]"):
        flow.logsumexp(flow.tensor([1, 2]), 0)


# ---- the reduce table (oneflow_like/opdefs/reduce.def) ----
# One row per OFL_REDUCE_API line: (api name, fn(t, keepdim), float64 NumPy reference(a, keepdim),
# input maker, backward?). Forward f32/f64, backward vs numerical gradients, eager == lazy.


def _lower_median(a, axis, keepdims):
    s = np.sort(a, axis=axis)
    k = (a.shape[axis] - 1) // 2
    return np.take(s, [k] if keepdims else k, axis=axis)


def _distinct(shape):
    # Distinct values spread apart, so that extremes and medians are unique (no ties).
    n = int(np.prod(shape))
    return (np.random.default_rng(7).permutation(n).reshape(shape) / n - 0.5) * 2


REDUCE = [
    ("sum", lambda t, k: t.sum(1, k), lambda a, k: a.sum(1, keepdims=k), rand, True),
    (
        "mean",
        lambda t, k: flow.mean(t, (0, 2), k),
        lambda a, k: a.mean((0, 2), keepdims=k),
        rand,
        True,
    ),
    (
        "prod",
        lambda t, k: t.prod(2, k),
        lambda a, k: a.prod(2, keepdims=k),
        lambda s: rand(s, 0.5, 1.5),
        True,
    ),
    (
        "nansum",
        lambda t, k: flow.nansum(t, 1, k),
        lambda a, k: np.nansum(a, 1, keepdims=k),
        rand,
        True,
    ),
    ("amax", lambda t, k: t.amax(1, k), lambda a, k: a.max(1, keepdims=k), _distinct, True),
    (
        "amin",
        lambda t, k: flow.amin(t, (0, 1), k),
        lambda a, k: a.min((0, 1), keepdims=k),
        _distinct,
        True,
    ),
    (
        "max",
        lambda t, k: flow.max(t, 1, k).values,
        lambda a, k: a.max(1, keepdims=k),
        _distinct,
        True,
    ),
    ("min", lambda t, k: t.min(2, k).values, lambda a, k: a.min(2, keepdims=k), _distinct, True),
    ("argmax", lambda t, k: t.argmax(1, k), lambda a, k: a.argmax(1, keepdims=k), _distinct, False),
    (
        "argmin",
        lambda t, k: flow.argmin(t, 0, k),
        lambda a, k: a.argmin(0, keepdims=k),
        _distinct,
        False,
    ),
    (
        "var",
        lambda t, k: t.var(1, keepdim=k),
        lambda a, k: a.var(1, ddof=1, keepdims=k),
        rand,
        True,
    ),
    (
        "std",
        lambda t, k: flow.std(t, 2, keepdim=k, correction=0),
        lambda a, k: a.std(2, keepdims=k),
        rand,
        True,
    ),
    (
        "norm",
        lambda t, k: t.norm(3, 1, k),
        lambda a, k: (np.abs(a) ** 3).sum(1, keepdims=k) ** (1 / 3),
        rand,
        True,
    ),
    ("logsumexp", lambda t, k: flow.logsumexp(t, 1, k), lambda a, k: np_lse(a, 1, k), rand, True),
    (
        "nanmedian",
        lambda t, k: flow.nanmedian(t, 1, k).values,
        lambda a, k: _lower_median(a, 1, k),
        _distinct,
        True,
    ),
]


def test_every_reduce_api_has_a_row():
    table = flow._C._reduce_table()
    apis = [a["name"] for a in table["apis"]]
    assert len(apis) == len(set(apis))
    assert sorted(apis) == sorted(r[0] for r in REDUCE)
    ops = {o["name"]: o for o in table["ops"]}
    assert ops["var"]["attrs"] == {"dims": [], "keepdim": False, "correction": 1.0}
    assert ops["norm"]["attrs"]["p"] == 2.0 and ops["nanmedian_dim"]["out"] == "values_i64"


# The gradient formulas' internal ops (OFL_REDUCE_INTERNAL lines): table rows with their attributes
# (names and types as the kernels read them), check "internal" and no API.
REDUCE_INTERNAL = {
    "reduce_eq_mask": ("like_input", "NoGrad", "none", "strided", {"signed": False}),
    "reduce_index_scatter": (
        "attr_shape",
        "IndexScatterGrad",
        "inputs",
        "contiguous",
        {"dim": 0, "shape": []},
    ),
    "reduce_index_gather": ("index_shape", "IndexGatherGrad", "inputs", "contiguous", {"dim": 0}),
    "norm_backward": ("like_input", "NoGrad", "none", "contiguous", {"p": 2.0}),
}


def test_reduce_internal_ops_are_table_rows_without_an_api():
    table = flow._C._reduce_table()
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    internal = {n: o for n, o in ops.items() if o["check"] == "internal"}
    assert sorted(internal) == sorted(REDUCE_INTERNAL)
    for name, (out, grad, save, layout, attrs) in REDUCE_INTERNAL.items():
        op = internal[name]
        assert (op["out"], op["grad"], op["save"], op["layout"]) == (out, grad, save, layout)
        assert op["attrs"] == attrs
        assert [type(v) for v in op["attrs"].values()] == [type(v) for v in attrs.values()]
    apis = {a["name"] for a in table["apis"]} | {a["entry"] for a in table["apis"]}
    for name in REDUCE_INTERNAL:
        assert name not in apis and not hasattr(flow, name) and not hasattr(flow.Tensor, name)
    # The public ops are not internal.
    assert all(ops[r[0]]["check"] != "internal" for r in REDUCE if r[0] in ops)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("row", REDUCE, ids=[r[0] for r in REDUCE])
def test_reduce_table_row(row, keepdim):
    name, fn, ref, make, backward = row
    x = np.asarray(make((3, 5, 4)), dtype=np.float64)
    check_op(lambda t: fn(t, keepdim), lambda a: ref(a, keepdim), [x], backward=backward)


def test_nanmedian_skips_nans_and_matches_torch_signature():
    a = np.array([[np.nan, 1.0, 3.0, 2.0, np.nan], [4.0, np.nan, 0.5, 7.0, 9.0]])
    x = flow.tensor(a, requires_grad=True)
    r = flow.nanmedian(x, 1)
    np.testing.assert_array_equal(r.values.detach().numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(r.indices.detach().numpy(), [3, 0])
    assert type(r).__name__ == "nanmedian" and r._fields == ("values", "indices")
    r.values.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), [[0, 0, 0, 1, 0], [1, 0, 0, 0, 0]])
    all_nan = flow.nanmedian(flow.tensor([[np.nan, np.nan], [1.0, np.nan]]), dim=-1, keepdim=True)
    assert (
        np.isnan(all_nan.values.detach().numpy()[0, 0])
        and all_nan.values.detach().numpy()[1, 0] == 1.0
    )
    assert tuple(all_nan.indices.shape) == (2, 1)
    # No dim: the lower median of every non-NaN element (PyTorch's), with its gradient.
    g = np.array([[5.0, np.nan, 1.0], [3.0, 2.0, 8.0]])
    y = flow.tensor(g, requires_grad=True)
    m = flow.nanmedian(y)
    assert m.shape == () and m.item() == 3.0 and y.nanmedian().item() == 3.0
    m.backward()
    np.testing.assert_array_equal(y.grad.detach().numpy(), [[0, 0, 0], [1, 0, 0]])
    ints = flow.nanmedian(flow.tensor([[3, 1, 2]]), 1)
    assert ints.values.dtype == flow.int64 and ints.values.tolist() == [2]


def test_nanmedian_errors_name_the_op():
    with pytest.raises(IndexError, match="nanmedian"):
        flow.nanmedian(flow.zeros(2, 3), 2)
    with pytest.raises(ValueError, match=r"\[nanmedian\] cannot reduce over an empty dimension"):
        flow.nanmedian(flow.zeros(2, 0), 1)
    with pytest.raises(TypeError, match="nanmedian"):
        flow.nanmedian(flow.zeros(2, 3), 1.5)
