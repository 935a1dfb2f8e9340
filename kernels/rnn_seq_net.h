// The geometry of one rnn_seq / rnn_seq_grad call (oneflow_like/opdefs/rnn.def), read from its
// attributes and x's shape; shared by the CPU kernel (kernels/cpu/rnn.cc) and the cuDNN one
// (kernels/cuda/rnn_seq.cc). Host-only.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/rnn.h"

namespace oneflow_like {
namespace kernels {

enum class RnnMode { kTanh, kRelu, kLstm, kGru };

struct RnnSeqNet {
  RnnMode mode = RnnMode::kLstm;
  // gates per hidden unit; hidden, output (projected) sizes; layers; directions; weights per
  // (layer, direction); input features; batch; steps; rows (the sum of the batch sizes).
  int64_t gates = 4, H = 1, Hr = 1, L = 1, D = 1, per = 2, I = 1, B = 0, T = 0, N = 0;
  bool bias = true, proj = false, train = false;
  double dropout = 0;
  uint64_t seed = 0;
  std::vector<int64_t> bs, off;  // per step: batch size and first row (off[T] = N)
  std::vector<int> seq_len;      // per batch row: its length (non-increasing)
  bool lstm() const { return mode == RnnMode::kLstm; }
  int64_t G() const { return gates * H; }
  int nstate() const { return lstm() ? 2 : 1; }
  int64_t in_size(int64_t l) const { return l == 0 ? I : D * Hr; }
  // Dropout applies to layer l's output (feeding layer l + 1).
  bool drops(int64_t l) const { return train && dropout > 0 && l + 1 < L; }
};

inline RnnSeqNet RnnSeqNetOf(const KernelContext& ctx) {
  const auto a = opdefs::ReadAttrs<opdefs::RnnSeqAttrs>(ctx.attrs());
  RnnSeqNet n;
  n.mode = a.mode == "LSTM"       ? RnnMode::kLstm
           : a.mode == "GRU"      ? RnnMode::kGru
           : a.mode == "RNN_RELU" ? RnnMode::kRelu
                                  : RnnMode::kTanh;
  n.gates = n.lstm() ? 4 : n.mode == RnnMode::kGru ? 3 : 1;
  n.H = a.hidden_size;
  n.proj = a.proj_size > 0;
  n.Hr = n.proj ? a.proj_size : a.hidden_size;
  n.L = a.num_layers;
  n.D = a.bidirectional ? 2 : 1;
  n.bias = a.has_bias;
  n.per = 2 + (n.bias ? 2 : 0) + (n.proj ? 1 : 0);
  n.dropout = a.dropout;
  n.train = a.train;
  n.seed = static_cast<uint64_t>(a.seed);
  const TensorView& x = ctx.input(0);
  n.I = x.shape[x.shape.ndim() - 1];
  if (a.batch_sizes.empty()) {
    n.bs.assign(x.shape[0], x.shape[1]);
    n.B = x.shape[1];
  } else {
    n.bs = a.batch_sizes;
    n.B = n.bs[0];
  }
  n.T = static_cast<int64_t>(n.bs.size());
  n.off.assign(n.T + 1, 0);
  n.seq_len.assign(n.B, 0);
  for (int64_t t = 0; t < n.T; ++t) {
    n.off[t + 1] = n.off[t] + n.bs[t];
    for (int64_t b = 0; b < n.bs[t]; ++b) ++n.seq_len[b];
  }
  n.N = n.off[n.T];
  return n;
}

}  // namespace kernels
}  // namespace oneflow_like
