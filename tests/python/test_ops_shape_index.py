"""Shape and index ops, forward and backward, against float64 NumPy references."""
import numpy as np
import pytest

import oneflow_like as flow
from op_testing import RNG, check_op, rand


def idx(a, like=None):
    """int64 indices, on `like`'s device (the op tables run on OFL_TEST_DEVICE)."""
    return flow.tensor(a, dtype=flow.int64, device=None if like is None else like.device)


@pytest.mark.parametrize(
    "name,fn,ref,shape",
    [
        ("squeeze", lambda t: t.squeeze(), np.squeeze, (3, 1, 4, 1)),
        ("squeeze_dim", lambda t: flow.squeeze(t, 1), lambda a: np.squeeze(a, 1), (3, 1, 4)),
        (
            "unsqueeze",
            lambda t: flow.unsqueeze(t, -1) * 2,
            lambda a: np.expand_dims(a, -1) * 2,
            (3, 4),
        ),
        ("flatten", lambda t: t.flatten(1), lambda a: a.reshape(2, -1), (2, 3, 4)),
        (
            "flatten_mid",
            lambda t: flow.flatten(t.transpose(0, 2), 0, 1),
            lambda a: a.transpose(2, 1, 0).reshape(-1, 2),
            (2, 3, 4),
        ),
        ("narrow", lambda t: t.narrow(1, 1, 2), lambda a: a[:, 1:3], (3, 4)),
        ("select", lambda t: t.select(1, -1), lambda a: a[:, -1], (3, 4, 2)),
        (
            "expand_as",
            lambda t: t.expand_as(flow.zeros(2, 3, 4)),
            lambda a: np.broadcast_to(a, (2, 3, 4)),
            (3, 1),
        ),
        ("repeat", lambda t: t.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3)), (3, 2)),
        ("flip", lambda t: flow.flip(t, (0, 2)), lambda a: a[::-1, :, ::-1], (2, 3, 4)),
        ("flip_method_int", lambda t: t.flip(-1), lambda a: a[..., ::-1], (2, 3, 4)),
        ("flip_method_ints", lambda t: t.flip(0, 1), lambda a: a[::-1, ::-1], (2, 3, 4)),
        (
            "roll",
            lambda t: flow.roll(t, (1, -2), (0, 1)),
            lambda a: np.roll(a, (1, -2), (0, 1)),
            (3, 4),
        ),
        ("roll_flat", lambda t: flow.roll(t, 3), lambda a: np.roll(a, 3), (3, 4)),
        ("tril", lambda t: flow.tril(t, -1), lambda a: np.tril(a, -1), (2, 4, 5)),
        ("triu", lambda t: t.triu(1), lambda a: np.triu(a, 1), (4, 3)),
        (
            "pad_const",
            lambda t: flow.pad(t, (1, 2, 0, 1), value=0.5),
            lambda a: np.pad(a, ((0, 0), (0, 1), (1, 2)), constant_values=0.5),
            (2, 3, 4),
        ),
        (
            "pad_crop",
            lambda t: flow.pad(t, (-1, 1)),
            lambda a: np.pad(a[:, 1:], ((0, 0), (0, 1))),
            (3, 4),
        ),
        (
            "pad_reflect",
            lambda t: flow.pad(t, (2, 1), mode="reflect"),
            lambda a: np.pad(a, ((0, 0), (2, 1)), "reflect"),
            (3, 4),
        ),
        (
            "pad_replicate",
            lambda t: flow.pad(t, (2, 1, 1, 0), mode="replicate"),
            lambda a: np.pad(a, ((1, 0), (2, 1)), "edge"),
            (3, 4),
        ),
    ],
)
def test_unary_shape_ops(name, fn, ref, shape):
    check_op(fn, ref, [rand(shape)])


def test_slicing_with_steps():
    check_op(lambda t: t[1:, ::2, -3::3], lambda a: a[1:, ::2, -3::3], [rand((3, 5, 7))])
    check_op(lambda t: t[..., None, 1] * 3, lambda a: a[..., None, 1] * 3, [rand((2, 3, 4))])


def test_cat_stack():
    a, b, c = rand((2, 3)), rand((4, 3)), rand((1, 3))
    check_op(
        lambda x, y, z: flow.cat([x, y, z], 0),
        lambda x, y, z: np.concatenate([x, y, z], 0),
        [a, b, c],
    )
    check_op(
        lambda x, y: flow.cat((x, y), dim=-1),
        lambda x, y: np.concatenate([x, y], -1),
        [rand((2, 3)), rand((2, 5))],
    )
    check_op(
        lambda x, y: flow.stack([x, y], 1),
        lambda x, y: np.stack([x, y], 1),
        [rand((2, 3)), rand((2, 3))],
    )
    check_op(
        lambda x, y: flow.concat([x.t(), y], 1),
        lambda x, y: np.concatenate([x.T, y], 1),
        [rand((2, 3)), rand((3, 1))],
    )


def test_split_chunk_unbind():
    x = rand((5, 4))
    check_op(lambda t: flow.split(t, 2)[2] * 2, lambda a: a[4:] * 2, [x])
    check_op(
        lambda t: flow.cat(flow.split(t, [1, 3], dim=1)[::-1], 1),
        lambda a: np.concatenate([a[:, 1:], a[:, :1]], 1),
        [x],
    )
    check_op(lambda t: t.chunk(3, 0)[1], lambda a: a[2:4], [x])
    check_op(lambda t: t.unbind(1)[3], lambda a: a[:, 3], [x])
    assert [p.shape for p in flow.chunk(flow.zeros(5), 3)] == [(2,), (2,), (1,)]


def test_index_select_gather_scatter():
    x = rand((4, 5))
    i = RNG.integers(0, 5, size=6)
    check_op(lambda t: flow.index_select(t, 1, idx(i, t)), lambda a: a[:, i], [x])
    g = RNG.integers(0, 4, size=(3, 5))
    check_op(lambda t: flow.gather(t, 0, idx(g, t)), lambda a: np.take_along_axis(a, g, 0), [x])
    # scatter with unique positions so the reference is unambiguous
    perm = np.stack([RNG.permutation(4)[:3] for _ in range(5)], 1)

    def np_scatter(a, s):
        r = a.copy()
        np.put_along_axis(r, perm, s[:3], 0)
        return r

    check_op(lambda t, s: flow.scatter(t, 0, idx(perm, t), s), np_scatter, [x, rand((4, 5))])

    def np_scatter_add(a, s):
        r = a.copy()
        for (p, q), v in np.ndenumerate(g):
            r[v, q] += s[p, q]
        return r

    check_op(lambda t, s: flow.scatter_add(t, 0, idx(g, t), s), np_scatter_add, [x, rand((3, 5))])

    def np_fill(a):
        r = a.copy()
        np.put_along_axis(r, perm, -2.0, 0)
        return r

    check_op(lambda t: t.scatter(0, idx(perm, t), -2.0), np_fill, [x])


def test_inplace_scatter():
    x = flow.zeros(3, 4)
    x.scatter_(1, idx([[0], [1], [3]]), flow.ones(3, 1) * 5)
    x.scatter_add_(0, idx([[0, 0, 0, 0]]), flow.ones(1, 4))
    ref = np.zeros((3, 4))
    ref[[0, 1, 2], [0, 1, 3]] = 5
    ref[0] += 1
    np.testing.assert_allclose(x.detach().numpy(), ref)


def test_masked_fill_select():
    x = rand((3, 4))
    m = RNG.uniform(size=(4,)) > 0.5
    check_op(
        lambda t: flow.masked_fill(t, flow.tensor(m, device=t.device), 2.5),
        lambda a: np.where(m, 2.5, a),
        [x],
    )
    m2 = RNG.uniform(size=(3, 4)) > 0.5
    check_op(lambda t: t.masked_select(flow.tensor(m2, device=t.device)), lambda a: a[m2], [x])
    y = flow.tensor(x)
    y.masked_fill_(flow.tensor(m), -1)
    np.testing.assert_allclose(y.detach().numpy(), np.where(m, -1, x).astype(np.float32))


def test_nonzero_one_hot():
    a = np.array([[0, 1, 0], [2, 0, 3]])
    np.testing.assert_array_equal(flow.nonzero(flow.tensor(a)).detach().numpy(), np.argwhere(a))
    rows, cols = flow.tensor(a).nonzero(as_tuple=True)
    np.testing.assert_array_equal(rows.detach().numpy(), np.nonzero(a)[0])
    np.testing.assert_array_equal(cols.detach().numpy(), np.nonzero(a)[1])
    lab = RNG.integers(0, 5, size=(2, 3))
    oh = flow.one_hot(idx(lab), 5)
    assert oh.dtype == flow.int64
    np.testing.assert_array_equal(oh.detach().numpy(), np.eye(5, dtype=np.int64)[lab])
    np.testing.assert_array_equal(
        flow.one_hot(idx([0, 3])).detach().numpy(), np.eye(4, dtype=np.int64)[[0, 3]]
    )


def test_advanced_index_grad():
    i = RNG.integers(-3, 3, size=(2, 2))
    check_op(lambda t: t[idx(i, t)], lambda a: a[i], [rand((3, 4))])
    j = np.array([0, 2, 0])  # repeated rows accumulate in the gradient
    check_op(lambda t: t[:, idx(j, t), 1:], lambda a: a[:, j, 1:], [rand((2, 3, 4))])
    check_op(
        lambda t: t[idx([1, 0], t), :, idx([2, 3], t)],
        lambda a: a[[1, 0], :, [2, 3]],
        [rand((2, 3, 4))],
    )


def test_index_put_grad():
    i = np.array([0, 2])

    def np_put(a, v):
        r = a.copy()
        r[i] = v
        return r

    check_op(lambda t, v: flow.index_put(t, (idx(i, t),), v), np_put, [rand((3, 4)), rand((4,))])

    def np_acc(a, v):
        r = a.copy()
        np.add.at(r, np.array([1, 1, 0]), v)
        return r

    check_op(
        lambda t, v: t.index_put((idx([1, 1, 0], t),), v, accumulate=True),
        np_acc,
        [rand((3, 4)), rand((3, 4))],
    )


def test_kernel_index_errors_raise_at_sync_and_runtime_survives():
    x = flow.zeros(3, 5)
    for fn, msg in [
        (
            lambda: flow.gather(x, 1, idx([[7]])),
            r"\[gather\] index 7 out of range for dim 1 of size 5",
        ),
        (
            lambda: flow.index_select(x, 0, idx([3])),
            r"\[index_select\] index 3 out of range for dim 0 of size 3",
        ),
        (
            lambda: x.scatter(1, idx([[9]]), 1.0),
            r"\[scatter\] index 9 out of range for dim 1 of size 5",
        ),
        (lambda: x[idx([4])], r"\[index\] index 4 out of range for dim 0 of size 3"),
        (lambda: flow.one_hot(idx([5]), 3), r"\[one_hot\] index 5 out of range"),
    ]:
        with pytest.raises(Exception, match=msg):
            y = fn()
            flow.sync()
            y.detach().numpy()
        # the runtime stays usable
        np.testing.assert_allclose((flow.ones(2) + 1).detach().numpy(), [2, 2])


def test_schema_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"\[cat\].*\[2,3\].*\[2,4\]"):
        flow.cat([flow.zeros(2, 3), flow.zeros(2, 4)], 0)
    with pytest.raises(ValueError, match=r"\[stack\]"):
        flow.stack([flow.zeros(2), flow.zeros(3)])
    with pytest.raises(ValueError, match=r"\[split\].*\[5,4\]"):
        flow.split(flow.zeros(5, 4), [2, 2])
    with pytest.raises(ValueError, match=r"\[gather\].*must have as many dims"):
        flow.gather(flow.zeros(3, 4), 0, idx([0]))
    with pytest.raises(IndexError, match=r"\[narrow\]"):
        flow.narrow(flow.zeros(3), 0, 2, 2)
    with pytest.raises(TypeError, match=r"\[masked_fill\] mask must be a bool"):
        flow.masked_fill(flow.zeros(3), flow.zeros(3), 1.0)
    with pytest.raises(ValueError, match=r"\[tril\]"):
        flow.tril(flow.zeros(3))
    with pytest.raises(ValueError, match=r"\[pad\]"):
        flow.pad(flow.zeros(3), (4, 0), mode="reflect")


def test_views_share_storage():
    x = flow.zeros(3, 4)
    x.narrow(1, 1, 2).fill_(1)
    x.select(0, 2).fill_(2)
    x.unsqueeze(0).squeeze(0)[0, 0] = 3
    ref = np.zeros((3, 4))
    ref[:, 1:3] = 1
    ref[2] = 2
    ref[0, 0] = 3
    np.testing.assert_allclose(x.detach().numpy(), ref)


# ---- the index table (oneflow_like/opdefs/index.def) ---------------------------------------------
# Its APIs are tested above; every name in it is a Python function and Tensor method (kind
# fn_method) or an in-place Tensor method (kind method_) with the PyTorch signature of its sig.
INDEX_APIS = [
    "gather",
    "index_add",
    "index_put",
    "index_put_",
    "index_select",
    "masked_fill",
    "masked_fill_",
    "masked_select",
    "nonzero",
    "one_hot",
    "scatter",
    "scatter_",
    "scatter_add",
    "scatter_add_",
]
INDEX_SIG_ARGS = {  # the arguments after input / self
    "dim_index": ["dim", "index"],
    "dim_index_src": ["dim", "index", "src"],
    "index_add": ["dim", "index", "source", "*", "alpha"],
    "scatter": ["dim", "index", "src", "reduce"],
    "mask": ["mask"],
    "mask_value": ["mask", "value"],
    "nonzero": ["*", "as_tuple"],
    "one_hot": ["num_classes"],
    "index_put": ["indices", "values", "accumulate"],
}


def _signature_args(fn, name):
    """The argument names in a pybind11 docstring's first line `name(a: T, *, b: T = d) -> R`."""
    line = fn.__doc__.splitlines()[0]
    assert line.startswith(name + "(") and ") -> " in line, line
    inner = line[len(name) + 1 : line.rindex(") -> ")]
    return [p.split(":")[0].strip() for p in inner.split(", ")]


def test_every_index_api_is_declared_once_with_the_table_defaults():
    table = flow._C._index_table()
    names = [a["name"] for a in table["apis"]]
    assert sorted(names) == INDEX_APIS and len(set(names)) == len(names)
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"])
    assert ops["index_select"]["attrs"] == {"dim": 0}
    assert ops["scatter"]["attrs"] == {"dim": 0, "reduce": "none", "value": 0.0}
    assert ops["masked_fill"]["attrs"] == {"value": 0.0}
    assert ops["one_hot"]["attrs"] == {"num_classes": -1}
    assert ops["index_put"]["attrs"] == {"dim": 0, "accumulate": False}
    for name, op in ops.items():
        if op["out"] == "target":  # in place: the out-of-place op's attributes and the target's
            assert name.endswith("_") and ops[name[:-1]]["out"] != "target"
            assert op["attrs"] == {**ops[name[:-1]]["attrs"], "shape": [], "dtype": flow.float32}
        if op["grad"] == "NoGrad":
            assert op["save"] == "none"
        else:
            assert op["save"] == "inputs" and op["out"] != "target"
    for api in table["apis"]:
        name, args = api["name"], INDEX_SIG_ARGS[api["sig"]]
        assert _signature_args(getattr(flow.Tensor, name), name) == ["self"] + args
        if api["kind"] == "fn_method":
            assert _signature_args(getattr(flow._C, name), name) == ["input"] + args
        else:
            assert api["kind"] == "method_" and name.endswith("_") and api["entry"].endswith("_")
    # the defaults are the structs'
    n = ops["one_hot"]["attrs"]["num_classes"]
    assert f"num_classes: int = {n}" in flow._C.one_hot.__doc__
    assert f"num_classes: int = {n}" in flow.Tensor.one_hot.__doc__
    assert flow.one_hot(idx([0, 2])).shape == (2, 3)
    for fn in (flow._C.index_put, flow.Tensor.index_put, flow.Tensor.index_put_):
        assert "accumulate: bool = False" in fn.__doc__
    x = flow.zeros(3)
    np.testing.assert_allclose(
        x.index_put((idx([1, 1]),), flow.ones(2)).detach().numpy(), [0, 1, 0]
    )
    assert "alpha: float = 1.0" in flow._C.index_add.__doc__
    assert "reduce: object = None" in flow.Tensor.scatter_.__doc__


def test_index_api_errors_name_the_op():
    x = flow.zeros(3, 4)
    with pytest.raises(TypeError, match=r"index_select\(\): incompatible function arguments"):
        flow._C.index_select(x, "0", idx([0]))
    with pytest.raises(TypeError, match=r"gather\(\): incompatible function arguments"):
        x.gather(0, [[0]], 1)
    with pytest.raises(ValueError, match=r"\[scatter\] only reduce='add' is supported"):
        flow._C.scatter(x, 0, idx([[0]]), 1.0, reduce="multiply")
    with pytest.raises(ValueError, match=r"\[scatter_\] reduce='add' needs a source tensor"):
        x.scatter_(0, idx([[0]]), 1.0, reduce="add")
    with pytest.raises(TypeError, match=r"\[masked_fill_\] mask must be a bool"):
        x.masked_fill_(flow.zeros(4), 1.0)
    with pytest.raises(ValueError, match=r"\[scatter_add\] index .* must have as many dims"):
        x.scatter_add(0, idx([0]), flow.ones(3, 4))


# ---- the shape table (oneflow_like/opdefs/shape.def) ---------------------------------------------
# Its APIs are tested above; every name in it is a Python function and, kind fn_method, a Tensor
# method with the PyTorch signature of its sig. The views' variadic methods (reshape, view, expand,
# permute, ...) are hand-written and tested above and in test_tensor_api.py.
SHAPE_APIS = {
    "as_strided": ("fn_method", "as_strided"),
    "cat": ("fn", "tensors"),
    "chunk": ("fn_method", "chunk"),
    "concat": ("fn", "tensors"),
    "concatenate": ("fn", "tensors"),
    "flatten": ("fn_method", "flatten"),
    "flip": ("fn_method", "flip"),
    "narrow": ("fn_method", "narrow"),
    "pad": ("fn", "pad"),
    "roll": ("fn_method", "roll"),
    "select": ("fn_method", "select"),
    "split": ("fn_method", "split"),
    "squeeze": ("fn_method", "opt_dims"),
    "stack": ("fn", "tensors"),
    "tril": ("fn_method", "diagonal"),
    "triu": ("fn_method", "diagonal"),
    "unbind": ("fn_method", "unbind"),
    "unsqueeze": ("fn_method", "dim"),
}
SHAPE_SIG_ARGS = {  # the function's arguments; its Tensor method's take self for the first
    "dim": ["input", "dim"],
    "opt_dims": ["input", "dim"],
    "flatten": ["input", "start_dim", "end_dim"],
    "narrow": ["input", "dim", "start", "length"],
    "select": ["input", "dim", "index"],
    "tensors": ["tensors", "dim"],
    "split": ["tensor", "split_size_or_sections", "dim"],
    "chunk": ["input", "chunks", "dim"],
    "unbind": ["input", "dim"],
    "flip": ["input", "dims"],
    "roll": ["input", "shifts", "dims"],
    "diagonal": ["input", "diagonal"],
    "as_strided": ["input", "size", "stride", "storage_offset"],
    "pad": ["input", "pad", "mode", "value"],
}
SHAPE_METHOD_ARGS = {"split": ["self", "split_size", "dim"], "flip": ["self", "*args"]}
SHAPE_VIEWS = [
    "as_strided",
    "expand",
    "permute",
    "reshape",
    "select",
    "slice",
    "squeeze",
    "unsqueeze",
]


def test_every_shape_api_is_declared_once_with_the_table_defaults():
    table = flow._C._shape_table()
    apis = {a["name"]: (a["kind"], a["sig"]) for a in table["apis"]}
    assert len(apis) == len(table["apis"]) and apis == SHAPE_APIS
    ops = {o["name"]: o for o in table["ops"]}
    assert len(ops) == len(table["ops"]) == 13
    assert sorted(n for n, o in ops.items() if o["view"] != "none") == SHAPE_VIEWS
    for name, op in ops.items():
        assert op["grad"] != "NoGrad"
        # views run no kernel; the copies' CPU kernels take f16/bf16
        assert op["lowp"] == ("none" if op["view"] != "none" else "cpu"), name
        # a view carries its input's shape, so its gradient saves nothing
        if "in_shape" in op["attrs"]:
            assert op["save"] == "none" and op["attrs"]["in_shape"] == [], name
    # reshape/expand read only the input's shape (the node's input meta): nothing saved, so a
    # view of the base changed in place later does not break their backward (torch's ViewBackward0)
    assert ops["reshape"]["save"] == ops["expand"]["save"] == "none"
    assert ops["tril"]["attrs"] == {"diagonal": 0, "upper": False}
    assert ops["tril"]["layout"] == "contiguous" and ops["cat"]["layout"] == "strided"
    assert ops["cat"]["attrs"] == {"dim": 0, "sizes": []}
    assert ops["pad"]["attrs"] == {"pads": [], "value": 0.0, "in_shape": []}
    assert ops["slice"]["attrs"] == {"dim": 0, "start": 0, "length": 0, "step": 1, "in_shape": []}
    # the attribute order the op calls carry (as_strided_scatter's in_shape first)
    assert list(ops["as_strided"]["attrs"]) == ["shape", "strides", "offset", "in_shape"]
    assert list(ops["as_strided_scatter"]["attrs"]) == ["in_shape", "shape", "strides", "offset"]
    for name, (kind, sig) in SHAPE_APIS.items():
        args = SHAPE_SIG_ARGS[sig]
        assert _signature_args(getattr(flow._C, name), name) == args
        if kind == "fn_method":
            method = SHAPE_METHOD_ARGS.get(sig, ["self"] + args[1:])
            assert _signature_args(getattr(flow.Tensor, name), name) == method
    # the defaults are the structs'
    k, d = ops["tril"]["attrs"]["diagonal"], ops["cat"]["attrs"]["dim"]
    for fn in (flow._C.tril, flow._C.triu, flow.Tensor.tril, flow.Tensor.triu):
        assert f"diagonal: int = {k}" in fn.__doc__
    for name in ("cat", "concat", "concatenate", "stack"):
        assert f"dim: int = {d}" in getattr(flow._C, name).__doc__
    assert "mode: str = 'constant', value: object = None" in flow._C.pad.__doc__
    assert "storage_offset: object = None" in flow.Tensor.as_strided.__doc__
    assert "start_dim: int = 0, end_dim: int = -1" in flow._C.flatten.__doc__
    v = ops["pad"]["attrs"]["value"]
    np.testing.assert_allclose(flow._C.pad(flow.ones(2), (1, 1)).detach().numpy(), [v, 1, 1, v])
    np.testing.assert_allclose(flow.ones(2, 2).triu().detach().numpy(), np.triu(np.ones((2, 2)), k))
    x = flow.arange(6.0)
    np.testing.assert_allclose(flow._C.as_strided(x[1:], (2,), (2,)).detach().numpy(), [1, 3])


def test_shape_api_errors_name_the_op():
    x = flow.zeros(3, 4)
    with pytest.raises(TypeError, match=r"narrow\(\): incompatible function arguments"):
        flow._C.narrow(x, "0", 0, 1)
    with pytest.raises(TypeError, match=r"unsqueeze\(\): incompatible function arguments"):
        x.unsqueeze("0")
    with pytest.raises(ValueError, match=r"\[triu\] expects a tensor with >= 2 dims"):
        flow.zeros(3).triu()
    with pytest.raises(ValueError, match=r"\[reshape\] shape \[5\] is invalid for input"):
        flow._C.reshape(x, (5,))
    with pytest.raises(ValueError, match=r"\[expand\] cannot expand f32\[3,1\] to \[3\]"):
        flow.zeros(3, 1).expand(3)
    with pytest.raises(IndexError, match=r"\[as_strided\] storage_offset 0 precedes"):
        flow._C.as_strided(x[1:], (2,), (1,), 0)
    with pytest.raises(IndexError, match=r"\[select\] index 5 is out of bounds"):
        x.select(1, 5)
