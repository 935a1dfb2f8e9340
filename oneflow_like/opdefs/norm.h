// The normalization family's typed attribute structs expanded from norm.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Plain fields,
// shared by kernels/cpu, kernels/cuda's host side, the lowering, oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>

namespace oneflow_like {
namespace opdefs {

#define OFL_NORM(...)
#define OFL_NORM_GRAD(...)
#define OFL_NORM_API(...)
#define OFL_TABLE "oneflow_like/opdefs/norm.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_NORM
#undef OFL_NORM_GRAD
#undef OFL_NORM_API

}  // namespace opdefs
}  // namespace oneflow_like
