"""Captures a module's forward as our op-level trace (the nn.Graph tracer, lazy/trace.h).

The trace is read at the level of our ops (matmul, conv2d, layer_norm, softmax, ...), which still
carry their PyTorch meaning; composites (ConvTranspose2d, interpolate) arrive as their ops. Recurrent layers arrive as the
whole-network op rnn_seq where eager uses it (mapped to ONNX LSTM/GRU/RNN nodes), or, with
`seq_op=False` (nn/modules/rnn.py `_USE_SEQ_OP` off during the capture), as their step loop: the
exporter retraces that way when rnn_seq's attributes have no ONNX node (_ops_fused.NeedsStepLoop).
"""
from dataclasses import dataclass, field

import numpy as np

from .. import _C


@dataclass
class Captured:
    ops: list  # (name, attrs dict, input value ids, output value ids)
    values: list  # (kind, shape, dtype name, index)
    captured: list  # eager tensors read by the program (parameters, buffers, constants)
    outputs: list  # output value ids
    num_inputs: int = 0
    extra: dict = field(default_factory=dict)


def _flatten(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _flatten(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _flatten(o, out)
    elif obj is not None:
        raise TypeError(
            f"[onnx.export] the model returned a {type(obj).__name__}; expected tensors"
        )
    return out


def capture(model, args, kwargs, seq_op=True):
    """Runs model(*args, **kwargs) under a trace with every tensor argument as a graph input
    (recurrent layers as their step loop when `seq_op` is false)."""
    from .. import no_grad

    from ..nn.modules import rnn as rnn_mod

    trace = _C._Trace()
    saved = rnn_mod._USE_SEQ_OP
    rnn_mod._USE_SEQ_OP = saved and seq_op
    try:
        _run(trace, model, args, kwargs, no_grad)
    finally:
        rnn_mod._USE_SEQ_OP = saved
    n_in = sum(isinstance(a, _C.Tensor) for a in list(args) + list(kwargs.values()))
    return Captured(trace.ops(), trace.values(), trace.captured(), trace.output_values(), n_in)


def _run(trace, model, args, kwargs, no_grad):
    with no_grad():
        with trace:
            lazy = [trace.add_input(a) if isinstance(a, _C.Tensor) else a for a in args]
            lazy_kw = {
                k: trace.add_input(v) if isinstance(v, _C.Tensor) else v for k, v in kwargs.items()
            }
            out = model(*lazy, **lazy_kw)
            flat = _flatten(out, [])
            trace.set_outputs(flat)


def resized(t, axes, delta=1):
    """`t` with each of `axes` grown by `delta` (values repeated cyclically: indices stay valid)."""
    a = t.detach().numpy()
    for ax in axes:
        n = a.shape[ax]
        a = np.take(a, np.arange(n + delta) % n, axis=ax)
    from .. import tensor

    return tensor(np.ascontiguousarray(a), dtype=t.dtype)
