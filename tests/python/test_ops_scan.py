"""Scans and orderings: cumsum, cumprod, logcumsumexp, cummax/cummin, sort/argsort/msort, topk,
kthvalue, forward (float32 and float64 vs a float64 NumPy reference), backward (vs numerical
differences) and eager == lazy."""
import numpy as np
import pytest
from op_testing import check_op, rand

import oneflow_like as flow

SHAPES_DIMS = [((7,), 0), ((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), -1), ((2, 300), 0), ((), 0)]


def np_cumsum(a, dim):
    return np.cumsum(a, axis=dim) if a.ndim else a


def np_cumprod(a, dim):
    return np.cumprod(a, axis=dim) if a.ndim else a


def np_logcumsumexp(a, dim):
    return np.logaddexp.accumulate(a, axis=dim) if a.ndim else a


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize(
    "name,ref",
    [("cumsum", np_cumsum), ("cumprod", np_cumprod), ("logcumsumexp", np_logcumsumexp)],
)
def test_scans(name, ref, shape, dim):
    lo = 0.5 if name == "cumprod" else -1.0  # keep long products away from 0 and overflow
    hi = 1.5 if name == "cumprod" else 1.0
    check_op(lambda x, dim: getattr(flow, name)(x, dim), ref, [rand(shape, lo, hi)], dim=dim)


def test_cumsum_reverse_gradient_and_method():
    x = flow.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x.cumsum(1)
    np.testing.assert_array_equal(y.detach().numpy(), [[1, 3, 6], [4, 9, 15]])
    y.backward(flow.ones_like(y))
    np.testing.assert_array_equal(x.grad.detach().numpy(), [[3, 2, 1], [3, 2, 1]])


def test_cumsum_cumprod_integer_and_dtype():
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    t = flow.tensor(a)
    for name, ref in [("cumsum", np.cumsum), ("cumprod", np.cumprod)]:
        r = getattr(flow, name)(t, 1)
        assert r.dtype == flow.int64  # integers accumulate in int64 (PyTorch)
        np.testing.assert_array_equal(r.detach().numpy(), ref(a, axis=1))
    b = flow.tensor([True, False, True, True])
    assert flow.cumsum(b, 0).tolist() == [1, 1, 2, 3]
    r = flow.cumsum(t, 0, dtype=flow.float64)
    assert r.dtype == flow.float64
    np.testing.assert_array_equal(r.detach().numpy(), np.cumsum(a, axis=0))
    # A long float32 running sum accumulates in double: exact for integers below 2^24.
    ones = flow.ones(1 << 20)
    assert float(flow.cumsum(ones, 0)[-1]) == float(1 << 20)


@pytest.mark.parametrize(
    "values",
    [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 3.0], [2.0, 3.0, 0.0], [1.5, 0.0, 2.0, 0.0, 3.0]],
)
def test_cumprod_gradient_with_zeros(values):
    """Exact gradients where the input has zeros (no division by zero)."""
    a = np.array(values)
    check_op(lambda x: flow.cumprod(x, 0), lambda x: np.cumprod(x), [a])


def test_logcumsumexp_stable():
    a = np.array([1000.0, 1000.0, -1000.0, 1001.0, -np.inf])
    r = flow.logcumsumexp(flow.tensor(a), 0).detach().numpy()
    np.testing.assert_allclose(r, np.logaddexp.accumulate(a), rtol=1e-12)
    x = flow.tensor(a[:4], requires_grad=True)
    flow.logcumsumexp(x, 0).sum().backward()
    g = x.grad.detach().numpy()
    assert np.all(np.isfinite(g))
    ref = [
        sum(np.exp(a[i] - np.logaddexp.accumulate(a[:4])[j]) for j in range(i, 4)) for i in range(4)
    ]
    np.testing.assert_allclose(g, ref, rtol=1e-12)
    ninf = flow.logcumsumexp(flow.tensor([-np.inf, -np.inf, 0.0]), 0).detach().numpy()
    np.testing.assert_array_equal(ninf, [-np.inf, -np.inf, 0.0])


def np_cumext(a, dim, is_max):
    """Running max/min with the last index of equal values (and NaN sticking), along dim."""
    if a.ndim == 0:
        return a, np.zeros((), np.int64)
    x = np.moveaxis(a, dim, -1)
    vals, idx = np.empty_like(x), np.zeros(x.shape, np.int64)
    for pos in np.ndindex(x.shape[:-1]):
        best, bi = None, 0
        for j, v in enumerate(x[pos]):
            if (
                j == 0
                or np.isnan(v)
                or (not np.isnan(best) and (v >= best if is_max else v <= best))
            ):
                best, bi = v, j
            vals[pos + (j,)], idx[pos + (j,)] = best, bi
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(name, shape, dim):
    check_op(
        lambda x, dim: getattr(flow, name)(x, dim),
        lambda a, dim: np_cumext(a, dim, name == "cummax"),
        [rand(shape)],
        dim=dim,
    )


def test_cummax_ties_nan_and_ints():
    r = flow.cummax(flow.tensor([1, 3, 3, 2, 5]), 0)
    assert r.values.tolist() == [1, 3, 3, 3, 5] and r.indices.tolist() == [0, 1, 2, 2, 4]
    r = flow.tensor([1.0, float("nan"), 3.0, float("nan")]).cummin(0)
    assert r.indices.tolist() == [0, 1, 1, 3] and np.isnan(r.values.detach().numpy()[1:]).all()
    x = flow.tensor([1.0, 2.0, 0.5, 2.0], requires_grad=True)
    flow.cummax(x, 0).values.sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 0.0, 1.0]  # indices [0, 1, 1, 3]


def np_sort(a, dim, descending=False):
    if a.ndim == 0:
        return a, np.zeros((), np.int64)
    idx = np.argsort(-a if descending else a, axis=dim, kind="stable")
    return np.take_along_axis(a, idx, axis=dim), idx


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(shape, dim, descending):
    check_op(flow.sort, np_sort, [rand(shape)], dim=dim, descending=descending)


def test_sort_stable_ties_nan_ints_bool():
    a = np.array([3, 1, 2, 1, 3, 0], dtype=np.int64)
    r = flow.sort(flow.tensor(a))
    assert r.values.tolist() == sorted(a) and r.indices.tolist() == [5, 1, 3, 2, 0, 4]
    r = flow.tensor(a).sort(descending=True)
    assert r.values.tolist() == [3, 3, 2, 1, 1, 0] and r.indices.tolist() == [0, 4, 2, 1, 3, 5]
    f = flow.tensor([2.0, float("nan"), -1.0, float("inf")])
    assert flow.argsort(f).tolist() == [2, 0, 3, 1]  # NaN is the largest
    assert flow.argsort(f, descending=True).tolist() == [1, 3, 0, 2]
    assert flow.sort(flow.tensor([True, False, True])).values.tolist() == [False, True, True]
    m = flow.msort(flow.tensor([[3.0, 1.0], [1.0, 2.0]]))
    assert m.tolist() == [[1.0, 1.0], [3.0, 2.0]]
    big = np.random.default_rng(0).standard_normal((4, 5000)).astype(np.float32)
    np.testing.assert_array_equal(
        flow.sort(flow.tensor(big), 1).values.detach().numpy(), np.sort(big, 1)
    )
    assert flow.sort(flow.zeros(0, 3), 0).values.shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64])
def test_sort_topk_dtypes_with_ties(dtype):
    """Every dtype, many ties: stable indices ascending and descending, topk's first k agree."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 6, size=(5, 64)).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        a[a == 0] = -0.0  # -0 and +0 are equal (stable between them)
        a[0, :3] = np.nan
        a *= np.where(rng.random(a.shape) < 0.5, 1, -1).astype(dtype)
    key = np.nan_to_num(a.astype(np.float64), nan=1e300)  # NaN largest
    for desc in (False, True):
        want = np.argsort(-key if desc else key, axis=1, kind="stable")
        r = flow.sort(flow.tensor(a), 1, descending=desc)
        np.testing.assert_array_equal(r.indices.detach().numpy(), want)
        np.testing.assert_array_equal(r.values.detach().numpy(), np.take_along_axis(a, want, 1))
        t = flow.topk(flow.tensor(a), 7, 1, largest=desc)
        np.testing.assert_array_equal(t.indices.detach().numpy(), want[:, :7])


def np_topk(a, k, dim, largest=True):
    v, i = np_sort(a, dim, descending=largest)
    if a.ndim == 0:
        return v, i
    sl = [slice(None)] * a.ndim
    sl[dim] = slice(0, k)
    return v[tuple(sl)], i[tuple(sl)]


@pytest.mark.parametrize("shape,dim,k", [((9,), 0, 3), ((3, 4, 5), 1, 2), ((3, 4, 5), -1, 5)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(shape, dim, k, largest):
    check_op(flow.topk, np_topk, [rand(shape)], k=k, dim=dim, largest=largest)


def test_topk_edges_and_errors():
    x = flow.tensor([[1.0, 5.0, 5.0, 2.0]])
    r = x.topk(2)
    assert r.values.tolist() == [[5.0, 5.0]] and r.indices.tolist() == [[1, 2]]
    assert flow.topk(x, 0).values.shape == (1, 0)
    with pytest.raises(IndexError, match=r"\[topk\] k \(5\) out of range"):
        flow.topk(x, 5)
    with pytest.raises(IndexError, match=r"\[sort\] dim 2 out of range"):
        flow.sort(x, 2)
    half = flow.cumsum(flow.ones(3, dtype=flow.float16), 0)  # computed in f32 (Dispatch)
    assert half.dtype == flow.float16 and half.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match=r"\[logcumsumexp\]"):
        flow.logcumsumexp(flow.tensor([1, 2]), 0)


def np_kthvalue(a, k, dim, keepdim=False):
    v, i = np_sort(a, dim)
    if a.ndim == 0:
        return v, i
    v, i = np.take(v, [k - 1], axis=dim), np.take(i, [k - 1], axis=dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


@pytest.mark.parametrize("keepdim", [False, True])
def test_kthvalue(keepdim):
    check_op(flow.kthvalue, np_kthvalue, [rand((3, 6))], k=4, dim=1, keepdim=keepdim)
    r = flow.tensor([3.0, 1.0, 2.0]).kthvalue(2)
    assert float(r.values) == 2.0 and int(r.indices) == 2
    with pytest.raises(IndexError, match=r"\[kthvalue\] k \(0\)"):
        flow.kthvalue(flow.ones(3), 0)


# ---- the scan table (oneflow_like/opdefs/scan.def) ----------------------------------------------
# Its APIs are tested above; each must be here with its sig, or the table test fails.
SCAN_APIS = {
    "argsort": "argsort",
    "cummax": "dim_pair",
    "cummin": "dim_pair",
    "cumprod": "dim_dtype",
    "cumsum": "dim_dtype",
    "kthvalue": "kthvalue",
    "logcumsumexp": "dim",
    "msort": "msort",
    "sort": "sort",
    "topk": "topk",
}
SCAN_SIG_ARGS = {  # the arguments after input / self
    "dim_dtype": ["dim", "*", "dtype"],
    "dim": ["dim"],
    "dim_pair": ["dim"],
    "sort": ["dim", "descending", "*", "stable"],
    "argsort": ["dim", "descending", "*", "stable"],
    "msort": [],
    "topk": ["k", "dim", "largest", "sorted"],
    "kthvalue": ["k", "dim", "keepdim"],
}


def _signature_args(fn, name):
    """The argument names in a pybind11 docstring's first line `name(a: T, *, b: T = d) -> R`."""
    line = fn.__doc__.splitlines()[0]
    assert line.startswith(name + "(") and ") -> " in line, line
    inner = line[len(name) + 1 : line.rindex(") -> ")]
    return [p.split(":")[0].strip() for p in inner.split(", ")]


def test_every_scan_api_is_declared_once_with_the_table_defaults():
    table = flow._C._scan_table()
    apis = {a["name"]: a["sig"] for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == SCAN_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"]) == 9
    assert ops["cumsum"]["attrs"] == {"dim": 0, "reverse": False}
    assert ops["cumsum"]["save"] == "none" and ops["cumprod"]["save"] == "both"
    assert ops["sort"]["attrs"] == {"dim": -1, "descending": False}
    assert ops["topk"]["attrs"] == {"dim": -1, "k": 0, "largest": True, "n": 0}
    for name, op in ops.items():
        if op["grad"] == "NoGrad":  # a backward op takes its forward op's attributes
            assert name.endswith("_grad") and op["out"] == "grad"
            assert ops[name[: -len("_grad")]]["attrs"] == op["attrs"]
        elif op["out"] != "same":  # (values, indices): the gradient scatters to the indices
            assert op["save"] == "outputs" and op["grad"].startswith("GatheredGrad<")
    for name, sig in SCAN_APIS.items():  # flow.name(input, ...) and Tensor.name(...)
        args = SCAN_SIG_ARGS[sig]
        assert _signature_args(getattr(flow._C, name), name) == ["input"] + args
        assert _signature_args(getattr(flow.Tensor, name), name) == ["self"] + args
    # the defaults are the structs'
    s, t = ops["sort"]["attrs"], ops["topk"]["attrs"]
    for fn in (flow._C.sort, flow.Tensor.sort, flow._C.argsort, flow.Tensor.argsort):
        assert f"dim: int = {s['dim']}, descending: bool = {s['descending']}, *" in fn.__doc__
    for fn in (flow._C.topk, flow.Tensor.topk):
        assert f"k: int, dim: int = {t['dim']}, largest: bool = {t['largest']}" in fn.__doc__
    assert f"k: int, dim: int = {t['dim']}, keepdim: bool = False" in flow._C.kthvalue.__doc__
    assert "dim: int, *, dtype: object = None" in flow.Tensor.cumprod.__doc__
    # two results come back as namedtuples named after the API
    x = flow.tensor([[3.0, 1.0, 2.0]])
    for name in ("cummax", "cummin", "sort", "topk", "kthvalue"):
        args = (1,) if name in ("topk", "kthvalue") else ()
        r = getattr(x, name)(*args, dim=1)
        assert type(r).__name__ == name and r._fields == ("values", "indices")
    np.testing.assert_array_equal(x.sort().values.detach().numpy(), [[1, 2, 3]])
    np.testing.assert_array_equal(
        flow.msort(flow.tensor([[3.0], [1.0], [2.0]])).detach().numpy(), [[1], [2], [3]]
    )


def test_scan_api_errors_name_the_op():
    x = flow.zeros(3, 4)
    with pytest.raises(TypeError, match=r"cumsum\(\): incompatible function arguments"):
        flow._C.cumsum(x, "0")
    with pytest.raises(TypeError, match=r"topk\(\): incompatible function arguments"):
        x.topk("1")
    with pytest.raises(TypeError, match=r"cummax\(\): incompatible function arguments"):
        x.cummax()
    with pytest.raises(IndexError, match=r"\[cumprod\] dim 2 out of range"):
        x.cumprod(2)
    with pytest.raises(IndexError, match=r"\[kthvalue\] k \(5\) out of range"):
        flow.kthvalue(x, 5)
