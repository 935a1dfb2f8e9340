// Unary elementwise family.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Neg(const Tensor& x);
StatusOr<Tensor> Exp(const Tensor& x);
StatusOr<Tensor> Relu(const Tensor& x);

}  // namespace functional
}  // namespace oneflow_like
