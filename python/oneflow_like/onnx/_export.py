"""export_model: trace -> ONNX graph -> checked ModelProto -> file (flow.onnx.export's body)."""
import inspect
import os

import onnx

from .. import _C
from ._builder import Builder, OpContext, make_model
from ._capture import capture, resized
from ._ops_elementwise import OPS as _ELEMENTWISE
from ._ops_fused import OPS as _FUSED
from ._ops_fused import NeedsStepLoop
from ._ops_nn import OPS as _NN
from ._ops_shape import OPS as _SHAPE
from .errors import CheckerError, OnnxExporterError, UnsupportedOperatorError

OPS = {**_ELEMENTWISE, **_SHAPE, **_NN, **_FUSED}


def _split_args(args, kwargs):
    if isinstance(args, _C.Tensor):
        args = (args,)
    args = tuple(args)
    if args and isinstance(args[-1], dict):  # torch.onnx: a trailing dict holds keyword args
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


def _input_names(model, args, kwargs, given):
    try:
        params = [
            p.name
            for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError, AttributeError):
        params = []
    names = [params[i] if i < len(params) else f"input_{i}" for i, a in enumerate(args)]
    names = [n for n, a in zip(names, args) if isinstance(a, _C.Tensor)]
    names += [k for k, v in kwargs.items() if isinstance(v, _C.Tensor)]
    given = list(given or [])
    return given[: len(names)] + names[len(given) :]


def _axes(spec):
    """dynamic_axes entry -> {axis: name or None}."""
    return dict(spec) if isinstance(spec, dict) else {int(a): None for a in spec}


def _state_names(model):
    named = []
    for getter in ("named_parameters", "named_buffers"):
        if hasattr(model, getter):
            named += [(n, t, getter == "named_parameters") for n, t in getattr(model, getter)()]
    return named


def _live_ops(cap):
    needed, live = set(cap.outputs), []
    for i in range(len(cap.ops) - 1, -1, -1):
        name, _, ins, outs = cap.ops[i]
        if any(o in needed for o in outs):
            live.append(i)
            needed.update(ins)
    return live[::-1]


def export_model(model, args, f, kwargs, opset, export_params, verbose, input_names,
                 output_names, dynamic_axes, keep_inits_as_inputs, training):  # fmt: skip
    args, kwargs = _split_args(args, kwargs)
    names_in = _input_names(model, args, kwargs, input_names)
    try:
        return _export(model, args, f, kwargs, opset, export_params, verbose, names_in,
                       output_names, dynamic_axes, keep_inits_as_inputs, training, True)  # fmt: skip
    except NeedsStepLoop:  # an rnn_seq ONNX cannot express: trace recurrent layers step by step
        return _export(model, args, f, kwargs, opset, export_params, verbose, names_in,
                       output_names, dynamic_axes, keep_inits_as_inputs, training, False)  # fmt: skip


def _export(model, args, f, kwargs, opset, export_params, verbose, names_in, output_names,
            dynamic_axes, keep_inits_as_inputs, training, seq_op):  # fmt: skip
    was_training = getattr(model, "training", None)
    if hasattr(model, "train") and training in (None, 0, "EVAL", "eval"):
        model.eval()
    try:
        cap = capture(model, args, kwargs, seq_op)
        dyn_in = {n: _axes(dynamic_axes[n]) for n in names_in if n in dynamic_axes}
        cap_b = None
        if dyn_in:
            tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, _C.Tensor)]
            grown = {id(t): resized(t, dyn_in[n]) for t, n in zip(tensors, names_in) if n in dyn_in}
            args_b = [grown.get(id(a), a) for a in args]
            kwargs_b = {k: grown.get(id(v), v) for k, v in kwargs.items()}
            cap_b = capture(model, args_b, kwargs_b, seq_op)
            if [o[0] for o in cap.ops] != [o[0] for o in cap_b.ops]:
                raise OnnxExporterError(
                    "[onnx.export] the traced program changes with the dynamic axes "
                    f"{dyn_in} (a Python loop or branch over a dynamic size); export them static"
                )
    finally:
        if was_training is not None and hasattr(model, "train"):
            model.train(was_training)
    return _build(model, cap, cap_b, f, opset, export_params, verbose, names_in, output_names,
                  dynamic_axes, dyn_in, keep_inits_as_inputs)  # fmt: skip


def _build(model, cap, cap_b, f, opset, export_params, verbose, names_in, output_names,
           dynamic_axes, dyn_in, keep_inits_as_inputs):  # fmt: skip
    b = Builder(opset, cap.values, cap_b.values if cap_b else None)
    graph_inputs, graph_outputs = [], []
    for v, (kind, shape, dtype, idx) in enumerate(cap.values):
        if kind == "input":
            name = names_in[idx]
            b.names[v] = name
            shape_b = b.shape_b(v)
            graph_inputs.append(b.value_info(name, dtype, shape, shape_b, dyn_in.get(name, {})))
            for axis in dyn_in.get(name, {}):
                b.dyn_sources.append((name, axis, shape[axis], shape_b[axis]))
    # Outputs are named before the ops run, so the op producing one writes it directly.
    out_names, aliases = [], []
    given = list(output_names or [])
    for i, v in enumerate(cap.outputs):
        name = given[i] if i < len(given) else f"output_{i}"
        if v in b.names or cap.values[v][0] != "op":
            aliases.append((v, name))
        else:
            b.names[v] = name
        out_names.append(name)
    _bind_captured(b, model, cap, export_params, graph_inputs)
    b.producer = {o: (cap.ops[i][0], cap.ops[i][1], cap.ops[i][2]) for i in range(len(cap.ops))
                  for o in cap.ops[i][3]}  # fmt: skip
    producing = {}
    for i in _live_ops(cap):
        name, attrs, ins, outs = cap.ops[i]
        fn = OPS.get(name)
        if fn is None:
            raise UnsupportedOperatorError(name, opset)
        attrs_b = cap_b.ops[i][1] if cap_b else None
        _check_static_attrs(name, attrs, attrs_b)
        c = OpContext(b, i, name, attrs, attrs_b, ins, outs)
        fn(c)
        for k, o in enumerate(c.outs):
            producing[o] = (name, k)
    for v, name in aliases:
        b.node("Identity", [b.name_of(v)], [name])
    for i, v in enumerate(cap.outputs):
        kind, shape, dtype, _ = cap.values[v]
        axes = _axes(dynamic_axes.get(out_names[i], {}))
        graph_outputs.append(b.value_info(out_names[i], dtype, shape, b.shape_b(v), axes))
    needed = b.prune(out_names)
    available = {i.name for i in graph_inputs} | {t.name for t in b.initializers}
    available |= {o for n in b.nodes for o in n.output}
    for name in sorted(needed - available):
        op, k = producing.get(name, ("?", 0))
        raise UnsupportedOperatorError(op, opset, f"its output {k} is used but has no mapping")
    if keep_inits_as_inputs:
        graph_inputs += [b.value_info(t.name, _dtype_name(t), list(t.dims), list(t.dims), {})
                         for t in b.initializers]  # fmt: skip
    from .. import __version__

    model_proto = make_model(b, graph_inputs, graph_outputs, __version__)
    try:
        onnx.checker.check_model(model_proto)
    except onnx.checker.ValidationError as e:
        raise CheckerError(f"[onnx.export] onnx.checker rejected the exported model: {e}") from e
    if verbose:
        print(onnx.helper.printable_graph(model_proto.graph))
    if isinstance(f, (str, os.PathLike)):
        onnx.save(model_proto, os.fspath(f))
    elif f is not None:
        f.write(model_proto.SerializeToString())
    return model_proto


# Attributes that may differ between the two traces: shapes the mappings make symbolic, and
# metadata that ONNX does not need. Any other difference is a constant that depends on a dynamic
# axis (e.g. the 1/n of a mean over it), which the trace cannot express.
_SYMBOLIC_ATTRS = {
    "reshape": {"shape"},
    "expand": {"shape"},
    "full": {"shape"},
    "slice": {"length"},
}
_METADATA_ATTRS = {"in_shape", "sizes"}


def _check_static_attrs(name, attrs, attrs_b):
    if attrs_b is None:
        return
    for key in attrs:
        if key in _METADATA_ATTRS or key in _SYMBOLIC_ATTRS.get(name, ()):
            continue
        if attrs_b.get(key) != attrs[key]:
            raise OnnxExporterError(
                f"[onnx.export] attribute '{key}' of op '{name}' depends on a dynamic axis "
                f"({attrs[key]}, then {attrs_b.get(key)} with the dynamic axes resized); "
                "export with that axis static"
            )


def _dtype_name(t):
    from ._builder import DTYPES

    return {v: k for k, v in DTYPES.items()}[t.data_type]


def _bind_captured(b, model, cap, export_params, graph_inputs):
    """Parameters/buffers -> initializers named as in state_dict (graph inputs when
    export_params=False); other captured tensors (constants) -> initializers."""
    from onnx import numpy_helper

    state = _state_names(model)
    used = set()
    for v, (kind, shape, dtype, idx) in enumerate(cap.values):
        if kind != "captured":
            continue
        t = cap.captured[idx]
        name, is_param = None, False
        for n, p, param in state:
            if n not in used and p._same(t):
                name, is_param = n, param
                break
        name = name or b.fresh("/constant")
        used.add(name)
        b.names[v] = name
        if is_param and not export_params:
            graph_inputs.append(b.value_info(name, dtype, shape, shape, {}))
        else:
            b.initializers.append(numpy_helper.from_array(t.detach().cpu().numpy(), name))
