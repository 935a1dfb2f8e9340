// The reduce family's declarations expanded from reduce.def: the typed attribute structs (with
// ForEachAttr, so opdefs/attrs.h ReadAttrs/ToAttrMap convert them) and one trait per op naming
// its attributes. Host-only (dims are a std::vector); shared by kernels/cpu, kernels/cuda's host
// side, the lowering, oneflow_like/ops and python/csrc.
#pragma once
#include <cstdint>
#include <vector>

namespace oneflow_like {
namespace opdefs {

using Ints = std::vector<int64_t>;

#define OFL_REDUCE(...)
#define OFL_REDUCE_API(...)
#define OFL_TABLE "oneflow_like/opdefs/reduce.def"
#include "oneflow_like/opdefs/attr_structs.inc"
#undef OFL_TABLE

// Reduce<Name>::Attrs is the op's attribute struct; kName its registered name.
#define OFL_ATTRS(...)
#undef OFL_REDUCE
#define OFL_REDUCE(name, Name, Attrs_, ...) \
  struct Reduce##Name {                     \
    using Attrs = Attrs_;                   \
    static constexpr const char* kName = #name; \
  };
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE
#undef OFL_REDUCE_API
#undef OFL_ATTRS

}  // namespace opdefs
}  // namespace oneflow_like
