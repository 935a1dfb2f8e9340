// Fused recurrent cells: the OpDefs of oneflow_like/opdefs/rnn.def (generated below from the
// table's gates, out, grad and save columns, with the forward ops' Run<Name> entries), their
// gradient formulas and the functional entries.
//   lstm_cell_fused(gates, c) -> (h', c');  lstm_cell_fused_grad(dh', dc', gates, c, c') ->
//     (dgates, dc) (undefined incoming gradients are zeros).
//   gru_cell_fused(xw, gh, h) -> h';  gru_cell_fused_grad(dh', xw, gh, h) -> (dxw, dgh, dh).
// Kernels: kernels/cpu/rnn.cc, kernels/cuda/rnn.*.
#include "oneflow_like/ops/rnn.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/creation.h"
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

StatusOr<TensorList> LstmCellGrad(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor dh, OrZeros(c.grad_outputs[0], c.outputs[0]));
  ASSIGN_OR_RETURN(Tensor dc, OrZeros(c.grad_outputs[1], c.outputs[1]));
  return Dispatch(kLstmCellFusedGrad, {dh, dc, c.inputs[0], c.inputs[1], c.outputs[1]},
                  opdefs::ToAttrMap(opdefs::ReadAttrs<RnnCellAttrs>(c.attrs)));
}

StatusOr<TensorList> GruCellGrad(const GradContext& c) {
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
