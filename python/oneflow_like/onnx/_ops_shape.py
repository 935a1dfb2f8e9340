"""ONNX mappings of our shape, indexing and reduction ops (ops/shape_ops.cc, index.cc, ...)."""
import numpy as np

from ._builder import INT64_MAX, NP_DTYPES

OPS = {}


def _out(c, op_type, ins, **attrs):
    c.b.node(op_type, ins, [c.outs[0]], **attrs)


def _reshape(c):
    where = f"reshape to {list(c.attrs['shape'])}"
    shape = c.b.shape_tensor(c.attrs["shape"], (c.attrs_b or c.attrs)["shape"], where, True)
    _out(c, "Reshape", [c.ins[0], shape])


def _expand(c):
    shape = c.b.shape_tensor(c.attrs["shape"], (c.attrs_b or c.attrs)["shape"], "expand")
    _out(c, "Expand", [c.ins[0], shape])


def _full(c):
    dtype, value = c.out_dtype(0), c.attrs["value"]
    shape_a, shape_b = c.out_shape(0), c.out_shape_b(0)
    if list(shape_a) == list(shape_b):
        arr = np.full(shape_a, value, dtype=NP_DTYPES[dtype])
        c.b.node("Identity", [c.b.const(arr, "full")], [c.outs[0]])
        return
    shape = c.b.shape_tensor(shape_a, shape_b, "full")
    from onnx import numpy_helper

    val = numpy_helper.from_array(np.array([value], dtype=NP_DTYPES[dtype]))
    _out(c, "ConstantOfShape", [shape], value=val)


def _slice(c):
    dim, start, step = c.static_attr("dim"), c.static_attr("start"), c.static_attr("step")
    length = c.attrs["length"]
    end = start + length * step
    n_a, n_b = c.shape(0)[dim], c.shape_b(0)[dim]
    lb = (c.attrs_b or c.attrs)["length"]
    if step > 0 and end >= n_a and start + lb * step >= n_b:
        end = INT64_MAX  # to the end of the dim, whatever its length
    elif lb != length:
        raise c.unsupported("a slice whose length depends on a dynamic axis")
    if step < 0 and end < 0:
        end = -INT64_MAX
    ins = [c.ins[0], c.b.ints([start]), c.b.ints([end]), c.b.ints([dim]), c.b.ints([step])]
    _out(c, "Slice", ins)


def _flip(c):
    dims = list(c.attrs["dims"])
    k = len(dims)
    ins = [c.ins[0], c.b.ints([-1] * k), c.b.ints([-INT64_MAX] * k), c.b.ints(dims)]
    _out(c, "Slice", ins + [c.b.ints([-1] * k)])


def _pad(c):
    p = list(c.static_attr("pads"))
    begins, ends = p[0::2], p[1::2]
    value = c.b.const_like(c.attrs.get("value", 0.0), c.dtype(0))
    _out(c, "Pad", [c.ins[0], c.b.ints(begins + ends), value], mode="constant")


def _reduce(op_type):
    def fn(c):
        dims, keep = list(c.static_attr("dims")), int(c.attrs.get("keepdim", False))
        if not dims:
            dims = list(range(len(c.shape(0))))
        if op_type == "ReduceSum" or c.b.opset >= 18:
            _out(c, op_type, [c.ins[0], c.b.ints(dims)], keepdims=keep)
        else:
            _out(c, op_type, [c.ins[0]], axes=dims, keepdims=keep)

    return fn


def _arg(op_type):
    def fn(c):
        dims, keep = list(c.static_attr("dims")), int(c.attrs.get("keepdim", False))
        x = c.ins[0]
        if len(dims) != 1:  # over all elements: flatten first
            x, dims = c.b.node("Reshape", [x, c.b.ints([-1])]), [0]
        _out(c, op_type, [x], axis=dims[0], keepdims=keep)

    return fn


def _max_min_dim(reduce, arg):
    def fn(c):
        (dim,), keep = c.static_attr("dims"), int(c.attrs.get("keepdim", False))
        if c.b.opset >= 18:
            c.b.node(reduce, [c.ins[0], c.b.ints([dim])], [c.outs[0]], keepdims=keep)
        else:
            c.b.node(reduce, [c.ins[0]], [c.outs[0]], axes=[dim], keepdims=keep)
        c.b.node(arg, [c.ins[0]], [c.outs[1]], axis=dim, keepdims=keep, select_last_index=0)

    return fn


def _var_std(is_std):
    def fn(c):
        dims, keep = list(c.static_attr("dims")), int(c.attrs.get("keepdim", False))
        shape = c.shape(0)
        dims = dims or list(range(len(shape)))
        if any(shape[d] != c.shape_b(0)[d] for d in dims):
            raise c.unsupported("a variance over a dynamic axis")
        n = int(np.prod([shape[d] for d in dims])) - c.attrs.get("correction", 1)
        x, axes = c.ins[0], c.b.ints(dims)
        mean = _reduce_mean(c, x, dims, 1)
        d = c.b.node("Sub", [x, mean])
        ss = c.b.node("ReduceSum", [c.b.node("Mul", [d, d]), axes], keepdims=keep)
        var = c.b.node("Div", [ss, c.b.const_like(max(n, 0), c.dtype(0))])
        c.b.node("Sqrt" if is_std else "Identity", [var], [c.outs[0]])

    return fn


def _reduce_mean(c, x, dims, keep):
    if c.b.opset >= 18:
        return c.b.node("ReduceMean", [x, c.b.ints(dims)], keepdims=keep)
    return c.b.node("ReduceMean", [x], axes=list(dims), keepdims=keep)


def _select(c):
    idx = c.b.const(np.array(c.static_attr("index"), dtype=np.int64), "index")
    _out(c, "Gather", [c.ins[0], idx], axis=c.static_attr("dim"))


def _tril(c):
    k, upper = c.static_attr("diagonal"), bool(c.attrs.get("upper", False))
    if c.b.opset >= 14:
        _out(c, "Trilu", [c.ins[0], c.b.ints(k)], upper=int(upper))
        return
    r, n = c.shape(0)[-2:]  # Trilu is opset 14: keep a constant mask of the last two dims
    if list(c.shape_b(0)[-2:]) != [r, n]:
        raise c.unsupported("tril/triu over a dynamic axis needs opset 14")
    keep = np.triu(np.ones((r, n), bool), k) if upper else np.tril(np.ones((r, n), bool), k)
    if c.dtype(0) == "bool":  # onnxruntime's Where before opset 16 has no bool kernel
        _out(c, "And", [c.b.const(keep, "tril_mask"), c.ins[0]])
        return
    zero = c.b.const_like(0, c.dtype(0))
    _out(c, "Where", [c.b.const(keep, "tril_mask"), c.ins[0], zero])


OPS.update(
    {
        "reshape": _reshape,
        "expand": _expand,
        "full": _full,
        "slice": _slice,
        "flip": _flip,
        "pad": _pad,
        "select": _select,
        "permute": lambda c: _out(c, "Transpose", c.ins[:1], perm=list(c.static_attr("perm"))),
        "squeeze": lambda c: _out(c, "Squeeze", [c.ins[0], c.b.ints(list(c.attrs["dims"]))]),
        "unsqueeze": lambda c: _out(c, "Unsqueeze", [c.ins[0], c.b.ints([c.attrs["dim"]])]),
        "cat": lambda c: _out(c, "Concat", c.ins, axis=c.static_attr("dim")),
        "tril": _tril,
        "index_select": lambda c: _out(c, "Gather", c.ins[:2], axis=c.static_attr("dim")),
        "gather": lambda c: _out(c, "GatherElements", c.ins[:2], axis=c.static_attr("dim")),
        "embedding": lambda c: _out(c, "Gather", [c.ins[0], c.ins[1]], axis=0),
        "sum": _reduce("ReduceSum"),
        "prod": _reduce("ReduceProd"),
        "amax": _reduce("ReduceMax"),
        "amin": _reduce("ReduceMin"),
        "logsumexp": _reduce("ReduceLogSumExp"),
        "argmax": _arg("ArgMax"),
        "argmin": _arg("ArgMin"),
        "max_dim": _max_min_dim("ReduceMax", "ArgMax"),
        "min_dim": _max_min_dim("ReduceMin", "ArgMin"),
        "var": _var_std(False),
        "std": _var_std(True),
        "softmax": lambda c: _out(c, "Softmax", c.ins[:1], axis=c.attrs["dim"]),
        "log_softmax": lambda c: _out(c, "LogSoftmax", c.ins[:1], axis=c.attrs["dim"]),
    }
)
