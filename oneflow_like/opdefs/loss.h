// The loss family's typed attribute structs expanded from loss.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap), and the codes of
// the reduction attribute. Host-only; shared by kernels/cpu, kernels/cuda's host side,
// oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>

namespace oneflow_like {
namespace opdefs {

// The reduction attribute's codes, read by the kernels.
enum LossReduction : int64_t { kReductionNone = 0, kReductionMean = 1, kReductionSum = 2 };

// A reduction code's spelling in the Python and C++ APIs: "none", "mean" or "sum".
inline const char* ReductionName(int64_t reduction) {
  return reduction == kReductionNone ? "none" : reduction == kReductionSum ? "sum" : "mean";
}

#define OFL_LOSS(...)
#define OFL_LOSS_GRAD(...)
#define OFL_LOSS_API(...)
#define OFL_TABLE "oneflow_like/opdefs/loss.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_LOSS
#undef OFL_LOSS_GRAD
#undef OFL_LOSS_API

}  // namespace opdefs
}  // namespace oneflow_like
