// Fused recurrent cells: the OpDefs of oneflow_like/opdefs/rnn.def (generated below from the
// table's gates, out, grad and save columns, with the forward ops' Run<Name> entries), their
// gradient formulas and the functional entries.
//   lstm_cell_fused(gates, c) -> (h', c');  lstm_cell_fused_grad(dh', dc', gates, c, c') ->
//     (dgates, dc) (undefined incoming gradients are zeros).
//   gru_cell_fused(xw, gh, h) -> h';  gru_cell_fused_grad(dh', xw, gh, h) -> (dxw, dgh, dh).
// Kernels: kernels/cpu/rnn.cc, kernels/cuda/rnn.*.
#include "oneflow_like/ops/rnn.h"

#include <string>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/rnn.h"

namespace oneflow_like {
namespace {

using opdefs::RnnCellAttrs;
using opdefs::RnnSeqAttrs;

// The forward ops' check of an input holding `chunks` gates per hidden unit against the state.
Status CheckCell(const char* op, const Tensor& gates, int64_t chunks, const Tensor& state) {
  RETURN_IF_ERROR(CheckFloating(op, gates));
  if (gates.ndim() != 2 || state.ndim() != 2 || gates.dim(0) != state.dim(0) ||
      gates.dim(1) != chunks * state.dim(1))
    return InvalidArgument("[%s] expected gates [B, %d*H] and state [B, H], got %s and %s", op,
                           chunks, gates.meta_string(), state.meta_string());
  if (gates.dtype() != state.dtype() || gates.device() != state.device())
    return TypeError("[%s] gates %s and state %s differ in dtype or device", op,
                     gates.meta_string(), state.meta_string());
  return Status();
}

// ---- the table's out column
// ----------------------------------------------------------------------

TensorMeta Like(const Tensor& t) {
  return TensorMeta{t.shape(), t.dtype(), t.device()};
}
// lstm_cell_fused(gates, c) -> (h', c'), both like c.
Status Infer_lstm(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[1]));
  out->push_back(Like(in[1]));
  return Status();
}
// lstm_cell_fused_grad(dh', dc', gates, c, c') -> (dgates, dc).
Status Infer_lstm_grad(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[2]));
  out->push_back(Like(in[3]));
  return Status();
}
// gru_cell_fused(xw, gh, h) -> h'.
Status Infer_gru(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(Like(in[2]));
  return Status();
}
// gru_cell_fused_grad(dh', xw, gh, h) -> (dxw, dgh, dh).
Status Infer_gru_grad(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  for (int i = 1; i < 4; ++i) out->push_back(Like(in[i]));
  return Status();
}

// ---- the backward ops (generated from rnn.def) ----------------------------------------------

// clang-format off
#define OFL_ATTRS(...)
#define OFL_RNN(...)
#define OFL_RNN_API(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN_GRAD(name, Name, Attrs, out)               \
  const OpDef k##Name = OpSpec(#name, Infer_##out)         \
                            .Grad(&ops::NoDoubleBackward<k##Name>) \
                            .SaveInputs(false)             \
                            .SaveOutputs(false);
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN_GRAD
#undef OFL_RNN
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
// clang-format on

// ---- gradient formulas (the table's grad column): the backward op, with the forward op's
// attributes --------------------------------------------------------------------------------------

StatusOr<Tensor> OrZeros(const Tensor& g, const Tensor& like) {
  if (g.defined()) return g;
  return functional::Zeros(like.shape(), like.dtype(), like.device());
}

// Double backward: with grad mode on and something to differentiate, the cells' gradients are
// written with differentiable ops from the saved pre-activations (the fused backward ops have no
// gradient of their own).
namespace F = functional;
// s * (1 - s): the sigmoid's derivative from its value; 1 - t * t: tanh's.
StatusOr<Tensor> SigmoidDeriv(const Tensor& s) {
  ASSIGN_OR_RETURN(Tensor one_m, F::RSubScalar(s, 1.0));
  return F::Mul(s, one_m);
}
StatusOr<Tensor> TanhDeriv(const Tensor& t) {
  ASSIGN_OR_RETURN(Tensor t2, F::Mul(t, t));
  return F::RSubScalar(t2, 1.0);
}
// a * b * c.
StatusOr<Tensor> Mul3(const Tensor& a, const Tensor& b, const Tensor& c) {
  ASSIGN_OR_RETURN(Tensor ab, F::Mul(a, b));
  return F::Mul(ab, c);
}

// i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the gate chunks; c' = f c + i g;
// h' = o tanh(c'). dc' = dc + dh o (1 - tanh(c')^2), dgates = (dc' g i', dc' c f', dc' i g',
// dh tanh(c') o'), dc_prev = dc' f.
StatusOr<TensorList> LstmCellComposite(const Tensor& dh, const Tensor& dc, const Tensor& gates,
                                       const Tensor& cx) {
  ASSIGN_OR_RETURN(TensorList a, F::Chunk(gates, 4, 1));
  ASSIGN_OR_RETURN(Tensor i, F::Sigmoid(a[0]));
  ASSIGN_OR_RETURN(Tensor f, F::Sigmoid(a[1]));
  ASSIGN_OR_RETURN(Tensor g, F::Tanh(a[2]));
  ASSIGN_OR_RETURN(Tensor o, F::Sigmoid(a[3]));
  ASSIGN_OR_RETURN(Tensor fc, F::Mul(f, cx));
  ASSIGN_OR_RETURN(Tensor ig, F::Mul(i, g));
  ASSIGN_OR_RETURN(Tensor cy, F::Add(fc, ig));
  ASSIGN_OR_RETURN(Tensor tc, F::Tanh(cy));
  ASSIGN_OR_RETURN(Tensor dtc, TanhDeriv(tc));
  ASSIGN_OR_RETURN(Tensor via_h, Mul3(dh, o, dtc));
  ASSIGN_OR_RETURN(Tensor dcy, F::Add(dc, via_h));
  ASSIGN_OR_RETURN(Tensor di, SigmoidDeriv(i));
  ASSIGN_OR_RETURN(Tensor df, SigmoidDeriv(f));
  ASSIGN_OR_RETURN(Tensor dg, TanhDeriv(g));
  ASSIGN_OR_RETURN(Tensor d_o, SigmoidDeriv(o));
  TensorList dgates(4);
  ASSIGN_OR_RETURN(dgates[0], Mul3(dcy, g, di));
  ASSIGN_OR_RETURN(dgates[1], Mul3(dcy, cx, df));
  ASSIGN_OR_RETURN(dgates[2], Mul3(dcy, i, dg));
  ASSIGN_OR_RETURN(dgates[3], Mul3(dh, tc, d_o));
  ASSIGN_OR_RETURN(Tensor dgx, F::Cat(dgates, 1));
  ASSIGN_OR_RETURN(Tensor dcx, F::Mul(dcy, f));
  return TensorList{dgx, dcx};
}

// r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r hn), h' = (1 - z) n + z h.
StatusOr<TensorList> GruCellComposite(const Tensor& dhy, const Tensor& xw, const Tensor& gh,
                                      const Tensor& h) {
  ASSIGN_OR_RETURN(TensorList x, F::Chunk(xw, 3, 1));
  ASSIGN_OR_RETURN(TensorList hh, F::Chunk(gh, 3, 1));
  ASSIGN_OR_RETURN(Tensor ar, F::Add(x[0], hh[0]));
  ASSIGN_OR_RETURN(Tensor az, F::Add(x[1], hh[1]));
  ASSIGN_OR_RETURN(Tensor r, F::Sigmoid(ar));
  ASSIGN_OR_RETURN(Tensor z, F::Sigmoid(az));
  ASSIGN_OR_RETURN(Tensor rh, F::Mul(r, hh[2]));
  ASSIGN_OR_RETURN(Tensor an, F::Add(x[2], rh));
  ASSIGN_OR_RETURN(Tensor n, F::Tanh(an));
  ASSIGN_OR_RETURN(Tensor one_m_z, F::RSubScalar(z, 1.0));
  ASSIGN_OR_RETURN(Tensor dn_act, TanhDeriv(n));
  ASSIGN_OR_RETURN(Tensor dan, Mul3(dhy, one_m_z, dn_act));  // d(xn), and d(hn) / r
  ASSIGN_OR_RETURN(Tensor h_m_n, F::Sub(h, n));
  ASSIGN_OR_RETURN(Tensor dz_act, SigmoidDeriv(z));
  ASSIGN_OR_RETURN(Tensor daz, Mul3(dhy, h_m_n, dz_act));
  ASSIGN_OR_RETURN(Tensor dr_act, SigmoidDeriv(r));
  ASSIGN_OR_RETURN(Tensor dar, Mul3(dan, hh[2], dr_act));
  ASSIGN_OR_RETURN(Tensor dhn, F::Mul(dan, r));
  ASSIGN_OR_RETURN(Tensor dxw, F::Cat({dar, daz, dan}, 1));
  ASSIGN_OR_RETURN(Tensor dgh, F::Cat({dar, daz, dhn}, 1));
  ASSIGN_OR_RETURN(Tensor dh, F::Mul(dhy, z));
  return TensorList{dxw, dgh, dh};
}

StatusOr<TensorList> LstmCellGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor dh, OrZeros(c.grad_outputs[0], c.outputs[0]));
  ASSIGN_OR_RETURN(Tensor dc, OrZeros(c.grad_outputs[1], c.outputs[1]));
  if (ops::DifferentiableBackward({dh, dc, c.inputs[0], c.inputs[1]}))
    return LstmCellComposite(dh, dc, c.inputs[0], c.inputs[1]);
  return Dispatch(kLstmCellFusedGrad, {dh, dc, c.inputs[0], c.inputs[1], c.outputs[1]},
                  opdefs::ToAttrMap(opdefs::ReadAttrs<RnnCellAttrs>(c.attrs)));
}

StatusOr<TensorList> GruCellGrad(const GradContext& c) {
  if (ops::DifferentiableBackward({c.grad_outputs[0], c.inputs[0], c.inputs[1], c.inputs[2]}))
    return GruCellComposite(c.grad_outputs[0], c.inputs[0], c.inputs[1], c.inputs[2]);
  return Dispatch(kGruCellFusedGrad, {c.grad_outputs[0], c.inputs[0], c.inputs[1], c.inputs[2]},
                  opdefs::ToAttrMap(opdefs::ReadAttrs<RnnCellAttrs>(c.attrs)));
}

// ---- the forward ops and Run<Name> (generated from rnn.def)
// ---------------------------------------

#define OFL_RNN_SAVE_IN_both true
#define OFL_RNN_SAVE_OUT_both true
#define OFL_RNN_SAVE_IN_inputs true
#define OFL_RNN_SAVE_OUT_inputs false
// What Run<Name> returns per out column: every output (lstm) or the one (gru).
#define OFL_RNN_RESULT_lstm TensorList
#define OFL_RNN_RESULT_gru Tensor
#define OFL_RNN_DISPATCH_lstm(op, in, attrs) Dispatch(op, in, attrs)
#define OFL_RNN_DISPATCH_gru(op, in, attrs) Dispatch1(op, in, attrs)
// clang-format off
#define OFL_RNN_GRAD(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN(name, Name, Attrs, gates, out, grad, save)                                         \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                                                 \
                            .Grad(grad)                                                            \
                            .SaveInputs(OFL_RNN_SAVE_IN_##save)                                    \
                            .SaveOutputs(OFL_RNN_SAVE_OUT_##save);                                 \
  /* Run<Name>(inputs, attrs): every input but the last (the state) holds `gates` gates. */        \
  StatusOr<OFL_RNN_RESULT_##out> Run##Name(TensorSpan in, const opdefs::Attrs& a) {               \
    const Tensor& state = in.back();                                                               \
    for (size_t i = 0; i + 1 < in.size(); ++i)                                                     \
      RETURN_IF_ERROR(CheckCell(#name, in[i], gates, state));                                      \
    return OFL_RNN_DISPATCH_##out(k##Name, in, opdefs::ToAttrMap(a));                              \
  }
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_RNN_API
#undef OFL_ATTRS
// clang-format on

// ---- the whole-sequence ops (rnn.def's OFL_RNN_SEQ / OFL_RNN_SEQ_GRAD) --------------------------

// The geometry every rnn_seq input is checked against, from the attributes.
struct SeqGeom {
  int64_t gates = 4, H = 1, Hr = 1, L = 1, D = 1, per = 2;  // per: weights per (layer, dir)
  bool lstm = false;
  int64_t nstate() const { return lstm ? 2 : 1; }  // hx[, cx]
  int64_t nweights() const { return L * D * per; }
};

StatusOr<SeqGeom> GeomOf(const char* op, const RnnSeqAttrs& a) {
  SeqGeom g;
  if (a.mode == "LSTM") {
    g.gates = 4, g.lstm = true;
  } else if (a.mode == "GRU") {
    g.gates = 3;
  } else if (a.mode == "RNN_TANH" || a.mode == "RNN_RELU") {
    g.gates = 1;
  } else {
    return InvalidArgument("[%s] unknown mode '%s' (LSTM, GRU, RNN_TANH or RNN_RELU)", op,
                           a.mode.c_str());
  }
  if (a.hidden_size <= 0 || a.num_layers <= 0 || a.proj_size < 0 ||
      (a.proj_size && (!g.lstm || a.proj_size >= a.hidden_size)) || a.dropout < 0 || a.dropout > 1)
    return InvalidArgument(
        "[%s] bad attributes: mode %s, hidden_size %lld, proj_size %lld, num_layers %lld, "
        "dropout %g",
        op, a.mode.c_str(), static_cast<long long>(a.hidden_size),
        static_cast<long long>(a.proj_size), static_cast<long long>(a.num_layers), a.dropout);
  g.H = a.hidden_size;
  g.Hr = a.proj_size ? a.proj_size : a.hidden_size;
  g.L = a.num_layers;
  g.D = a.bidirectional ? 2 : 1;
  g.per = 2 + (a.has_bias ? 2 : 0) + (a.proj_size ? 1 : 0);
  return g;
}

// Checks rnn_seq's inputs (x, hx, [cx,] weights...): counts, shapes, one dtype and device.
// Returns the geometry; *rows is x's row count (T * B padded, N packed), *B the batch.
// `extra`: the inputs after the weights (the backward op's incoming gradients).
StatusOr<SeqGeom> CheckSeq(const char* op, TensorSpan in, const RnnSeqAttrs& a, int64_t* rows,
                           int64_t* B, bool grad = false) {
  ASSIGN_OR_RETURN(SeqGeom g, GeomOf(op, a));
  const int64_t want = 1 + g.nstate() + g.nweights() + (grad ? 1 + g.nstate() : 0);
  if (static_cast<int64_t>(in.size()) != want)
    return InvalidArgument("[%s] expected %lld inputs (x, hx%s, %lld weights%s), got %zu", op,
                           static_cast<long long>(want), g.lstm ? ", cx" : "",
                           static_cast<long long>(g.nweights()),
                           grad ? (g.lstm ? ", dy, dhy, dcy" : ", dy, dhy") : "", in.size());
  const Tensor& x = in[0];
  RETURN_IF_ERROR(CheckFloating(op, x));
  const bool packed = !a.batch_sizes.empty();
  if (packed) {
    int64_t n = 0, prev = -1;
    for (int64_t b : a.batch_sizes) {
      if (b <= 0 || (prev >= 0 && b > prev))
        return InvalidArgument("[%s] batch_sizes must be positive and non-increasing", op);
      n += b, prev = b;
    }
    if (x.ndim() != 2 || x.dim(0) != n)
      return InvalidArgument("[%s] packed input must be [%lld, I] (the batch sizes' sum), got %s",
                             op, static_cast<long long>(n), x.meta_string());
    *rows = n, *B = a.batch_sizes[0];
  } else {
    if (x.ndim() != 3)
      return InvalidArgument("[%s] expected a time-major input [T, B, I], got %s", op,
                             x.meta_string());
    *rows = x.dim(0) * x.dim(1), *B = x.dim(1);
  }
  const int64_t I = x.dim(x.ndim() - 1), G = g.gates * g.H;
  auto expect = [&](const Tensor& t, std::vector<int64_t> shape, const char* what) -> Status {
    if (!t.defined() || t.shape() != Shape(shape) || t.dtype() != x.dtype() ||
        t.device() != x.device())
      return InvalidArgument("[%s] %s: expected %s%s on %s like the input, got %s", op, what,
                             DTypeName(x.dtype()), Shape(shape).ToString().c_str(),
                             x.device().ToString().c_str(),
                             t.defined() ? t.meta_string().c_str() : "undefined");
    return Status();
  };
  RETURN_IF_ERROR(expect(in[1], {g.L * g.D, *B, g.Hr}, "hx"));
  if (g.lstm) RETURN_IF_ERROR(expect(in[2], {g.L * g.D, *B, g.H}, "cx"));
  size_t w = 1 + g.nstate();
  for (int64_t l = 0; l < g.L; ++l) {
    const int64_t in_l = l == 0 ? I : g.D * g.Hr;
    for (int64_t d = 0; d < g.D; ++d) {
      RETURN_IF_ERROR(expect(in[w++], {G, in_l}, "weight_ih"));
      RETURN_IF_ERROR(expect(in[w++], {G, g.Hr}, "weight_hh"));
      if (a.has_bias) {
        RETURN_IF_ERROR(expect(in[w++], {G}, "bias_ih"));
        RETURN_IF_ERROR(expect(in[w++], {G}, "bias_hh"));
      }
      if (a.proj_size) RETURN_IF_ERROR(expect(in[w++], {g.Hr, g.H}, "weight_hr"));
    }
  }
  return g;
}

// rnn_seq(x, hx, [cx,] weights...) -> (y, hy, [cy]).
Status Infer_seq(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  const auto a = opdefs::ReadAttrs<RnnSeqAttrs>(attrs);
  int64_t rows = 0, B = 0;
  ASSIGN_OR_RETURN(SeqGeom g, CheckSeq("rnn_seq", in, a, &rows, &B));
  const Tensor& x = in[0];
  Shape ys = x.shape();
  ys[ys.ndim() - 1] = g.D * g.Hr;
  out->push_back(TensorMeta{ys, x.dtype(), x.device()});
  for (int64_t i = 0; i < g.nstate(); ++i) out->push_back(Like(in[1 + i]));
  return Status();
}

// rnn_seq_grad(x, hx, [cx,] weights..., dy, dhy, [dcy]) -> a gradient like each forward input.
Status Infer_seq_grad(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  const auto a = opdefs::ReadAttrs<RnnSeqAttrs>(attrs);
  int64_t rows = 0, B = 0;
  ASSIGN_OR_RETURN(SeqGeom g, CheckSeq("rnn_seq_grad", in, a, &rows, &B, /*grad=*/true));
  const size_t nfwd = 1 + g.nstate() + g.nweights();
  for (size_t i = 0; i < nfwd; ++i) out->push_back(Like(in[i]));
  return Status();
}

// clang-format off
#define OFL_ATTRS(...)
#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_API(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(name, Name, Attrs)                                    \
  const OpDef k##Name = OpSpec(#name, Infer_seq_grad)                          \
                            .Grad(&ops::NoDoubleBackward<k##Name>)             \
                            .SaveInputs(false)                                 \
                            .SaveOutputs(false);
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
// clang-format on

StatusOr<TensorList> RnnSeqGradFn(const GradContext& c) {
  const auto a = opdefs::ReadAttrs<RnnSeqAttrs>(c.attrs);
  ASSIGN_OR_RETURN(SeqGeom g, GeomOf("rnn_seq", a));
  for (const Tensor& t : c.grad_outputs)
    if (ops::DifferentiableBackward({t})) return ops::DoubleBackwardUnsupported("rnn_seq");
  if (!a.train)
    return InvalidArgument(
        "[rnn_seq] backward needs the forward run in training mode (train=True), as cuDNN's");
  TensorList in(c.inputs.begin(), c.inputs.end());
  // Undefined incoming gradients are zeros (the outputs are not saved: y's shape is x's with
  // D * Hr features, hy's and cy's are hx's and cx's).
  const Tensor& x = c.inputs[0];
  Shape ys = x.shape();
  ys[ys.ndim() - 1] = g.D * g.Hr;
  for (int64_t i = 0; i <= g.nstate(); ++i) {
    Tensor gi = c.grad_outputs[i];
    if (!gi.defined()) {
      ASSIGN_OR_RETURN(gi, i == 0 ? functional::Zeros(ys, x.dtype(), x.device())
                                  : functional::Zeros(c.inputs[i].shape(), x.dtype(), x.device()));
    }
    in.push_back(gi);
  }
  return Dispatch(kRnnSeqGrad, in, c.attrs);
}

// clang-format off
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN_SEQ(name, Name, Attrs)                                         \
  const OpDef k##Name = OpSpec(#name, Infer_seq)                               \
                            .Grad(RnnSeqGradFn)                                \
                            .SaveInputs(true)                                  \
                            .SaveOutputs(false);
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_RNN_API
#undef OFL_ATTRS
// clang-format on

}  // namespace

namespace functional {

StatusOr<std::pair<Tensor, Tensor>> LstmCellFused(const Tensor& gates, const Tensor& c) {
  ASSIGN_OR_RETURN(TensorList outs, RunLstmCellFused({gates, c}, RnnCellAttrs{}));
  return std::make_pair(outs[0], outs[1]);
}

StatusOr<Tensor> GruCellFused(const Tensor& xw, const Tensor& gh, const Tensor& h) {
  return RunGruCellFused({xw, gh, h}, RnnCellAttrs{});
}

StatusOr<TensorList> RnnSeq(TensorSpan inputs, const opdefs::RnnSeqAttrs& attrs) {
  int64_t rows = 0, B = 0;
  RETURN_IF_ERROR(CheckSeq("rnn_seq", inputs, attrs, &rows, &B).status());
  opdefs::RnnSeqAttrs a = attrs;
  // Fresh dropout masks per call from the device's generator (torch.manual_seed reproduces them).
  if (a.train && a.dropout > 0 && a.num_layers > 1)
    a.seed = static_cast<int64_t>(NextSeed(inputs[0].device()));
  return Dispatch(kRnnSeq, inputs, opdefs::ToAttrMap(a));
}

}  // namespace functional
}  // namespace oneflow_like
