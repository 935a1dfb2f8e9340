// The reduce family's typed attribute structs expanded from reduce.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Host-only
// (dims are a std::vector); shared by kernels/cpu, kernels/cuda's host side, the lowering,
// oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>
#include <vector>

namespace oneflow_like {
namespace opdefs {

using Ints = std::vector<int64_t>;

#define OFL_REDUCE(...)
#define OFL_REDUCE_API(...)
#define OFL_REDUCE_INTERNAL(...)
#define OFL_TABLE "oneflow_like/opdefs/reduce.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_REDUCE
#undef OFL_REDUCE_API
#undef OFL_REDUCE_INTERNAL

}  // namespace opdefs
}  // namespace oneflow_like
