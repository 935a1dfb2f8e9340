"""ONNX mappings of our layer ops: GEMMs, convolution, pooling, normalisation, attention bias."""
import numpy as np

from ._builder import NP_DTYPES

OPS = {}


def _scalar(c, v):
    return c.b.const_like(v, c.dtype(0))


def _matmul(c):
    alpha, beta = c.attrs.get("alpha", 1.0), c.attrs.get("beta", 1.0)
    a, b = c.ins[0], c.ins[1]
    has_c = len(c.ins) > 2
    if has_c and len(c.shape(0)) == 2 and len(c.shape(1)) == 2:
        trans_b, producer = 0, c.b.producer.get(c.in_ids[1])
        if producer and producer[0] == "permute" and list(producer[1]["perm"]) == [1, 0]:
            b, trans_b = c.b.name_of(producer[2][0]), 1  # Linear: x W^T + b as one Gemm
        c.b.node("Gemm", [a, b, c.ins[2]], [c.outs[0]], alpha=alpha, beta=beta, transB=trans_b)
        return
    y = c.b.node("MatMul", [a, b])
    if alpha != 1:
        y = c.b.node("Mul", [y, _scalar(c, alpha)])
    if has_c:
        bias = c.ins[2] if beta == 1 else c.b.node("Mul", [c.ins[2], _scalar(c, beta)])
        y = c.b.node("Add", [y, bias])
    c.b.node("Identity", [y], [c.outs[0]])


def _conv2d(c):
    p = list(c.static_attr("padding"))
    c.b.node(
        "Conv",
        c.ins,
        [c.outs[0]],
        strides=list(c.static_attr("stride")),
        pads=p + p,
        dilations=list(c.static_attr("dilation")),
        group=c.static_attr("groups"),
    )


def _pool_attrs(c):
    p = list(c.static_attr("padding"))
    return dict(
        kernel_shape=list(c.static_attr("kernel")),
        strides=list(c.static_attr("stride")),
        pads=p + p,
        ceil_mode=int(c.static_attr("ceil_mode")),
    )


def _max_pool2d(c):
    c.b.node(
        "MaxPool", c.ins[:1], [c.outs[0]], dilations=list(c.attrs["dilation"]), **_pool_attrs(c)
    )


def _avg_pool2d(c):
    if c.attrs.get("divisor_override", 0):
        raise c.unsupported("avg_pool2d with divisor_override")
    attrs = _pool_attrs(c)
    if list(c.attrs.get("dilation", [1, 1])) != [1, 1]:
        if c.b.opset < 19:
            raise c.unsupported("a dilated average pool needs opset 19")
        attrs["dilations"] = list(c.attrs["dilation"])
    attrs["count_include_pad"] = int(c.attrs.get("count_include_pad", True))
    c.b.node("AveragePool", c.ins[:1], [c.outs[0]], **attrs)


def _adaptive_avg_pool2d(c):
    (h, w), (oh, ow) = c.shape(0)[2:], c.out_shape(0)[2:]
    if (oh, ow) == (1, 1):
        c.b.node("GlobalAveragePool", c.ins[:1], [c.outs[0]])
    elif h % oh == 0 and w % ow == 0:
        k = [h // oh, w // ow]
        c.b.node("AveragePool", c.ins[:1], [c.outs[0]], kernel_shape=k, strides=k)
    else:
        raise c.unsupported(f"adaptive_avg_pool2d from {h}x{w} to {oh}x{ow} (not a whole window)")


def _batch_norm(c):
    if c.attrs.get("training"):
        raise c.unsupported("batch_norm in training mode (export calls model.eval())")
    c.b.node("BatchNormalization", c.ins[:5], [c.outs[0]], epsilon=c.attrs.get("eps", 1e-5))


def _affine(c, y, first, shape):
    """y * weight + bias for the optional affine inputs of a row norm (weights reshaped)."""
    k = first
    for flag, op in (("has_weight", "Mul"), ("has_bias", "Add")):
        if c.attrs.get(flag):
            p = c.ins[k]
            if shape is not None:
                p = c.b.node("Reshape", [p, c.b.ints(shape)])
            y, k = c.b.node(op, [y, p]), k + 1
    return y


def _layer_norm(c):
    n = c.attrs["channels_per_group"] * c.attrs["inner"]
    shape, k, prod = c.shape(0), 0, 1
    while prod < n:
        k, prod = k + 1, prod * shape[-k - 1]
    eps = c.attrs.get("eps", 1e-5)
    if c.b.opset >= 17:
        ins = [c.ins[0]]
        w = c.ins[1] if c.attrs.get("has_weight") else None
        if w is None:
            w = c.b.const(np.ones(shape[len(shape) - k :], NP_DTYPES[c.dtype(0)]), "ones")
        ins.append(w)
        if c.attrs.get("has_bias"):
            ins.append(c.ins[1 + bool(c.attrs.get("has_weight"))])
        c.b.node("LayerNormalization", ins, [c.outs[0]], axis=-k, epsilon=eps)
        return
    dims = list(range(len(shape) - k, len(shape)))
    y = _normalize(c, c.ins[0], dims, eps)
    c.b.node("Identity", [_affine(c, y, 1, None)], [c.outs[0]])


def _normalize(c, x, dims, eps):
    from ._ops_shape import _reduce_mean

    mean = _reduce_mean(c, x, dims, 1)
    d = c.b.node("Sub", [x, mean])
    var = _reduce_mean(c, c.b.node("Mul", [d, d]), dims, 1)
    return c.b.node("Div", [d, c.b.node("Sqrt", [c.b.node("Add", [var, _scalar(c, eps)])])])


def _group_norm(c):
    g, x = c.attrs["groups"], c.ins[0]
    nd = len(c.shape(0))
    y = c.b.node("Reshape", [x, c.b.ints([0, g, -1])])
    y = _normalize(c, y, [2], c.attrs.get("eps", 1e-5))
    y = c.b.node("Reshape", [y, c.b.node("Shape", [x])])
    c.b.node("Identity", [_affine(c, y, 1, [-1] + [1] * (nd - 2))], [c.outs[0]])


def _attn_bias(c):
    L, S = c.static_attr("L"), c.static_attr("S")
    np_t = NP_DTYPES[c.out_dtype(0)]
    base = np.zeros((L, S), np_t)
    if c.attrs.get("is_causal"):
        base[np.triu_indices(L, 1, S)] = -np.inf
    if len(c.ins) == 1:
        c.b.node("Identity", [c.b.const(base, "attn_bias")], [c.outs[0]])
    elif c.dtype(1) == "bool":  # False = masked out
        ninf = c.b.const(np.array(-np.inf, np_t), "ninf")
        masked = c.b.node("Where", [c.ins[1], c.b.const(np.array(0, np_t), "zero"), ninf])
        c.b.node("Add", [masked, c.b.const(base, "attn_bias")], [c.outs[0]])
    else:
        c.b.node("Add", [c.ins[1], c.b.const(base, "attn_bias")], [c.outs[0]])


def _dropout(c):
    raise c.unsupported("dropout in training mode (export calls model.eval())")


OPS.update(
    {
        "matmul": _matmul,
        "conv2d": _conv2d,
        "max_pool2d": _max_pool2d,
        "avg_pool2d": _avg_pool2d,
        "adaptive_avg_pool2d": _adaptive_avg_pool2d,
        "batch_norm": _batch_norm,
        "layer_norm": _layer_norm,
        "group_norm": _group_norm,
        "attn_bias": _attn_bias,
        "dropout": _dropout,
    }
)


def _lstm_cell_fused(c):
    # gates [B, 4H] in PyTorch's i, f, g, o order; outputs (h', c').
    hidden = c.shape(1)[1]
    i, f, g, o = c.b.node("Split", [c.ins[0], c.b.ints([hidden] * 4)], 4, axis=1)
    i, f, o = (c.b.node("Sigmoid", [v]) for v in (i, f, o))
    cn = c.b.node(
        "Add", [c.b.node("Mul", [f, c.ins[1]]), c.b.node("Mul", [i, c.b.node("Tanh", [g])])]
    )
    c.b.node("Identity", [cn], [c.outs[1]])
    c.b.node("Mul", [o, c.b.node("Tanh", [cn])], [c.outs[0]])


def _gru_cell_fused(c):
    # xw, gh [B, 3H] in PyTorch's r, z, n order; h' = n + z * (h - n).
    hidden = c.shape(2)[1]
    split = c.b.ints([hidden] * 3)
    xr, xz, xn = c.b.node("Split", [c.ins[0], split], 3, axis=1)
    hr, hz, hn = c.b.node("Split", [c.ins[1], split], 3, axis=1)
    r = c.b.node("Sigmoid", [c.b.node("Add", [xr, hr])])
    z = c.b.node("Sigmoid", [c.b.node("Add", [xz, hz])])
    n = c.b.node("Tanh", [c.b.node("Add", [xn, c.b.node("Mul", [r, hn])])])
    diff = c.b.node("Sub", [c.ins[2], n])
    c.b.node("Add", [n, c.b.node("Mul", [z, diff])], [c.outs[0]])


OPS["lstm_cell_fused"] = _lstm_cell_fused
OPS["gru_cell_fused"] = _gru_cell_fused
