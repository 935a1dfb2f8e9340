"""The whole-sequence recurrent op (_C._rnn_seq, rnn.def's rnn_seq / rnn_seq_grad; PyTorch's
_cudnn_rnn / mkldnn_rnn): forward and backward against a float64 NumPy network and finite
differences, eager == lazy, every mode with layers / directions / projection / no bias / packed
input / dropout, nn.LSTM/GRU/RNN on it equal to the step loop and to torch 1.13's layers, its
errors, and CUDA (cuDNN) == CPU where a device is present."""
import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like.nn.modules import rnn as rnn_mod
from op_testing import check_op, rand

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def np_network(mode, H, L, D, bias, proj, x, hx, cx, weights):
    """nn.LSTM/GRU/RNN's equations, step by step in NumPy (padded [T, B, I] input)."""
    per = 2 + (2 if bias else 0) + (1 if proj else 0)
    T = x.shape[0]
    layer_in, hs, cs = x, [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            w = weights[k * per : (k + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if bias else (0.0, 0.0)
            w_hr = w[-1] if proj else None
            h, c = hx[k], (cx[k] if cx is not None else None)
            out = [None] * T
            for s in range(T):
                t = T - 1 - s if d else s
                xw = layer_in[t] @ w_ih.T + b_ih
                gh = h @ w_hh.T + b_hh
                if mode == "LSTM":
                    i, f, g, o = np.split(xw + gh, 4, axis=-1)
                    c = sig(f) * c + sig(i) * np.tanh(g)
                    h = sig(o) * np.tanh(c)
                    if proj:
                        h = h @ w_hr.T
                elif mode == "GRU":
                    xr, xz, xn = np.split(xw, 3, axis=-1)
                    hr, hz, hn = np.split(gh, 3, axis=-1)
                    r, z = sig(xr + hr), sig(xz + hz)
                    n = np.tanh(xn + r * hn)
                    h = n + z * (h - n)
                else:
                    v = xw + gh
                    h = np.tanh(v) if mode == "RNN_TANH" else np.maximum(v, 0)
                out[t] = h
            outs.append(np.stack(out, 0))
            hs.append(h)
            cs.append(c)
        layer_in = np.concatenate(outs, -1)
    return layer_in, np.stack(hs, 0), (np.stack(cs, 0) if mode == "LSTM" else None)


def make_arrays(mode, I, H, L, D, bias, proj, T=4, B=3):
    G = GATES[mode] * H
    Hr = proj or H
    arrays = [rand((T, B, I)), rand((L * D, B, Hr))]
    if mode == "LSTM":
        arrays.append(rand((L * D, B, H)))
    for layer in range(L):
        for _ in range(D):
            in_l = I if layer == 0 else D * Hr
            arrays += [rand((G, in_l), -0.6, 0.6), rand((G, Hr), -0.6, 0.6)]
            if bias:
                arrays += [rand((G,), -0.5, 0.5), rand((G,), -0.5, 0.5)]
            if proj:
                arrays.append(rand((Hr, H), -0.6, 0.6))
    return arrays


CONFIGS = [
    # mode, I, H, layers, dirs, bias, proj
    ("LSTM", 3, 4, 1, 1, True, 0),
    ("LSTM", 3, 4, 2, 2, True, 0),
    ("LSTM", 3, 5, 2, 1, False, 2),
    ("LSTM", 2, 4, 1, 2, True, 3),
    ("GRU", 3, 4, 1, 1, True, 0),
    ("GRU", 3, 4, 2, 2, False, 0),
    ("RNN_TANH", 3, 4, 2, 2, True, 0),
    ("RNN_RELU", 3, 4, 2, 1, True, 0),
]


@pytest.mark.parametrize("mode,I,H,L,D,bias,proj", CONFIGS)
def test_rnn_seq_against_numpy(mode, I, H, L, D, bias, proj):
    lstm = mode == "LSTM"
    kw = dict(
        mode=mode,
        hidden_size=H,
        proj_size=proj,
        num_layers=L,
        bidirectional=D == 2,
        has_bias=bias,
        train=True,
    )
    arrays = make_arrays(mode, I, H, L, D, bias, proj)
    ns = 3 if lstm else 2

    def ref(*a, out):
        y, hy, cy = np_network(
            mode, H, L, D, bias, proj, a[0], a[1], a[2] if lstm else None, list(a[ns:])
        )
        return (y, hy, cy)[out]

    for out in range(ns):
        check_op(
            lambda *t, out=out: _C._rnn_seq(list(t), **kw)[out],
            lambda *a, out=out: ref(*a, out=out),
            arrays,
        )


def packed_case(mode, D):
    """Three sequences of lengths 5, 3, 2 (time-major packed rows) with their padded form."""
    lengths, I, H = [5, 3, 2], 3, 4
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(max(lengths))]
    seqs = [rand((n, I)) for n in lengths]
    rows = [seqs[b][t] for t in range(max(lengths)) for b in range(batch_sizes[t])]
    return lengths, batch_sizes, seqs, np.stack(rows, 0), I, H


@pytest.mark.parametrize("mode,D", [("LSTM", 2), ("GRU", 1), ("RNN_TANH", 2)])
def test_packed_equals_each_sequence_alone(mode, D):
    """A packed batch gives each sequence the outputs and final state it has alone."""
    lengths, batch_sizes, seqs, packed, I, H = packed_case(mode, D)
    lstm = mode == "LSTM"
    arrays = make_arrays(mode, I, H, 2, D, True, 0, T=1, B=3)
    weights = [flow.tensor(a, dtype=flow.float64) for a in arrays[(3 if lstm else 2) :]]
    h0 = arrays[1]
    c0 = arrays[2] if lstm else None
    kw = dict(mode=mode, hidden_size=H, num_layers=2, bidirectional=D == 2, train=False)
    states = [flow.tensor(h0, dtype=flow.float64)] + (
        [flow.tensor(c0, dtype=flow.float64)] if lstm else []
    )
    outs = _C._rnn_seq(
        [flow.tensor(packed, dtype=flow.float64)] + states + weights,
        batch_sizes=batch_sizes,
        **kw,
    )
    y = outs[0].detach().numpy()
    offs = np.cumsum([0] + batch_sizes)
    for b, n in enumerate(lengths):
        alone = _C._rnn_seq(
            [flow.tensor(seqs[b][:, None], dtype=flow.float64)]
            + [s[:, b : b + 1].contiguous() for s in states]
            + weights,
            **kw,
        )
        want = alone[0].detach().numpy()[:, 0]
        got = np.stack([y[offs[t] + b] for t in range(n)], 0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        for k in range(1, len(outs)):
            np.testing.assert_allclose(
                outs[k].detach().numpy()[:, b],
                alone[k].detach().numpy()[:, 0],
                rtol=1e-12,
                atol=1e-12,
            )


def run_module(m, x, seq):
    """(output, h_n, x.grad, every parameter's grad) of m(x) with the seq op on or off."""
    old = rnn_mod._USE_SEQ_OP
    rnn_mod._USE_SEQ_OP = seq
    try:
        m.zero_grad()
        xt = flow.tensor(x, dtype=m.weight_ih_l0.dtype, requires_grad=True)
        out, h = m(xt)
        h = h[0] if isinstance(h, tuple) else h
        (out.sum() + (h * h).sum()).backward()
        return [out.detach().numpy(), h.detach().numpy(), xt.grad.detach().numpy()] + [
            p.grad.detach().numpy() for p in m.parameters()
        ]
    finally:
        rnn_mod._USE_SEQ_OP = old


@pytest.mark.parametrize(
    "cls,kw",
    [
        ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
        ("LSTM", dict(proj_size=3)),
        ("GRU", dict(num_layers=2, bias=False)),
        ("RNN", dict(nonlinearity="relu", bidirectional=True)),
    ],
)
def test_modules_seq_equal_step_loop(cls, kw):
    m = getattr(flow.nn, cls)(5, 6, dtype=flow.float64, **kw)
    x = rand((2, 7, 5))
    for a, b in zip(run_module(m, x, True), run_module(m, x, False)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_f32_lstm_uses_seq_and_matches_torch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    m = flow.nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    m.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = rand((7, 3, 4)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty, (th, tc) = tm(tx)
    (ty.sum() + th.pow(2).sum() + tc.sum()).backward()
    fx = flow.tensor(x, requires_grad=True)
    fy, (fh, fc) = m(fx)
    (fy.sum() + fh.pow(2).sum() + fc.sum()).backward()
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        fx.grad.detach().numpy(), tx.grad.detach().numpy(), rtol=1e-4, atol=1e-5
    )
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(
            getattr(m, name).grad.detach().numpy(),
            p.grad.detach().numpy(),
            rtol=1e-4,
            atol=1e-5,
            err_msg=name,
        )


def test_packed_module_matches_torch():
    torch = pytest.importorskip("torch")
    tm = torch.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    m = flow.nn.GRU(3, 4, num_layers=2, bidirectional=True)
    m.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = rand((5, 3, 3)).astype(np.float32)
    lengths = [3, 5, 2]
    tp = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths, enforce_sorted=False)
    fp = flow.nn.utils.rnn.pack_padded_sequence(flow.tensor(x), lengths, enforce_sorted=False)
    to, th = tm(tp)
    fo, fh = m(fp)
    np.testing.assert_allclose(
        fo.data.detach().numpy(), to.data.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(fh.detach().numpy(), th.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_dropout_masks_follow_the_seed_and_the_backward():
    m = flow.nn.LSTM(3, 4, num_layers=3, dropout=0.5, dtype=flow.float64)
    x = flow.tensor(rand((6, 2, 3)))
    flow.manual_seed(7)
    a = m(x)[0]
    flow.manual_seed(7)
    b = m(x)[0]
    c = m(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.allclose(b.detach().numpy(), c.detach().numpy())
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
    m.train()
    # With a fixed seed, the backward's masks are the forward's: the gradient of one weight
    # matches central differences of the seeded forward.
    w = m.weight_hh_l1
    old = rnn_mod._USE_SEQ_OP
    rnn_mod._USE_SEQ_OP = True  # f64 would take the step loop

    def loss():
        flow.manual_seed(11)
        return m(x)[0].pow(2).sum()

    try:
        m.zero_grad()
        loss().backward()
        g = w.grad.detach().numpy().copy()
        eps = 1e-6
        for idx in [(0, 0), (5, 2), (13, 3)]:
            with flow.no_grad():
                orig = float(w[idx])
                w[idx] = orig + eps
                up = float(loss())
                w[idx] = orig - eps
                dn = float(loss())
                w[idx] = orig
            np.testing.assert_allclose(g[idx], (up - dn) / (2 * eps), rtol=1e-5, atol=1e-7)
    finally:
        rnn_mod._USE_SEQ_OP = old


def test_eval_mode_backward_and_lazy():
    """A module in eval mode still differentiates (the op runs with train=True when a gradient
    may follow, unlike cuDNN in PyTorch), and nn.Graph gives eager's result."""
    m = flow.nn.LSTM(3, 5, num_layers=2)
    m.eval()
    x = flow.tensor(rand((4, 2, 3)).astype(np.float32), requires_grad=True)
    m(x)[0].sum().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0

    class G(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = m

        def build(self, x):
            return self.m(x)[0]

    xe = x.detach()
    np.testing.assert_allclose(
        G()(xe).detach().numpy(), m(xe)[0].detach().numpy(), rtol=1e-5, atol=1e-6
    )


def test_errors_name_the_op():
    x = flow.zeros(4, 2, 3)
    w = [flow.zeros(16, 3), flow.zeros(16, 4), flow.zeros(16), flow.zeros(16)]
    with pytest.raises(
        ValueError,
        match=r"\[rnn_seq\] hx: expected f32\[1,2,4\] on cpu like the input, got f32\[1,3,4\]",
    ):
        _C._rnn_seq([x, flow.zeros(1, 3, 4), flow.zeros(1, 2, 4)] + w, hidden_size=4)
    with pytest.raises(ValueError, match=r"\[rnn_seq\] expected 7 inputs"):
        _C._rnn_seq([x, flow.zeros(1, 2, 4)] + w, hidden_size=4)
    with pytest.raises(ValueError, match=r"\[rnn_seq\] unknown mode 'LSTMX'"):
        _C._rnn_seq([x, flow.zeros(1, 2, 4)] + w, hidden_size=4, mode="LSTMX")
    with pytest.raises(ValueError, match=r"\[rnn_seq\] weight_ih: expected f32\[16,3\]"):
        _C._rnn_seq(
            [x, flow.zeros(1, 2, 4), flow.zeros(1, 2, 4), flow.zeros(16, 2)] + w[1:],
            hidden_size=4,
        )
    with pytest.raises(ValueError, match=r"\[rnn_seq\] packed input must be \[6, I\]"):
        _C._rnn_seq(
            [flow.zeros(5, 3), flow.zeros(1, 3, 4), flow.zeros(1, 3, 4)] + w,
            hidden_size=4,
            batch_sizes=[3, 2, 1],
        )
    ints = [t.long() for t in [x, flow.zeros(1, 2, 4), flow.zeros(1, 2, 4)] + w]
    with pytest.raises(TypeError, match=r"\[rnn_seq\] expected a floating point tensor, got s64"):
        _C._rnn_seq(ints, hidden_size=4)
    # double backward: PyTorch's cuDNN / oneDNN RNNs have none either
    m = flow.nn.LSTM(3, 4)
    xx = flow.tensor(rand((3, 2, 3)).astype(np.float32), requires_grad=True)
    (g,) = flow.autograd.grad(m(xx)[0].sum(), xx, create_graph=True)
    with pytest.raises(RuntimeError, match=r"rnn_seq"):
        g.sum().backward()


def test_rnn_table_rows():
    ops = {o["name"]: o for o in _C._rnn_table()["ops"]}
    assert ops["rnn_seq"]["grad"] == "RnnSeqGrad" and ops["rnn_seq_grad"]["grad"] == "NoGrad"
    attrs = ops["rnn_seq"]["attrs"]
    assert attrs["mode"] == "LSTM" and attrs["num_layers"] == 1 and attrs["batch_sizes"] == []
    apis = {a["name"]: a for a in _C._rnn_table()["apis"]}
    assert apis["_rnn_seq"]["sig"] == "seq"


cuda = pytest.mark.skipif(not flow.cuda.is_available(), reason="no CUDA device (cuDNN RNN)")


@cuda
@pytest.mark.parametrize(
    "cls,kw",
    [
        ("LSTM", dict(num_layers=2, bidirectional=True)),
        ("LSTM", dict(proj_size=3, num_layers=2)),
        ("GRU", dict(num_layers=2, bias=False)),
        ("RNN", dict(nonlinearity="relu", bidirectional=True)),
    ],
)
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
def test_cudnn_matches_cpu(cls, kw, dtype, tol):
    x = rand((6, 3, 5))
    res = []
    for dev in ("cpu", "cuda"):
        flow.manual_seed(0)
        m = getattr(flow.nn, cls)(5, 6, dtype=getattr(flow, dtype), **kw).to(dev)
        old = rnn_mod._USE_SEQ_OP
        rnn_mod._USE_SEQ_OP = True
        try:
            xt = flow.tensor(x, dtype=getattr(flow, dtype), device=dev, requires_grad=True)
            out, h = m(xt)
            h = h[0] if isinstance(h, tuple) else h
            (out.sum() + (h * h).sum()).backward()
        finally:
            rnn_mod._USE_SEQ_OP = old
        res.append(
            [
                out.detach().cpu().detach().numpy(),
                h.detach().cpu().detach().numpy(),
                xt.grad.cpu().detach().numpy(),
            ]
            + [p.grad.cpu().detach().numpy() for p in m.parameters()]
        )
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@cuda
def test_cudnn_packed_dropout_and_f16():
    lengths = [5, 3, 2]
    x = rand((5, 3, 4)).astype(np.float32)
    m = flow.nn.LSTM(4, 6, num_layers=2, dropout=0.3).cuda()
    p = flow.nn.utils.rnn.pack_padded_sequence(flow.tensor(x).cuda(), lengths)
    out, (h, c) = m(p)
    (out.data.sum() + h.sum()).backward()
    assert np.isfinite(m.weight_ih_l0.grad.cpu().detach().numpy()).all()
    m.eval()
    ref = m.cpu()(flow.nn.utils.rnn.pack_padded_sequence(flow.tensor(x), lengths))[0].data
    m.cuda()
    got = m(flow.nn.utils.rnn.pack_padded_sequence(flow.tensor(x).cuda(), lengths))[0].data
    np.testing.assert_allclose(
        got.cpu().detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5
    )
    with flow.autocast("cuda", dtype=flow.float16):
        y16 = m(flow.tensor(x).cuda())[0]
    assert y16.dtype == flow.float16
    np.testing.assert_allclose(
        y16.float().cpu().detach().numpy(), m.cpu()(flow.tensor(x))[0].detach().numpy(), atol=2e-2
    )
