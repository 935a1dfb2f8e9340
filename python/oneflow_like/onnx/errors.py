"""Errors of flow.onnx.export (the names of torch.onnx.errors)."""


class OnnxExporterError(RuntimeError):
    """Base class of every export error."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the captured program has no ONNX mapping at the requested opset."""

    def __init__(self, op, opset, detail=""):
        self.op = op
        self.opset = opset
        msg = f"[onnx.export] exporting the operator '{op}' to ONNX opset version {opset}"
        msg += " is not supported"
        super().__init__(msg + (f": {detail}" if detail else ""))


class CheckerError(OnnxExporterError):
    """onnx.checker rejected the exported model."""
