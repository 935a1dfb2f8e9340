"""nn.RNN/LSTM/GRU, their cells and nn.utils.rnn against PyTorch (float64, same weights): outputs,
final states, and the gradients of the input and of every parameter; packed sequences; errors;
eager == nn.Graph."""
import numpy as np
import pytest
import torch
from op_testing import FnGraph

import oneflow_like as flow
from oneflow_like.nn.utils import rnn as frnn

RNG = np.random.default_rng(0)
CONFIGS = [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, num_layers=2)),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(bias=False)),
    ("RNN", dict(nonlinearity="relu", bidirectional=True)),
    ("RNN", dict(num_layers=3)),
]


def pair(cls, **kw):
    """A torch module and ours with the same float64 weights."""
    tm = getattr(torch.nn, cls)(4, 6, **kw).double()
    fm = getattr(flow.nn, cls)(4, 6, dtype=flow.float64, **kw)
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    fm.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, fm


def states(h):
    return h if isinstance(h, tuple) else (h,)


def assert_same(tm, fm, t_out, f_out, xt, xf):
    (to, th), (fo, fh) = t_out, f_out
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(states(th), states(fh)):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
    up = RNG.uniform(-1, 1, size=tuple(to.shape))
    (to * torch.tensor(up)).sum().add(sum(h.sum() for h in states(th))).backward()
    (fo * flow.tensor(up)).sum().add(sum(h.sum() for h in states(fh))).backward()
    np.testing.assert_allclose(
        xf.grad.detach().numpy(), xt.grad.detach().numpy(), rtol=1e-9, atol=1e-12
    )
    tp = dict(tm.named_parameters())
    for n, p in fm.named_parameters():
        np.testing.assert_allclose(
            p.grad.detach().numpy(), tp[n].grad.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=n
        )


@pytest.mark.parametrize("cls,kw", CONFIGS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_padded_matches_torch(cls, kw, batch_first):
    tm, fm = pair(cls, batch_first=batch_first, **kw)
    x = RNG.standard_normal((3, 5, 4) if batch_first else (5, 3, 4))
    xt, xf = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
    dirs = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * dirs
    h0 = RNG.standard_normal((n, 3, kw.get("proj_size") or 6))
    hx_t, hx_f = torch.tensor(h0), flow.tensor(h0)
    if cls == "LSTM":
        c0 = RNG.standard_normal((n, 3, 6))
        hx_t, hx_f = (hx_t, torch.tensor(c0)), (hx_f, flow.tensor(c0))
    assert_same(tm, fm, tm(xt, hx_t), fm(xf, hx_f), xt, xf)


@pytest.mark.parametrize("cls,kw", CONFIGS[::2])
def test_packed_matches_torch(cls, kw):
    tm, fm = pair(cls, batch_first=True, **kw)
    x = RNG.standard_normal((4, 5, 4))
    lengths = [2, 5, 3, 5]
    xt, xf = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
    pt = torch.nn.utils.rnn.pack_padded_sequence(
        xt, lengths, batch_first=True, enforce_sorted=False
    )
    pf = frnn.pack_padded_sequence(xf, lengths, batch_first=True, enforce_sorted=False)
    np.testing.assert_array_equal(pf.batch_sizes.detach().numpy(), pt.batch_sizes.detach().numpy())
    np.testing.assert_array_equal(
        pf.sorted_indices.detach().numpy(), pt.sorted_indices.detach().numpy()
    )
    ot, ht = tm(pt)
    of, hf = fm(pf)
    assert isinstance(of, frnn.PackedSequence)
    ot, lt = torch.nn.utils.rnn.pad_packed_sequence(ot, batch_first=True, total_length=6)
    of, lf = frnn.pad_packed_sequence(of, batch_first=True, total_length=6)
    np.testing.assert_array_equal(lf.detach().numpy(), lt.detach().numpy())
    assert_same(tm, fm, (ot, ht), (of, hf), xt, xf)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cls):
    tc = getattr(torch.nn, cls)(4, 6).double()
    fc = getattr(flow.nn, cls)(4, 6, dtype=flow.float64)
    fc.load_state_dict({k: flow.tensor(v.detach().numpy()) for k, v in tc.state_dict().items()})
    x = RNG.standard_normal((3, 4))
    xt, xf = torch.tensor(x, requires_grad=True), flow.tensor(x, requires_grad=True)
    ht, hf = tc(xt), fc(xf)
    for _ in range(2):  # feed the state back
        ht, hf = tc(xt, ht), fc(xf, hf)
    for a, b in zip(states(ht), states(hf)):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10, atol=1e-12)
    sum(h.sum() for h in states(ht)).backward()
    sum(h.sum() for h in states(hf)).backward()
    np.testing.assert_allclose(
        xf.grad.detach().numpy(), xt.grad.detach().numpy(), rtol=1e-9, atol=1e-12
    )
    # Unbatched input: a 1-D row.
    assert tuple(states(fc(xf[0]))[0].shape) == (6,)


def test_unbatched_and_defaults():
    lstm = flow.nn.LSTM(4, 6, 2)
    out, (h, c) = lstm(flow.randn(5, 4))
    assert tuple(out.shape) == (5, 6) and tuple(h.shape) == (2, 6) and tuple(c.shape) == (2, 6)
    assert repr(lstm) == "LSTM(4, 6, num_layers=2)"
    assert len(lstm.all_weights) == 2 and len(lstm.all_weights[0]) == 4
    bound = 1 / 6**0.5
    assert all(float(p.abs().max()) <= bound for p in lstm.parameters())


def test_pad_and_pack_helpers():
    seqs = [flow.ones(3, 2), flow.ones(1, 2) * 2, flow.ones(2, 2) * 3]
    p = frnn.pad_sequence(seqs, batch_first=True, padding_value=-1)
    ref = torch.nn.utils.rnn.pad_sequence(
        [torch.tensor(s.detach().numpy()) for s in seqs], batch_first=True, padding_value=-1
    )
    np.testing.assert_array_equal(p.detach().numpy(), ref.detach().numpy())
    packed = frnn.pack_sequence(seqs, enforce_sorted=False)
    back = frnn.unpack_sequence(packed)
    for a, b in zip(back, seqs):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        frnn.pack_padded_sequence(p, [3, 1, 2], batch_first=True)


def test_errors_name_the_problem():
    lstm = flow.nn.LSTM(4, 6)
    with pytest.raises(ValueError, match="input_size. Expected 4, got 5"):
        lstm(flow.randn(2, 3, 5))
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(1, 3, 6\)"):
        lstm(flow.randn(2, 3, 4), (flow.zeros(1, 2, 6), flow.zeros(1, 3, 6)))
    with pytest.raises(ValueError, match="proj_size"):
        flow.nn.GRU(4, 6, proj_size=2)


def test_lstm_in_graph_equals_eager():
    flow.manual_seed(0)
    lstm = flow.nn.LSTM(4, 6, num_layers=2, bidirectional=True, dtype=flow.float64)
    head = flow.nn.Linear(12, 1, dtype=flow.float64)
    fn = lambda x: head(lstm(x)[0]).sum()  # noqa: E731
    x = flow.tensor(RNG.standard_normal((5, 3, 4)))
    np.testing.assert_allclose(FnGraph(fn)(x).detach().numpy(), fn(x).detach().numpy(), rtol=1e-12)
