// The matmul family's typed attribute struct expanded from matmul.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert it from/to an op call's AttrMap). Plain fields; shared
// by kernels/cpu, kernels/cuda's host side, the lowering, oneflow_like/ops and python/csrc.
#pragma once

namespace oneflow_like {
namespace opdefs {

#define OFL_MATMUL(...)
#define OFL_MATMUL_API(...)
#define OFL_TABLE "oneflow_like/opdefs/matmul.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_MATMUL
#undef OFL_MATMUL_API

}  // namespace opdefs
}  // namespace oneflow_like
