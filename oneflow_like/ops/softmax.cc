// Softmax family: the OpDefs of oneflow_like/opdefs/softmax.def and their functional entries
// (generated below), and the gradient formulas. Kernels: kernels/cpu/softmax.cc,
// kernels/cuda/softmax.*; lowering: lazy/lowering/reduce.cc.
#include "oneflow_like/ops/softmax.h"

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/softmax.h"

namespace oneflow_like {
namespace {

// The backward ops (dy, y) -> dx: dy must match y.
Status InferGrad(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  if (in[0].shape() != in[1].shape() || in[0].dtype() != in[1].dtype())
    return InvalidArgument("[softmax_grad] gradient %s does not match output %s",
                           in[0].meta_string(), in[1].meta_string());
  out->push_back(TensorMeta{in[1].shape(), in[1].dtype(), in[1].device()});
  return Status();
}

#define OFL_SOFTMAX_SAVE_IN_outputs false
#define OFL_SOFTMAX_SAVE_OUT_outputs true
// clang-format off
#define OFL_ATTRS(...)
#define OFL_SOFTMAX(...)
#define OFL_SOFTMAX_API(...)
#define OFL_SOFTMAX_GRAD(name, Name, Attrs)                                                    \
  const OpDef k##Name =                                                                         \
      OpSpec(#name, InferGrad).Grad(&ops::NoDoubleBackward<k##Name>).SaveInputs(false).SaveOutputs(false);
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX
// clang-format on

// ---- gradient formulas (the table's grad column): the backward op on (dy, y) --------------------

StatusOr<TensorList> OfOutput(const OpDef& grad_op, const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(grad_op, {c.grad_outputs[0], c.outputs[0]}, c.attrs));
  return TensorList{g};
}
// Double backward (grad mode on, something to differentiate): the same formulas written with
// differentiable ops, y re-attached to the forward node by the engine.
StatusOr<TensorList> SoftmaxGradFn(const GradContext& c) {
  const Tensor &g = c.grad_outputs[0], &y = c.outputs[0];
  if (!ops::DifferentiableBackward({g, y})) return OfOutput(kSoftmaxGrad, c);
  const int64_t dim = opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(c.attrs).dim;
  ASSIGN_OR_RETURN(Tensor gy, functional::Mul(g, y));  // dx = y * (g - sum(g * y))
  ASSIGN_OR_RETURN(Tensor s, functional::Sum(gy, {dim}, true));
  ASSIGN_OR_RETURN(Tensor d, functional::Sub(g, s));
  ASSIGN_OR_RETURN(Tensor dx, functional::Mul(y, d));
  return TensorList{dx};
}
StatusOr<TensorList> LogSoftmaxGradFn(const GradContext& c) {
  const Tensor &g = c.grad_outputs[0], &y = c.outputs[0];
  if (!ops::DifferentiableBackward({g, y})) return OfOutput(kLogSoftmaxGrad, c);
  const int64_t dim = opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(c.attrs).dim;
  ASSIGN_OR_RETURN(Tensor s, functional::Sum(g, {dim}, true));  // dx = g - exp(y) * sum(g)
  ASSIGN_OR_RETURN(Tensor p, functional::Exp(y));
  ASSIGN_OR_RETURN(Tensor ps, functional::Mul(p, s));
  ASSIGN_OR_RETURN(Tensor dx, functional::Sub(g, ps));
  return TensorList{dx};
}

// The forward ops and Run<Name>(x, attrs): x floating, dim wrapped (0 for a 0-d x).
// clang-format off
#define OFL_SOFTMAX_GRAD(...)
#define OFL_SOFTMAX(name, Name, Attrs, grad, save)                               \
  const OpDef k##Name = OpSpec(#name, ops::InferSameAsInput)                     \
                            .Grad(grad)                                          \
                            .SaveInputs(OFL_SOFTMAX_SAVE_IN_##save)              \
                            .SaveOutputs(OFL_SOFTMAX_SAVE_OUT_##save);           \
  StatusOr<Tensor> Run##Name(const Tensor& x, opdefs::Attrs a) {                 \
    RETURN_IF_ERROR(CheckFloating(#name, x));                                    \
    ASSIGN_OR_RETURN(a.dim, WrapDim(#name, a.dim, x.ndim()));                    \
    if (x.ndim() == 0) a.dim = 0;                                                \
    return Dispatch1(k##Name, {x}, opdefs::ToAttrMap(a));                        \
  }
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
// clang-format on

}  // namespace

namespace functional {

// clang-format off
#define OFL_SOFTMAX_GRAD(...)
#define OFL_SOFTMAX(name, Name, Attrs, grad, save)                 \
  StatusOr<Tensor> Name(const Tensor& x, int64_t dim) {            \
    opdefs::Attrs a;                                               \
    a.dim = dim;                                                   \
    return Run##Name(x, a);                                        \
  }
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX_API
#undef OFL_ATTRS
// clang-format on

}  // namespace functional
}  // namespace oneflow_like
