// Fused recurrent cells: the OpDefs of oneflow_like/opdefs/rnn.def (generated below from the
// table's gates, out, grad and save columns, with the forward ops' Run<Name> entries), their
// gradient formulas and the functional entries.
//   lstm_cell_fused(gates, c) -> (h', c');  lstm_cell_fused_grad(dh', dc', gates, c, c') ->
//     (dgates, dc) (undefined incoming gradients are zeros).
//   gru_cell_fused(xw, gh, h) -> h';  gru_cell_fused_grad(dh', xw, gh, h) -> (dxw, dgh, dh).
// Kernels: kernels/cpu/rnn.cc, kernels/cuda/rnn.*.
#include "oneflow_like/ops/rnn.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/rnn.h"

namespace oneflow_like {
namespace {

using opdefs::RnnCellAttrs;

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
#define OFL_RNN_GRAD(name, Name, Attrs, out)               \
  const OpDef k##Name = OpSpec(#name, Infer_##out)         \
                            .Grad(&ops::NoDoubleBackward<k##Name>) \
                            .SaveInputs(false)             \
                            .SaveOutputs(false);
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN_GRAD
#undef OFL_RNN
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

}  // namespace functional
}  // namespace oneflow_like
