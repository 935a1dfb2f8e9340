"""The ONNX graph under construction: nodes, initializers, value names and symbolic shapes.

Shapes in our trace are concrete. Dynamic axes are found by tracing twice (the example inputs,
then the same inputs with each dynamic axis one longer): a dim that differs between the traces is
written as k * (a dynamic input dim), computed in the graph from Shape(input); anything else that
differs is an export error rather than a silently wrong model.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .errors import OnnxExporterError, UnsupportedOperatorError

DTYPES = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "float16": TensorProto.FLOAT16,
    "bfloat16": TensorProto.BFLOAT16,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
    "int16": TensorProto.INT16,
    "int8": TensorProto.INT8,
    "uint8": TensorProto.UINT8,
    "uint16": TensorProto.UINT16,
    "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64,
    "bool": TensorProto.BOOL,
}
# ONNX 1.14+ has the float8 element types (the installed onnx may predate them).
for _name, _proto in (
    ("float8_e4m3fn", "FLOAT8E4M3FN"),
    ("float8_e5m2", "FLOAT8E5M2"),
    ("float8_e4m3fnuz", "FLOAT8E4M3FNUZ"),
    ("float8_e5m2fnuz", "FLOAT8E5M2FNUZ"),
):
    if hasattr(TensorProto, _proto):
        DTYPES[_name] = getattr(TensorProto, _proto)
NP_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "bool": np.bool_,
}
INT64_MAX = np.iinfo(np.int64).max


class OpContext:
    """One traced op as its mapping sees it: attributes (and those of the resized trace), the ONNX
    names of its inputs and outputs, and their shapes/dtypes in the example trace."""

    def __init__(self, b, index, name, attrs, attrs_b, ins, outs):
        self.b, self.index, self.name, self.attrs, self.attrs_b = b, index, name, attrs, attrs_b
        self.in_ids, self.out_ids = ins, outs
        self.ins = [b.name_of(v) for v in ins]
        self.outs = [b.name_of(v) for v in outs]

    def shape(self, i):
        return self.b.values[self.in_ids[i]][1]

    def shape_b(self, i):
        return self.b.shape_b(self.in_ids[i])

    def dtype(self, i):
        return self.b.values[self.in_ids[i]][2]

    def out_shape(self, i):
        return self.b.values[self.out_ids[i]][1]

    def out_shape_b(self, i):
        return self.b.shape_b(self.out_ids[i])

    def out_dtype(self, i):
        return self.b.values[self.out_ids[i]][2]

    def unsupported(self, detail):
        return UnsupportedOperatorError(self.name, self.b.opset, detail)

    def static_attr(self, key):
        """An attribute that must not depend on a dynamic axis."""
        if self.attrs_b is not None and self.attrs_b.get(key) != self.attrs.get(key):
            raise OnnxExporterError(
                f"[onnx.export] attribute '{key}' of op '{self.name}' depends on a dynamic axis "
                f"({self.attrs.get(key)} vs {self.attrs_b.get(key)}); export with that axis static"
            )
        return self.attrs.get(key)


class Builder:
    def __init__(self, opset, values, values_b):
        self.opset = opset
        self.values, self.values_b = values, values_b
        self.nodes, self.initializers = [], []
        self.names = {}  # value id -> ONNX name
        self.dyn_sources = []  # (input name, axis, size in trace a, size in trace b)
        self._dim_cache = {}
        self._count = 0

    def shape_b(self, v):
        return self.values_b[v][1] if self.values_b is not None else self.values[v][1]

    def fresh(self, hint):
        self._count += 1
        return f"{hint}_{self._count}"

    def name_of(self, v):
        return self.names.setdefault(v, f"/v{v}")

    def node(self, op_type, inputs, outputs=None, **attrs):
        """Appends a node; returns its output names (a fresh one when `outputs` is an int/None)."""
        if outputs is None or isinstance(outputs, int):
            outputs = [self.fresh(f"/{op_type}") for _ in range(outputs or 1)]
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), **attrs))
        return outputs if len(outputs) > 1 else outputs[0]

    def const(self, array, hint="const"):
        name = self.fresh(f"/{hint}")
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const_like(self, value, dtype):
        return self.const(np.array(value, dtype=NP_DTYPES.get(dtype, np.float32)), "scalar")

    def ints(self, values):
        return self.const(np.array(values, dtype=np.int64), "ints")

    # ---- symbolic dims ----
    def _dim(self, src):
        if src not in self._dim_cache:
            name, axis = self.dyn_sources[src][:2]
            shape = self.node("Shape", [name])
            self._dim_cache[src] = self.node("Gather", [shape, self.ints([axis])], axis=0)
        return self._dim_cache[src]

    def _dim_expr(self, a, b, where):
        for i, (_, _, sa, sb) in enumerate(self.dyn_sources):
            if a % sa == 0 and a // sa * sb == b:
                d, k = self._dim(i), a // sa
                return d if k == 1 else self.node("Mul", [d, self.ints([k])])
        for i, (_, _, sa, sb) in enumerate(self.dyn_sources):  # products of two dynamic dims
            for j, (_, _, ta, tb) in enumerate(self.dyn_sources[i + 1 :], i + 1):
                if a % (sa * ta) == 0 and a // (sa * ta) * sb * tb == b:
                    d = self.node("Mul", [self._dim(i), self._dim(j)])
                    k = a // (sa * ta)
                    return d if k == 1 else self.node("Mul", [d, self.ints([k])])
        raise OnnxExporterError(
            f"[onnx.export] {where}: a size ({a}, then {b} with the dynamic axes resized) is not a "
            "multiple of a dynamic input dim; export with static axes"
        )

    def shape_tensor(self, dims_a, dims_b, where, allow_infer=False):
        """A 1-D int64 tensor holding dims_a with every dim that differs in dims_b symbolic
        (Reshape may infer one such dim as -1)."""
        dims_a, dims_b = list(dims_a), list(dims_b if dims_b is not None else dims_a)
        diff = [i for i, (a, b) in enumerate(zip(dims_a, dims_b)) if a != b]
        if not diff:
            return self.ints(dims_a)
        if allow_infer and len(diff) == 1:
            return self.ints([-1 if i == diff[0] else d for i, d in enumerate(dims_a)])
        pieces = [
            self._dim_expr(a, b, where) if a != b else self.ints([a])
            for a, b in zip(dims_a, dims_b)
        ]
        return self.node("Concat", pieces, axis=0)

    def value_info(self, name, dtype, dims_a, dims_b, dim_names):
        dims = [
            dim_names.get(i, f"{name}_dynamic_axes_{i + 1}") if a != b else a
            for i, (a, b) in enumerate(zip(dims_a, dims_b))
        ]
        if dtype not in DTYPES:
            raise OnnxExporterError(f"[onnx.export] dtype {dtype} of '{name}' has no ONNX type")
        return helper.make_tensor_value_info(name, DTYPES[dtype], dims)

    def prune(self, keep):
        """Drops nodes and initializers that no graph output depends on."""
        needed, kept = set(keep), []
        for n in reversed(self.nodes):
            if any(o in needed for o in n.output):
                kept.append(n)
                needed.update(i for i in n.input if i)
        self.nodes = kept[::-1]
        self.initializers = [t for t in self.initializers if t.name in needed]
        return needed


def make_model(b, inputs, outputs, producer_version):
    graph = helper.make_graph(b.nodes, "main_graph", inputs, outputs, b.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", b.opset)],
        producer_name="oneflow_like",
        producer_version=producer_version,
    )
    return model


__all__ = ["Builder", "OpContext", "make_model", "DTYPES", "NP_DTYPES", "INT64_MAX", "onnx"]
