// Shape family: views (reshape/view, expand, permute/transpose, squeeze/unsqueeze, flatten,
// slicing) and copies that change layout (cat, stack, split/chunk, pad, tril/triu).
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// Accepts one -1 entry. A view when `x` is contiguous, else a copy.
StatusOr<Tensor> Reshape(const Tensor& x, const Shape& shape);
StatusOr<Tensor> ReshapeInfer(const Tensor& x, const std::vector<int64_t>& shape);
StatusOr<Tensor> Expand(const Tensor& x, const Shape& shape);
StatusOr<Tensor> Permute(const Tensor& x, const std::vector<int64_t>& perm);
StatusOr<Tensor> Transpose(const Tensor& x, int64_t d0, int64_t d1);

}  // namespace functional
}  // namespace oneflow_like
