// The softmax family's typed attribute struct expanded from softmax.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert it from/to an op call's AttrMap). Host-only; shared by
// kernels/cpu, kernels/cuda's host side, the lowering, oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>

namespace oneflow_like {
namespace opdefs {

#define OFL_SOFTMAX(...)
#define OFL_SOFTMAX_GRAD(...)
#define OFL_SOFTMAX_API(...)
#define OFL_TABLE "oneflow_like/opdefs/softmax.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX_API

}  // namespace opdefs
}  // namespace oneflow_like
