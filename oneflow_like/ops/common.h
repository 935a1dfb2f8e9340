// Small helpers shared by the op-family files (schemas and functional entries).
#pragma once
#include <vector>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace ops {

// Infer for ops whose single output has the input's meta.
Status InferSameAsInput(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out);
// A table op's generated entry point, Run<Name>(inputs, attrs): the inputs borrowed (a TensorList
// or a braced list), the typed attributes written into the AttrMap the kernels read.
#define OFL_DEFINE_RUN1(Name, Attrs)                                                   \
  [[maybe_unused]] StatusOr<Tensor> Run##Name(TensorSpan in, const opdefs::Attrs& a) { \
    return Dispatch1(k##Name, in, opdefs::ToAttrMap(a));                               \
  }
// The same for an op with several outputs.
#define OFL_DEFINE_RUN_ALL(Name, Attrs)                                                    \
  [[maybe_unused]] StatusOr<TensorList> Run##Name(TensorSpan in, const opdefs::Attrs& a) { \
    return Dispatch(k##Name, in, opdefs::ToAttrMap(a));                                    \
  }

// Normalises a dim list (negative dims, duplicates) for `op` over `ndim` dims; empty = all.
StatusOr<std::vector<int64_t>> NormalizeDims(const char* op, const std::vector<int64_t>& dims,
                                             int64_t ndim);
// The shape after reducing `dims` (sorted, normalised).
Shape ReducedShape(const Shape& s, const std::vector<int64_t>& dims, bool keepdim);

}  // namespace ops
}  // namespace oneflow_like
