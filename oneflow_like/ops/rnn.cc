// Fused recurrent cells: schemas, gradient formulas and functional entries.
//   lstm_cell_fused(gates, c) -> (h', c');  lstm_cell_fused_grad(dh', dc', gates, c, c') ->
//     (dgates, dc) (undefined incoming gradients are zeros).
//   gru_cell_fused(xw, gh, h) -> h';  gru_cell_fused_grad(dh', xw, gh, h) -> (dxw, dgh, dh).
#include "oneflow_like/ops/rnn.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/creation.h"

namespace oneflow_like {
namespace {

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

Status InferLstm(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& c = in[1];
  out->push_back(TensorMeta{c.shape(), c.dtype(), c.device()});
  out->push_back(TensorMeta{c.shape(), c.dtype(), c.device()});
  return Status();
}
Status InferLstmGrad(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[2].shape(), in[2].dtype(), in[2].device()});
  out->push_back(TensorMeta{in[3].shape(), in[3].dtype(), in[3].device()});
  return Status();
}
Status InferGru(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[2].shape(), in[2].dtype(), in[2].device()});
  return Status();
}
Status InferGruGrad(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  for (int i = 1; i < 4; ++i)
    out->push_back(TensorMeta{in[i].shape(), in[i].dtype(), in[i].device()});
  return Status();
}

StatusOr<Tensor> OrZeros(const Tensor& g, const Tensor& like) {
  if (g.defined()) return g;
  return functional::Zeros(like.shape(), like.dtype(), like.device());
}

const OpDef kLstmGrad =
    OpSpec("lstm_cell_fused_grad", InferLstmGrad).SaveInputs(false).SaveOutputs(false);
const OpDef kGruGrad =
    OpSpec("gru_cell_fused_grad", InferGruGrad).SaveInputs(false).SaveOutputs(false);

const OpDef kLstm =
    OpSpec("lstm_cell_fused", InferLstm).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(Tensor dh, OrZeros(c.grad_outputs[0], c.outputs[0]));
      ASSIGN_OR_RETURN(Tensor dc, OrZeros(c.grad_outputs[1], c.outputs[1]));
      return Dispatch(kLstmGrad, {dh, dc, c.inputs[0], c.inputs[1], c.outputs[1]}, {});
    });
const OpDef kGru =
    OpSpec("gru_cell_fused", InferGru)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          return Dispatch(kGruGrad, {c.grad_outputs[0], c.inputs[0], c.inputs[1], c.inputs[2]}, {});
        })
        .SaveOutputs(false);

}  // namespace

namespace functional {

StatusOr<std::pair<Tensor, Tensor>> LstmCellFused(const Tensor& gates, const Tensor& c) {
  RETURN_IF_ERROR(CheckCell("lstm_cell_fused", gates, 4, c));
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(kLstm, {gates, c}, {}));
  return std::make_pair(outs[0], outs[1]);
}

StatusOr<Tensor> GruCellFused(const Tensor& xw, const Tensor& gh, const Tensor& h) {
  RETURN_IF_ERROR(CheckCell("gru_cell_fused", xw, 3, h));
  RETURN_IF_ERROR(CheckCell("gru_cell_fused", gh, 3, h));
  return Dispatch1(kGru, {xw, gh, h}, {});
}

}  // namespace functional
}  // namespace oneflow_like
