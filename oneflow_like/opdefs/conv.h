// The convolution family's typed attribute structs expanded from conv.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Host-only
// (std::vector fields); shared by kernels/cpu, kernels/cuda's host side, the lowering,
// oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>
#include <vector>

namespace oneflow_like {
namespace opdefs {

using Ints = std::vector<int64_t>;

#define OFL_CONV(...)
#define OFL_CONV_GRAD(...)
#define OFL_CONV_API(...)
#define OFL_TABLE "oneflow_like/opdefs/conv.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_CONV
#undef OFL_CONV_GRAD
#undef OFL_CONV_API

}  // namespace opdefs
}  // namespace oneflow_like
