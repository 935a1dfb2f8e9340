"""nn.Transformer, TransformerDecoder(Layer) against PyTorch in float64 with the same weights:
outputs and every gradient, with causal / padding masks, norm_first, batch_first; and in nn.Graph."""
import numpy as np
import pytest
import torch
from op_testing import FnGraph, copy_torch_weights

import oneflow_like as flow

RNG = np.random.default_rng(0)


def check_grads(tm, fm, pairs):
    tp = dict(tm.named_parameters())
    assert sorted(tp) == sorted(n for n, _ in fm.named_parameters())
    for n, p in fm.named_parameters():
        np.testing.assert_allclose(
            p.grad.detach().numpy(), tp[n].grad.detach().numpy(), rtol=1e-8, atol=1e-11, err_msg=n
        )
    for a, b in pairs:
        np.testing.assert_allclose(
            b.grad.detach().numpy(), a.grad.detach().numpy(), rtol=1e-8, atol=1e-11
        )


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(norm_first, batch_first):
    kw = dict(
        d_model=8,
        nhead=2,
        num_encoder_layers=2,
        num_decoder_layers=2,
        dim_feedforward=16,
        dropout=0.0,
        batch_first=batch_first,
        norm_first=norm_first,
    )
    tm = torch.nn.Transformer(**kw).double()
    fm = flow.nn.Transformer(**kw, dtype=flow.float64)
    copy_torch_weights(tm, fm)
    B, S, T = 3, 5, 4
    src = RNG.standard_normal((B, S, 8) if batch_first else (S, B, 8))
    tgt = RNG.standard_normal((B, T, 8) if batch_first else (T, B, 8))
    pad = np.zeros((B, S), bool)
    pad[0, -2:] = True
    ts, tt = torch.tensor(src, requires_grad=True), torch.tensor(tgt, requires_grad=True)
    fs, ft = flow.tensor(src, requires_grad=True), flow.tensor(tgt, requires_grad=True)
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(T).double()
    mask_f = flow.nn.Transformer.generate_square_subsequent_mask(T, dtype=flow.float64)
    np.testing.assert_array_equal(mask_f.detach().numpy(), mask_t.detach().numpy())
    ot = tm(
        ts,
        tt,
        tgt_mask=mask_t,
        src_key_padding_mask=torch.tensor(pad),
        memory_key_padding_mask=torch.tensor(pad),
    )
    of = fm(
        fs,
        ft,
        tgt_mask=mask_f,
        src_key_padding_mask=flow.tensor(pad),
        memory_key_padding_mask=flow.tensor(pad),
    )
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=1e-9, atol=1e-11)
    up = RNG.uniform(-1, 1, size=tuple(ot.shape))
    (ot * torch.tensor(up)).sum().backward()
    (of * flow.tensor(up)).sum().backward()
    check_grads(tm, fm, [(ts, fs), (tt, ft)])


def test_decoder_layer_and_stack_match_torch():
    tl = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation="gelu").double()
    td = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(8).double())
    fl = flow.nn.TransformerDecoderLayer(
        8, 2, 16, dropout=0.0, activation="gelu", dtype=flow.float64
    )
    fd = flow.nn.TransformerDecoder(fl, 2, norm=flow.nn.LayerNorm(8, dtype=flow.float64))
    copy_torch_weights(td, fd)
    tgt, mem = RNG.standard_normal((4, 2, 8)), RNG.standard_normal((6, 2, 8))
    ot = td(
        torch.tensor(tgt),
        torch.tensor(mem),
        tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4).double(),
    )
    of = fd(
        flow.tensor(tgt),
        flow.tensor(mem),
        tgt_is_causal=True,
        tgt_mask=flow.nn.Transformer.generate_square_subsequent_mask(4, dtype=flow.float64),
    )
    np.testing.assert_allclose(of.detach().numpy(), ot.detach().numpy(), rtol=1e-9, atol=1e-11)


def test_shape_errors_and_graph():
    m = flow.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, dtype=flow.float64)
    with pytest.raises(RuntimeError, match="batch number of src"):
        m(flow.randn(5, 2, 8, dtype=flow.float64), flow.randn(4, 3, 8, dtype=flow.float64))
    with pytest.raises(RuntimeError, match=r"equal to d_model \(8\)"):
        m(flow.randn(5, 2, 6, dtype=flow.float64), flow.randn(4, 2, 6, dtype=flow.float64))
    src = flow.tensor(RNG.standard_normal((5, 2, 8)))
    tgt = flow.tensor(RNG.standard_normal((4, 2, 8)))
    mask = flow.nn.Transformer.generate_square_subsequent_mask(4, dtype=flow.float64)
    fn = lambda s, t: m(s, t, tgt_mask=mask)  # noqa: E731
    np.testing.assert_allclose(
        FnGraph(fn)(src, tgt).detach().numpy(), fn(src, tgt).detach().numpy(), rtol=1e-10
    )
