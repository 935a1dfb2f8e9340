// Unary elementwise family: schemas, gradient formulas and functional entries.
#include "oneflow_like/ops/unary.h"

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"

namespace oneflow_like {
namespace {

Status InferFloatUnary(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  return Status();
}

const OpDef kNeg{"neg", ops::InferSameAsInput,
                 [](const GradContext& c) -> StatusOr<TensorList> {
                   ASSIGN_OR_RETURN(Tensor g, functional::Neg(c.grad_outputs[0]));
                   return TensorList{g};
                 },
                 nullptr, true, false, false, false};

const OpDef kExp{"exp", InferFloatUnary,
                 [](const GradContext& c) -> StatusOr<TensorList> {
                   ASSIGN_OR_RETURN(Tensor g, functional::Mul(c.grad_outputs[0], c.outputs[0]));
                   return TensorList{g};
                 },
                 nullptr, true, false, false, true};

// relu_grad(dy, y) = dy * (y > 0)
const OpDef kReluGrad{"relu_grad",
                      [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
                        out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
                        return Status();
                      },
                      [](const GradContext& c) -> StatusOr<TensorList> {
                        ASSIGN_OR_RETURN(Tensor g, Dispatch1(kReluGrad, {c.grad_outputs[0], c.inputs[1]}));
                        return TensorList{g, Tensor()};
                      },
                      nullptr, true, false, true, false};

const OpDef kRelu{"relu", ops::InferSameAsInput,
                  [](const GradContext& c) -> StatusOr<TensorList> {
                    ASSIGN_OR_RETURN(Tensor g, Dispatch1(kReluGrad, {c.grad_outputs[0], c.outputs[0]}));
                    return TensorList{g};
                  },
                  nullptr, true, false, false, true};

StatusOr<Tensor> FloatInput(const char* op, const Tensor& x) {
  if (IsFloating(x.dtype())) return x;
  return TypeError("[%s] expected a floating point tensor, got %s", op, x.meta_string());
}

}  // namespace

namespace functional {

StatusOr<Tensor> Neg(const Tensor& x) { return Dispatch1(kNeg, {x}); }
StatusOr<Tensor> Exp(const Tensor& x) {
  ASSIGN_OR_RETURN(Tensor f, FloatInput("exp", x));
  return Dispatch1(kExp, {f});
}
StatusOr<Tensor> Relu(const Tensor& x) { return Dispatch1(kRelu, {x}); }

}  // namespace functional
}  // namespace oneflow_like
