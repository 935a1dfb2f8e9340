"""flow.onnx: export a module to an ONNX model through the `onnx` package (torch.onnx's API).

    flow.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"],
                     dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})

The forward runs once under the nn.Graph tracer (in eval mode, without autograd); each traced op
is mapped to ONNX nodes (_ops_*.py); parameters and buffers become named initializers. An op
with no mapping raises errors.UnsupportedOperatorError naming it and the opset.
"""
from . import errors
from .errors import CheckerError, OnnxExporterError, UnsupportedOperatorError  # noqa: F401

DEFAULT_OPSET = 17
MIN_OPSET, MAX_OPSET = 13, 20
_exporting = False


def max_opset():
    """The highest opset export accepts: ours, capped by what the installed onnx can check."""
    import onnx

    return min(MAX_OPSET, onnx.defs.onnx_opset_version())


def is_in_onnx_export():
    return _exporting


def export(
    model,
    args=(),
    f=None,
    export_params=True,
    verbose=False,
    training=None,
    input_names=None,
    output_names=None,
    operator_export_type=None,
    opset_version=None,
    do_constant_folding=True,
    dynamic_axes=None,
    keep_initializers_as_inputs=None,
    custom_opsets=None,
    export_modules_as_functions=False,
    autograd_inlining=True,
    *,
    kwargs=None,
    dynamo=False,
    **unused,
):
    """Writes `model` called on `args` as an ONNX model to `f` (a path or a binary file object);
    returns the onnx.ModelProto. The signature is torch.onnx.export's (TorchScript exporter)."""
    global _exporting
    from ._export import export_model

    if dynamo:
        raise OnnxExporterError("[onnx.export] dynamo=True is not supported; use the default")
    if custom_opsets:
        raise OnnxExporterError("[onnx.export] custom_opsets are not supported")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    top = max_opset()
    if not MIN_OPSET <= opset <= top:
        import onnx

        raise ValueError(
            f"[onnx.export] opset_version {opset} is outside the supported {MIN_OPSET}..{top} "
            f"(our mappings cover {MIN_OPSET}..{MAX_OPSET}; the installed onnx {onnx.__version__} "
            f"checks models up to opset {onnx.defs.onnx_opset_version()})"
        )
    _exporting = True
    try:
        return export_model(
            model, args, f, kwargs or {}, opset, export_params, verbose, input_names,
            output_names, dynamic_axes or {}, bool(keep_initializers_as_inputs), training,
        )  # fmt: skip
    finally:
        _exporting = False


__all__ = ["export", "is_in_onnx_export", "errors", "UnsupportedOperatorError"]
