// Fused recurrent ops. The cells: the pointwise part of one LSTM / GRU step in one kernel, after
// the input and hidden GEMMs (nn/modules/rnn.py runs those as ordinary linear ops). Each op has its
// own backward op that recomputes the gate activations from the saved pre-activations.
#pragma once
#include <utility>

#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/rnn.h"

namespace oneflow_like {
namespace functional {

// gates [B, 4H] = x W_ih^T + b_ih + h W_hh^T + b_hh in PyTorch's (i, f, g, o) order, c [B, H]:
// c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c'). Returns (h', c').
StatusOr<std::pair<Tensor, Tensor>> LstmCellFused(const Tensor& gates, const Tensor& c);
// xw = x W_ih^T + b_ih, gh = h W_hh^T + b_hh (both [B, 3H], (r, z, n) order), h [B, H]:
// r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r * hn), h' = n + z * (h - n).
StatusOr<Tensor> GruCellFused(const Tensor& xw, const Tensor& gh, const Tensor& h);
// A whole multi-layer RNN / LSTM / GRU over a sequence (rnn.def's rnn_seq: the inputs' order and
// layout are documented there). Returns (y, hy[, cy]). With train and dropout > 0 (and more than
// one layer) each call draws the dropout masks' seed from the input device's generator.
StatusOr<TensorList> RnnSeq(TensorSpan inputs, const opdefs::RnnSeqAttrs& attrs);

}  // namespace functional
}  // namespace oneflow_like
