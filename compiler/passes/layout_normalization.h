// LayoutNormalization: makes physical layout changes explicit. A `copy` between layouts becomes
// bitcast (to the physical shape, default layout) -> transpose -> bitcast, and a reshape between
// default layouts becomes a bitcast (row-major bytes do not move). Afterwards only bitcasts,
// parameters and the entry root touch non-default layouts, so codegen sees row-major only.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class LayoutNormalization {
 public:
  static const char* name() { return "layout-normalization"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
