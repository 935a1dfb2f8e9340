"""ONNX mappings of our fused ops: the whole-network RNN op (rnn_seq -> one ONNX LSTM/GRU/RNN node
per layer) and fused attention (_scaled_dot_product_flash_attention -> MatMul/Softmax/MatMul).

rnn_seq is PyTorch's _cudnn_rnn; torch.onnx exports nn.LSTM/GRU/RNN the same way (a node per layer,
gates reordered, time axis left dynamic). ONNX's recurrent nodes have no LSTM projection, and a
packed input would need sequence_lens from data the trace holds as gathers: for those the mapping
raises NeedsStepLoop and the exporter traces the model again with the step loop (which unrolls).
"""
import numpy as np
from onnx import TensorProto, helper

from ._builder import NP_DTYPES

OPS = {}


class NeedsStepLoop(Exception):
    """rnn_seq's attributes have no ONNX recurrent node: export the step loop instead."""


# ONNX gate order per node, as indices into PyTorch's weight blocks: LSTM i,o,f,c from PyTorch's
# i,f,g,o; GRU z,r,h from r,z,n (ONNX's linear_before_reset=1 is PyTorch's GRU).
_GATE_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}
_NODE = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}


def _rnn_seq(c):
    a = c.attrs
    mode, hidden = a["mode"], a["hidden_size"]
    if a.get("proj_size"):
        raise NeedsStepLoop("proj_size > 0 (ONNX LSTM has no projection)")
    if list(a.get("batch_sizes") or []):
        raise NeedsStepLoop("a packed input")
    if a.get("dropout") and a.get("train"):
        raise c.unsupported("dropout between layers in training mode (export calls model.eval())")
    b, order = c.b, _GATE_ORDER[mode]
    dirs = 2 if a["bidirectional"] else 1
    n_state = 2 if mode == "LSTM" else 1
    per = 4 if a["has_bias"] else 2
    weights = c.ins[1 + n_state :]

    def reorder(t):
        if len(order) == 1:
            return t
        parts = b.node("Split", [t, b.ints([hidden] * len(order))], len(order), axis=0)
        return b.node("Concat", [parts[i] for i in order], axis=0)

    def stack(ts):  # per-direction tensors -> [dirs, ...]
        ts = [b.node("Unsqueeze", [t, b.ints([0])]) for t in ts]
        return ts[0] if len(ts) == 1 else b.node("Concat", ts, axis=0)

    attrs = dict(hidden_size=hidden, direction="bidirectional" if dirs == 2 else "forward")
    if mode == "GRU":
        attrs["linear_before_reset"] = 1
    elif mode != "LSTM":
        attrs["activations"] = ["Tanh" if mode == "RNN_TANH" else "Relu"] * dirs
    layer_in, finals = c.ins[0], [[] for _ in range(n_state)]
    for layer in range(a["num_layers"]):
        w_ih, w_hh, bias = [], [], []
        for d in range(dirs):
            k = (layer * dirs + d) * per
            w_ih.append(reorder(weights[k]))
            w_hh.append(reorder(weights[k + 1]))
            if per == 4:
                bias.append(
                    b.node("Concat", [reorder(weights[k + 2]), reorder(weights[k + 3])], axis=0)
                )
        rows = [b.ints([layer * dirs]), b.ints([(layer + 1) * dirs]), b.ints([0])]
        states = [b.node("Slice", [c.ins[1 + s]] + rows) for s in range(n_state)]
        ins = [layer_in, stack(w_ih), stack(w_hh), stack(bias) if bias else "", ""] + states
        outs = b.node(_NODE[mode], ins, 1 + n_state, **attrs)
        for s in range(n_state):
            finals[s].append(outs[1 + s])
        # Y [T, dirs, B, H] -> [T, B, dirs * H], the next layer's input.
        y = b.node("Transpose", [outs[0]], perm=[0, 2, 1, 3])
        layer_in = b.node("Reshape", [y, b.ints([0, 0, -1])])
    b.node("Identity", [layer_in], [c.outs[0]])
    for s in range(n_state):
        parts = finals[s]
        if len(parts) == 1:
            b.node("Identity", parts, [c.outs[1 + s]])
        else:
            b.node("Concat", parts, [c.outs[1 + s]], axis=0)


def _flash_attention(c):
    """softmax(q k^T * scale + mask) v with the fused op's semantics: grouped heads (k/v heads
    repeated), top-left causal mask, bool or additive mask, fully masked rows give 0."""
    a, b = c.attrs, c.b
    if a.get("dropout_p"):
        raise c.unsupported("attention dropout in training mode (export calls model.eval())")
    np_t = NP_DTYPES.get(c.dtype(0), np.float32)
    q, k, v = c.ins[:3]
    qs, ks = c.shape(0), c.shape(1)
    nd = len(qs)
    if nd >= 3 and qs[-3] != ks[-3]:  # grouped-query attention: repeat each k/v head
        group = qs[-3] // ks[-3]
        reps = [1] * (nd - 2) + [group, 1, 1]
        k, v = (
            b.node(
                "Reshape",
                [
                    b.node("Expand", [b.node("Unsqueeze", [t, b.ints([nd - 2])]), b.ints(reps)]),
                    b.ints([0] * (nd - 3) + [qs[-3], -1, c.shape(i)[-1]]),
                ],
            )
            for i, t in ((1, k), (2, v))
        )
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    s = b.node("MatMul", [q, b.node("Transpose", [k], perm=perm)])
    s = b.node("Mul", [s, b.const(np.array(a.get("scale", 1.0), np_t), "scale")])
    ninf = b.const(np.array(-np.inf, np_t), "ninf")
    if a.get("is_causal"):
        s = b.node("Where", [_causal_keep(c, q, k, qs, ks), s, ninf])
    masked = len(c.ins) > 3
    if masked:
        if c.dtype(3) == "bool":  # False = masked out
            s = b.node("Where", [c.ins[3], s, ninf])
        else:
            s = b.node("Add", [s, c.ins[3]])
    p = b.node("Softmax", [s], axis=-1)
    if masked:  # a fully masked row is NaN after Softmax; the fused op gives 0 there
        p = b.node("Where", [b.node("IsNaN", [p]), b.const(np.array(0, np_t), "zero"), p])
    b.node("MatMul", [p, v], [c.outs[0]])


def _causal_keep(c, q, k, qs, ks):
    """bool [L, S], true where key j <= query i (top-left alignment)."""
    b = c.b
    L, S = qs[-2], ks[-2]
    if c.shape_b(0)[-2] == L and c.shape_b(1)[-2] == S:
        return b.const(np.tril(np.ones((L, S), np.bool_)), "causal")
    if b.opset < 14:
        raise c.unsupported("is_causal with a dynamic sequence length needs opset 14 (Trilu)")
    dims = [b.node("Gather", [b.node("Shape", [t]), b.ints([-2])], axis=0) for t in (q, k)]
    ones = b.node(
        "ConstantOfShape",
        [b.node("Concat", dims, axis=0)],
        value=helper.make_tensor("one", TensorProto.INT32, [1], [1]),
    )
    return b.node("Cast", [b.node("Trilu", [ones], upper=0)], to=TensorProto.BOOL)


OPS.update(
    {
        "rnn_seq": _rnn_seq,
        "_scaled_dot_product_flash_attention": _flash_attention,
    }
)
