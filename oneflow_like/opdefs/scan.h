// The scan family's typed attribute structs expanded from scan.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Plain fields,
// shared by kernels/cpu, oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>

namespace oneflow_like {
namespace opdefs {

#define OFL_SCAN(...)
#define OFL_SCAN_GRAD(...)
#define OFL_SCAN_API(...)
#define OFL_TABLE "oneflow_like/opdefs/scan.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_SCAN
#undef OFL_SCAN_GRAD
#undef OFL_SCAN_API

}  // namespace opdefs
}  // namespace oneflow_like
