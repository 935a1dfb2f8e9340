// The mixed-precision ops' attribute structs expanded from amp.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Host-only;
// shared by oneflow_like/ops, kernels/cpu, kernels/cuda's host side and python/csrc.
#pragma once
#include <cstdint>

namespace oneflow_like {
namespace opdefs {

#define OFL_AMP(...)
#define OFL_AMP_API(...)
#define OFL_TABLE "oneflow_like/opdefs/amp.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_AMP
#undef OFL_AMP_API

}  // namespace opdefs
}  // namespace oneflow_like
