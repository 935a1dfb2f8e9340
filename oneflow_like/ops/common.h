// Small helpers shared by the op-family files (schemas and functional entries).
#pragma once
#include <vector>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace ops {

// Infer for ops whose single output has the input's meta.
Status InferSameAsInput(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out);
// Normalises a dim list (negative dims, duplicates) for `op` over `ndim` dims; empty = all.
StatusOr<std::vector<int64_t>> NormalizeDims(const char* op, const std::vector<int64_t>& dims,
                                             int64_t ndim);
// The shape after reducing `dims` (sorted, normalised).
Shape ReducedShape(const Shape& s, const std::vector<int64_t>& dims, bool keepdim);

}  // namespace ops
}  // namespace oneflow_like
