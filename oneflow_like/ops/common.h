// Small helpers shared by the op-family files (schemas and functional entries).
#pragma once
#include <initializer_list>
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

// Double backward (backward with create_graph=True runs gradient formulas with grad mode on).
// Whether a gradient formula should build its result from differentiable ops instead of its
// fused backward op: grad mode is on and one of `ts` (the incoming gradient, the saved tensors
// it reads) requires grad. Otherwise the fused backward op runs: the first-order path.
bool DifferentiableBackward(std::initializer_list<Tensor> ts);
// The error of a backward op with no double-backward formula (see NoDoubleBackward).
Status DoubleBackwardUnsupported(const char* op);
// The gradient formula of an internal backward op whose own gradient is not implemented: a
// gradient required through it (create_graph=True, then a second backward) fails, naming the op,
// instead of leaving that contribution out of the result.
template <const OpDef& Self>
StatusOr<TensorList> NoDoubleBackward(const GradContext&) {
  return DoubleBackwardUnsupported(Self.name);
}
}  // namespace ops
}  // namespace oneflow_like
