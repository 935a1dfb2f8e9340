// Reduction family: sum, mean, max/min (values and indices), argmax/argmin, prod, var/std,
// norm, logsumexp over any axes with keepdim.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// dims empty = all dims.
StatusOr<Tensor> Sum(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
StatusOr<Tensor> Mean(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// Sums broadcast dims away so the result has `shape` (the reverse of broadcasting).
StatusOr<Tensor> SumToShape(const Tensor& x, const Shape& shape);

}  // namespace functional
}  // namespace oneflow_like
