"""flow.onnx.export: each model is exported, passes onnx.checker, runs in onnxruntime and matches
our eager output, also at another batch size through dynamic_axes; unmapped ops name themselves."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import nn

onnx = pytest.importorskip("onnx", reason="Debian python3-onnx (Makefile DEBS) is not installed")
ort = pytest.importorskip("onnxruntime", reason="PyPI onnxruntime (Makefile) is not installed")


def _export(model, args, **kw):
    buf = io.BytesIO()
    proto = flow.onnx.export(model, args, buf, **kw)
    loaded = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(loaded)
    assert loaded == proto
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    return loaded, sess


def _compare(model, sess, names, args, rtol=1e-4, atol=1e-5):
    with flow.no_grad():
        ref = model(*args)
    ref = [r for r in (ref if isinstance(ref, (tuple, list)) else [ref]) if r is not None]
    got = sess.run(None, {n: a.numpy() for n, a in zip(names, args)})
    assert len(got) == len(ref)
    for r, g in zip(ref, got):
        assert g.shape == tuple(r.shape)
        np.testing.assert_allclose(g, r.numpy(), rtol=rtol, atol=atol)


def _check(model, args, other, batch_axes, opset=None, rtol=1e-4, atol=1e-5):
    """Exports with the given batch axes dynamic; compares at the example and at `other` inputs."""
    model.eval()
    names = [f"x{i}" for i in range(len(args))]
    dyn = {n: {ax: "batch"} for n, ax in zip(names, batch_axes) if ax is not None}
    dyn["y"] = {0: "batch"}
    proto, sess = _export(
        model, tuple(args), input_names=names, output_names=["y"], dynamic_axes=dyn,
        opset_version=opset,
    )  # fmt: skip
    _compare(model, sess, names, args, rtol, atol)
    _compare(model, sess, names, other, rtol, atol)
    return proto


def _mlp():
    return nn.Sequential(
        nn.Linear(6, 16), nn.GELU(), nn.Dropout(0.2), nn.Linear(16, 3), nn.Softmax(-1)
    )


def _digits_cnn():  # the shape of examples/train_digits.py's CNN (8x8 digits)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
        nn.Dropout(0.25), nn.Linear(16 * 2 * 2, 10), nn.LogSoftmax(dim=1),
    )  # fmt: skip


def test_mlp_matches_onnxruntime_with_dynamic_batch():
    proto = _check(_mlp(), [flow.randn(4, 6)], [flow.randn(9, 6)], [0])
    ops = [n.op_type for n in proto.graph.node]
    assert ops.count("Gemm") == 2 and "Dropout" not in ops  # Linear -> one Gemm, eval dropout gone
    inits = {t.name for t in proto.graph.initializer}
    assert {"0.weight", "0.bias", "3.weight", "3.bias"} <= inits  # state_dict names
    dim = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "batch"
    assert proto.opset_import[0].version == 17


def test_digits_cnn_with_batchnorm_statistics():
    model = _digits_cnn()
    bn = model[1]
    bn.running_mean.copy_(flow.randn(8) * 0.1)
    bn.running_var.copy_(flow.rand(8) + 0.5)
    proto = _check(model, [flow.randn(3, 1, 8, 8)], [flow.randn(5, 1, 8, 8)], [0])
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "BatchNormalization", "MaxPool", "AveragePool", "LogSoftmax"} <= ops


class _Encoder(nn.Module):
    """Embedding + TransformerEncoderLayer with an attention mask and a key padding mask."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.1, batch_first=True)
        self.head = nn.Linear(16, 5)

    def forward(self, tokens, pad_mask):
        s = tokens.shape[1]
        causal = nn.Transformer.generate_square_subsequent_mask(s)
        h = self.layer(self.emb(tokens), src_mask=causal, src_key_padding_mask=pad_mask)
        return self.head(h).mean(dim=1)


def _tokens(b, s=6):
    t = flow.tensor(np.random.randint(0, 20, size=(b, s)).astype(np.int64))
    m = np.zeros((b, s), dtype=bool)
    m[0, -2:] = True  # the first sequence is padded
    return [t, flow.tensor(m)]


def test_transformer_encoder_layer_with_masks():
    proto = _check(_Encoder(), _tokens(2), _tokens(5), [0, 0], rtol=1e-4, atol=1e-5)
    ops = {n.op_type for n in proto.graph.node}
    assert {"Gather", "LayerNormalization", "Softmax", "MatMul", "Where"} <= ops


def test_transformer_decomposes_layer_norm_below_opset_17():
    proto = _check(_Encoder(), _tokens(2), _tokens(3), [0, 0], opset=13)
    ops = {n.op_type for n in proto.graph.node}
    assert "LayerNormalization" not in ops and proto.opset_import[0].version == 13


@pytest.mark.parametrize(
    "cell, kw, node",
    [
        ("LSTM", dict(num_layers=2, batch_first=True), "LSTM"),
        ("LSTM", dict(num_layers=2, bidirectional=True), "LSTM"),
        ("GRU", dict(num_layers=2, batch_first=True), "GRU"),
        ("GRU", dict(bidirectional=True, bias=False), "GRU"),
        ("RNN", dict(nonlinearity="relu", bidirectional=True), "RNN"),
        ("RNN", dict(num_layers=3), "RNN"),
    ],
)
def test_recurrent_layers_export_as_onnx_recurrent_nodes(cell, kw, node):
    """rnn_seq becomes one ONNX LSTM/GRU/RNN node per layer (gates reordered), as torch.onnx
    exports them: nothing unrolls, so the time axis can be dynamic too."""

    class Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(nn, cell)(5, 7, **kw)
            self.out = nn.Linear(14 if kw.get("bidirectional") else 7, 2)

        def forward(self, x):
            y, h = self.rnn(x)
            h = h[0] if isinstance(h, tuple) else h
            return self.out(y).sum(-1, keepdim=True) + h.sum()

    model = Seq().eval()
    proto, sess = _export(
        model,
        (flow.randn(3, 4, 5),),
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "a", 1: "b"}, "y": {0: "a", 1: "b"}},
    )
    nodes = [n.op_type for n in proto.graph.node]
    assert nodes.count(node) == kw.get("num_layers", 1), nodes
    assert not {"Sigmoid", "Tanh", "Relu"} & set(nodes)  # nothing unrolled
    for shape in [(3, 4, 5), (6, 2, 5), (1, 1, 5)]:
        _compare(model, sess, ["x"], [flow.randn(*shape)])


def test_lstm_projection_and_packed_input_export_the_step_loop():
    """ONNX LSTM has no projection, and a packed input has no sequence_lens in the trace: the
    exporter retraces those with the step loop (it unrolls)."""
    from oneflow_like.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    class Packed(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(5, 7)

        def forward(self, x):
            y, h = self.rnn(pack_padded_sequence(x, [4, 3, 2], enforce_sorted=False))
            return pad_packed_sequence(y)[0].sum(0) + h[0]

    model = Packed().eval()
    proto, sess = _export(model, (flow.randn(4, 3, 5),), input_names=["x"])
    assert "GRU" not in {n.op_type for n in proto.graph.node}
    _compare(model, sess, ["x"], [flow.randn(4, 3, 5)])

    class Proj(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(5, 7, proj_size=3, num_layers=2)

        def forward(self, x):
            return self.rnn(x)[0]

    proto = _check(Proj(), [flow.randn(4, 3, 5)], [flow.randn(4, 6, 5)], [1])
    nodes = {n.op_type for n in proto.graph.node}  # the unrolled cells
    assert "LSTM" not in nodes and {"Sigmoid", "Tanh"} <= nodes


class _Attention(nn.Module):
    def __init__(self, causal=False, gqa=False):
        super().__init__()
        self.causal, self.gqa = causal, gqa

    def forward(self, q, k, v, mask=None):
        return nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=self.causal, enable_gqa=self.gqa
        )


def test_fused_attention_exports_as_matmul_softmax():
    """The fused flash op (the default path) maps to MatMul/Softmax/MatMul; a causal mask with
    dynamic query/key lengths is built in the graph (Trilu)."""
    q, k, v = flow.randn(2, 4, 5, 8), flow.randn(2, 4, 6, 8), flow.randn(2, 4, 6, 8)
    dyn = {n: {0: "b", 2: n + "_len"} for n in ("x0", "x1", "x2")}
    dyn["y"] = {0: "b", 2: "x0_len"}
    proto, sess = _export(_Attention(causal=True), (q, k, v), input_names=["x0", "x1", "x2"],
                          output_names=["y"], dynamic_axes=dyn)  # fmt: skip
    assert {"Softmax", "Trilu"} <= {n.op_type for n in proto.graph.node}
    for L, S in [(5, 6), (7, 9), (3, 3)]:
        args = [flow.randn(3, 4, L, 8), flow.randn(3, 4, S, 8), flow.randn(3, 4, S, 8)]
        _compare(_Attention(causal=True), sess, ["x0", "x1", "x2"], args)


def test_fused_attention_masks_and_grouped_heads_export():
    q, k, v = flow.randn(2, 4, 5, 8), flow.randn(2, 2, 6, 8), flow.randn(2, 2, 6, 8)
    keep = flow.rand(5, 6) > 0.4
    keep[2] = False  # a fully masked row: 0 in eager and in the export
    for mask in (keep, flow.randn(5, 6)):
        other = [flow.randn(3, 4, 5, 8), flow.randn(3, 2, 6, 8), flow.randn(3, 2, 6, 8), mask]
        _check(_Attention(gqa=True), [q, k, v, mask], other, [0, 0, 0, None])


@pytest.mark.parametrize("opset", sorted({13, 15, 17, flow.onnx.max_opset()}))
def test_more_layers_and_functions(opset):
    class Misc(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2)
            self.gn = nn.GroupNorm(2, 4)
            self.pool = nn.AdaptiveAvgPool2d(1)

        def forward(self, x):
            h = self.pool(self.gn(nn.functional.silu(self.conv(x)))).flatten(1)
            h = flow.cat([h.clamp(-0.5, 0.5), nn.functional.leaky_relu(h, 0.1), h.exp()], dim=1)
            return h.sum(1, keepdim=True) + h.amax(1, keepdim=True) - h.var(1, keepdim=True)

    _check(Misc(), [flow.randn(2, 2, 8, 8)], [flow.randn(4, 2, 8, 8)], [0], opset=opset)


def test_composite_layers_export_as_their_ops():
    """ConvTranspose, Conv1d, Upsample and PixelShuffle are composites: their ops export."""
    model = nn.Sequential(
        nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1),
        nn.Upsample(scale_factor=2),
        nn.Upsample(scale_factor=2, mode="bilinear"),
        nn.PixelShuffle(2),
        nn.Conv2d(1, 2, 1),
    )
    _check(model, [flow.randn(2, 3, 4, 4)], [flow.randn(3, 3, 4, 4)], [0])
    seq = nn.Sequential(
        nn.Conv1d(2, 3, 3, padding=1), nn.ReLU(), nn.ConvTranspose1d(3, 2, 2, stride=2)
    )
    _check(seq, [flow.randn(2, 2, 8)], [flow.randn(4, 2, 8)], [0])


def test_elementwise_reduction_and_index_families():
    F = nn.functional

    class Many(nn.Module):
        def forward(self, x):
            i = flow.tensor([0, 2])
            parts = [
                x.index_select(1, i), x[:, 1:3].exp(), F.pad(x, (1, 0))[:, :2], x.flip(1),
                x.amax(1, keepdim=True), x.argmax(1, keepdim=True).float(), x.std(1, keepdim=True),
                x.prod(1, keepdim=True), flow.logsumexp(x, 1).unsqueeze(1), x.tril(), x.triu(1),
                flow.where(x > 0, x, flow.zeros_like(x)), x.masked_fill(x < 0, 1.5), F.elu(x),
                F.softplus(x), F.hardswish(x), 1 - x, 2 / x, x // 0.7, x.remainder(0.7),
                F.hardsigmoid(x), F.mish(x), x.abs().log1p(), x.sigmoid().logit(1e-3),
                F.softshrink(x), x.square(), x.abs().rsqrt(), x.max(dim=1, keepdim=True)[0],
                x.min(dim=1, keepdim=True)[0] + x.mean(1, keepdim=True),
            ]  # fmt: skip
            return flow.cat(parts, 1)

    _check(Many(), [flow.randn(3, 4)], [flow.randn(5, 4)], [0], rtol=1e-4, atol=1e-4)


def test_training_mode_is_restored_and_dropout_leaves_no_node():
    model = _mlp().train()
    proto, _ = _export(model, (flow.randn(2, 6),))
    assert model.training and "Dropout" not in {n.op_type for n in proto.graph.node}


def test_params_as_inputs_and_file_path(tmp_path):
    model = _mlp().eval()
    path = tmp_path / "mlp.onnx"
    flow.onnx.export(model, (flow.randn(2, 6),), str(path), export_params=False,
                     input_names=["x"], output_names=["y"])  # fmt: skip
    proto = onnx.load(str(path))
    assert not proto.graph.initializer or all(
        not t.name.endswith(("weight", "bias")) for t in proto.graph.initializer
    )
    names = [i.name for i in proto.graph.input]
    assert names[0] == "x" and "0.weight" in names and "3.bias" in names
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = flow.randn(2, 6)
    feeds = {"x": x.numpy(), **{k: v.numpy() for k, v in model.state_dict().items()}}
    with flow.no_grad():
        np.testing.assert_allclose(sess.run(None, feeds)[0], model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_unmapped_op_names_itself_and_the_opset():
    class Sorts(nn.Module):
        def forward(self, x):
            return flow.sort(x, dim=1)[0] * 2

    with pytest.raises(
        flow.onnx.errors.UnsupportedOperatorError, match=r"'sort'.*opset version 15"
    ):
        flow.onnx.export(Sorts(), (flow.randn(2, 3),), io.BytesIO(), opset_version=15)
    for bad in (9, flow.onnx.max_opset() + 1):
        with pytest.raises(ValueError, match=f"opset_version {bad} is outside the supported 13"):
            flow.onnx.export(_mlp(), (flow.randn(2, 6),), io.BytesIO(), opset_version=bad)


def test_constant_that_depends_on_a_dynamic_axis_is_refused():
    class MeanAll(nn.Module):
        def forward(self, x):
            return x - x.mean()  # 1/numel is traced as a constant

    with pytest.raises(flow.onnx.OnnxExporterError, match="'scalar' of op 'mul_scalar'"):
        flow.onnx.export(MeanAll(), (flow.randn(2, 3),), io.BytesIO(), input_names=["x"],
                         dynamic_axes={"x": [0]})  # fmt: skip
    _export(MeanAll(), (flow.randn(2, 3),))  # static: fine


def test_used_output_without_mapping_is_named():
    class Indices(nn.Module):
        def forward(self, x):
            return nn.functional.max_pool2d(x, 2, return_indices=True)[1].float()

    with pytest.raises(flow.onnx.errors.UnsupportedOperatorError, match="'max_pool2d'.*output 1"):
        flow.onnx.export(Indices(), (flow.randn(1, 1, 4, 4),), io.BytesIO())


def test_dynamic_axis_that_changes_the_program_is_refused():
    # An LSTM with a projection exports as its step loop, which unrolls over time.
    with pytest.raises(flow.onnx.OnnxExporterError, match="dynamic axes"):
        flow.onnx.export(nn.LSTM(3, 4, proj_size=2), (flow.randn(5, 2, 3),), io.BytesIO(),
                         input_names=["x"], dynamic_axes={"x": {0: "time"}})  # fmt: skip


def test_pytorch_script_under_mock_torch(tmp_path):
    script = tmp_path / "export.py"
    out = tmp_path / "net.onnx"
    script.write_text(
        "import sys, torch, torch.nn as nn, torch.onnx\n"
        "net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).eval()\n"
        "x = torch.randn(3, 4)\n"
        "torch.onnx.export(net, (x,), sys.argv[1], input_names=['input'],\n"
        "                  output_names=['logits'], dynamic_axes={'input': {0: 'batch'}})\n"
        "import onnxruntime as ort\n"
        "sess = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
        "z = torch.randn(7, 4)\n"
        "got = sess.run(None, {'input': z.numpy()})[0]\n"
        "with torch.no_grad():\n"
        "    print(abs(got - net(z).numpy()).max() < 1e-5, got.shape)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    res = subprocess.run(
        [sys.executable, "-m", "oneflow_like.mock_torch", str(script), str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "(7,", "2)"]
    onnx.checker.check_model(onnx.load(str(out)))
