// The linear-algebra family's typed attribute structs expanded from linalg.def (with ForEachAttr,
// so opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Plain fields;
// shared by kernels/cpu, oneflow_like/ops and python/csrc.
#pragma once

namespace oneflow_like {
namespace opdefs {

#define OFL_LINALG(...)
#define OFL_LINALG_API(...)
#define OFL_TABLE "oneflow_like/opdefs/linalg.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_LINALG
#undef OFL_LINALG_API

}  // namespace opdefs
}  // namespace oneflow_like
