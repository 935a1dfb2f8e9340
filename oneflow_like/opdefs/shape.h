// The shape family's typed attribute structs expanded from shape.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Host-only
// (std::vector fields); shared by kernels/cpu, kernels/cuda's host side, the lowering,
// oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>
#include <vector>

namespace oneflow_like {
namespace opdefs {

using Ints = std::vector<int64_t>;

#define OFL_SHAPE(...)
#define OFL_SHAPE_API(...)
#define OFL_TABLE "oneflow_like/opdefs/shape.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_SHAPE
#undef OFL_SHAPE_API

}  // namespace opdefs
}  // namespace oneflow_like
