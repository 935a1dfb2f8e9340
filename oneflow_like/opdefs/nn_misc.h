// The NN miscellany's typed attribute structs expanded from nn_misc.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Host-only; shared
// by kernels/cpu, kernels/cuda's host side, the lowering, oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>

namespace oneflow_like {
namespace opdefs {

#define OFL_NN_MISC(...)
#define OFL_NN_MISC_API(...)
#define OFL_TABLE "oneflow_like/opdefs/nn_misc.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_NN_MISC
#undef OFL_NN_MISC_API

}  // namespace opdefs
}  // namespace oneflow_like
