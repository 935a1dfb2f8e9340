// The creation family's typed attribute structs expanded from creation.def (with ForEachAttr, so
// opdefs/attrs.h ReadAttrs/ToAttrMap convert them from/to an op call's AttrMap). Host-only
// (std::vector and std::string fields); shared by kernels/cpu, kernels/cuda's host side, the
// lowerings, oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_like/base/dtype.h"

namespace oneflow_like {
namespace opdefs {

using Ints = std::vector<int64_t>;

#define OFL_CREATION(...)
#define OFL_CREATION_API(...)
#define OFL_TABLE "oneflow_like/opdefs/creation.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

#undef OFL_CREATION
#undef OFL_CREATION_API

}  // namespace opdefs
}  // namespace oneflow_like
