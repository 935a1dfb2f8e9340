// Softmax family: schemas, gradient formulas and functional entries. Attr "dim" is normalised.
#include "oneflow_like/ops/softmax.h"

#include "oneflow_like/ops/common.h"

namespace oneflow_like {
namespace {

// softmax_grad(dy, y) = y * (dy - sum(dy * y));  log_softmax_grad(dy, y) = dy - exp(y) * sum(dy)
Status InferGrad(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  if (in[0].shape() != in[1].shape() || in[0].dtype() != in[1].dtype())
    return InvalidArgument("[softmax_grad] gradient %s does not match output %s",
                           in[0].meta_string(), in[1].meta_string());
  out->push_back(TensorMeta{in[1].shape(), in[1].dtype(), in[1].device()});
  return Status();
}

const OpDef kSoftmaxGrad = OpSpec("softmax_grad", InferGrad).SaveInputs(false).SaveOutputs(false);
const OpDef kLogSoftmaxGrad =
    OpSpec("log_softmax_grad", InferGrad).SaveInputs(false).SaveOutputs(false);

const OpDef kSoftmax =
    OpSpec("softmax", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g,
                           Dispatch1(kSoftmaxGrad, {c.grad_outputs[0], c.outputs[0]}, c.attrs));
          return TensorList{g};
        })
        .SaveInputs(false);

const OpDef kLogSoftmax =
    OpSpec("log_softmax", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g,
                           Dispatch1(kLogSoftmaxGrad, {c.grad_outputs[0], c.outputs[0]}, c.attrs));
          return TensorList{g};
        })
        .SaveInputs(false);

StatusOr<Tensor> Run(const OpDef& op, const Tensor& x, int64_t dim) {
  RETURN_IF_ERROR(CheckFloating(op.name, x));
  ASSIGN_OR_RETURN(int64_t d, WrapDim(op.name, dim, x.ndim()));
  if (x.ndim() == 0) d = 0;
  return Dispatch1(op, {x}, {{"dim", d}});
}

}  // namespace

namespace functional {

StatusOr<Tensor> Softmax(const Tensor& x, int64_t dim) {
  return Run(kSoftmax, x, dim);
}
StatusOr<Tensor> LogSoftmax(const Tensor& x, int64_t dim) {
  return Run(kLogSoftmax, x, dim);
}

}  // namespace functional
}  // namespace oneflow_like
