// The copy family's typed attribute structs expanded from copy.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap); contiguous takes
// unary.def's NoAttrs. Host-only (std::vector and std::string fields); shared by oneflow_like/ops
// and python/csrc.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_like/base/dtype.h"
#include "oneflow_like/opdefs/unary.h"

namespace oneflow_like {
namespace opdefs {

using Ints = std::vector<int64_t>;

#define OFL_COPY(...)
#define OFL_COPY_API(...)
#define OFL_TABLE "oneflow_like/opdefs/copy.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_COPY
#undef OFL_COPY_API

}  // namespace opdefs
}  // namespace oneflow_like
