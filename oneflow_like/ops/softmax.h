// Softmax family: softmax and log_softmax over one dim (numerically stable, max-subtracted).
// Backward ops (softmax_grad, log_softmax_grad) read the forward output, not the input. The ops,
// their attributes (SoftmaxAttrs) and these entries are declared in
// oneflow_like/opdefs/softmax.def.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Softmax(const Tensor& x, int64_t dim);
StatusOr<Tensor> LogSoftmax(const Tensor& x, int64_t dim);

}  // namespace functional
}  // namespace oneflow_like
