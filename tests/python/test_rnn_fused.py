"""The fused LSTM / GRU cell ops (_C._fused_lstm_cell, _C._fused_gru_cell): forward and backward
against float64 NumPy references, eager == lazy, errors, the layers using them agree with the
composed ops, and CUDA == CPU."""
import numpy as np
import pytest

import oneflow_like as flow
from oneflow_like import _C
from oneflow_like.nn.modules import rnn as rnn_mod
from op_testing import check_op, rand


def sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def np_lstm_cell(gates, c):
    i, f, g, o = np.split(gates, 4, axis=-1)
    c1 = sig(f) * c + sig(i) * np.tanh(g)
    return sig(o) * np.tanh(c1), c1


def np_gru_cell(xw, gh, h):
    xr, xz, xn = np.split(xw, 3, axis=-1)
    hr, hz, hn = np.split(gh, 3, axis=-1)
    r, z = sig(xr + hr), sig(xz + hz)
    n = np.tanh(xn + r * hn)
    return n + z * (h - n)


def test_lstm_cell_fused():
    gates, c = rand((3, 20), -2, 2), rand((3, 5))
    check_op(lambda g, cc: _C._fused_lstm_cell(g, cc), np_lstm_cell, [gates, c])
    # the gradient through c' alone (h' unused) and through both
    check_op(
        lambda g, cc: _C._fused_lstm_cell(g, cc)[1],
        lambda g, cc: np_lstm_cell(g, cc)[1],
        [gates, c],
    )


def test_gru_cell_fused():
    xw, gh, h = rand((4, 9), -2, 2), rand((4, 9), -2, 2), rand((4, 3))
    check_op(lambda a, b, hh: _C._fused_gru_cell(a, b, hh), np_gru_cell, [xw, gh, h])


def test_fused_cells_errors():
    with pytest.raises(ValueError, match=r"\[lstm_cell_fused\].*f32\[3,12\].*f32\[3,4\]"):
        _C._fused_lstm_cell(flow.zeros(3, 12), flow.zeros(3, 4))
    with pytest.raises(ValueError, match=r"\[gru_cell_fused\]"):
        _C._fused_gru_cell(flow.zeros(2, 9), flow.zeros(2, 6), flow.zeros(2, 3))
    with pytest.raises(TypeError, match=r"\[lstm_cell_fused\]"):
        _C._fused_lstm_cell(flow.zeros(2, 8, dtype=flow.float64), flow.zeros(2, 2))


# ---- the rnn table (oneflow_like/opdefs/rnn.def) --------------------------------------------------


def test_every_rnn_cell_is_declared_once():
    table = _C._rnn_table()
    apis = {a["name"]: (a["sig"], a["entry"]) for a in table["apis"]}
    assert len(apis) == len(table["apis"])
    assert apis == {
        "_fused_lstm_cell": ("lstm", "LstmCellFused"),
        "_fused_gru_cell": ("gru", "GruCellFused"),
        "_rnn_seq": ("seq", "RnnSeq"),  # the whole network: test_rnn_seq.py
    }
    ops = {o["name"]: o for o in table["ops"] if not o["name"].startswith("rnn_seq")}
    assert len(ops) == len(table["ops"]) - 2 == 4
    for name, op in ops.items():
        assert op["attrs"] == {}  # the cells have no attributes
        if name.endswith("_grad"):  # a backward op: no gradient, saves nothing
            assert op["grad"] == "NoGrad" and op["save"] == "none" and op["gates"] == 0
            assert ops[name[: -len("_grad")]]["out"] + "_grad" == op["out"]
    assert ops["lstm_cell_fused"]["gates"] == 4 and ops["lstm_cell_fused"]["save"] == "both"
    assert ops["gru_cell_fused"]["gates"] == 3 and ops["gru_cell_fused"]["save"] == "inputs"
    # the bindings' signatures: (gates, c) and (xw, gh, h)
    assert _C._fused_lstm_cell.__doc__.startswith("_fused_lstm_cell(gates: ")
    assert ", c: " in _C._fused_lstm_cell.__doc__.splitlines()[0]
    line = _C._fused_gru_cell.__doc__.splitlines()[0]
    assert line.startswith("_fused_gru_cell(xw: ") and ", gh: " in line and ", h: " in line
    # bad arguments: pybind11's error names the function, the input check names the op
    with pytest.raises(TypeError, match=r"_fused_gru_cell\(\): incompatible function arguments"):
        _C._fused_gru_cell(flow.zeros(2, 9), flow.zeros(2, 9))
    with pytest.raises(ValueError, match=r"\[gru_cell_fused\] expected gates \[B, 3\*H\]"):
        _C._fused_gru_cell(flow.zeros(2, 9), flow.zeros(2, 9), flow.zeros(2, 4))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_layers_fused_equal_composed(mode):
    kw = dict(num_layers=2, bidirectional=True, batch_first=True, dtype=flow.float64)
    if mode == "LSTM":
        kw["proj_size"] = 3
    m = getattr(flow.nn, mode)(5, 6, **kw)
    x = rand((2, 7, 5))
    runs = []
    for fused in (True, False):
        rnn_mod._USE_FUSED_CELLS = fused
        try:
            xt = flow.tensor(x, requires_grad=True)
            out = m(xt)[0]
            out.sum().backward()
            runs.append(
                (
                    out.detach().numpy(),
                    xt.grad.detach().numpy(),
                    m.weight_hh_l1.grad.detach().numpy(),
                )
            )
            m.zero_grad()
        finally:
            rnn_mod._USE_FUSED_CELLS = True
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not flow.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_cuda_matches_cpu(mode):
    x = rand((6, 3, 4))
    res = []
    for dev in ("cpu", "cuda"):
        flow.manual_seed(0)
        m = getattr(flow.nn, mode)(4, 5, num_layers=2, dtype=flow.float64).to(dev)
        xt = flow.tensor(x, device=dev, requires_grad=True)
        out = m(xt)[0]
        out.sum().backward()
        res.append((out.detach().cpu().detach().numpy(), xt.grad.cpu().detach().numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
