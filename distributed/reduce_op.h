// Reduction operators of the collectives and their element-wise functions for Gloo, per dtype.
#pragma once
#include <cstddef>
#include <functional>

#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace distributed {

// The values match oneflow_like.distributed.ReduceOp (torch.distributed's names).
enum class ReduceOp : int { kSum = 0, kAvg = 1, kProduct = 2, kMin = 3, kMax = 4 };
const char* ReduceOpName(ReduceOp op);

// Gloo's reduction signature: out[i] = a[i] (op) b[i] for n elements (out may alias a or b).
using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;
// Bool reduces as logical or (sum, max) / and (product, min). AVG reduces as SUM (the caller
// divides afterwards) and needs a floating dtype.
StatusOr<ReduceFn> MakeReduceFn(DType dtype, ReduceOp op, const char* op_name);
// data[i] /= divisor, for the floating dtypes (the AVG step after a SUM).
void DivideInPlace(void* data, DType dtype, size_t n, int divisor);

}  // namespace distributed
}  // namespace oneflow_like
