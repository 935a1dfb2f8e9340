// LayoutAssignment: gives every array a layout. Entry parameters and the entry root keep the
// layouts they were given (the caller's buffers); everything else gets the default row-major
// layout, which codegen and the library calls expect. Where a given layout meets a default one,
// a `copy` changing the layout is inserted (layout normalization turns it into transpose+bitcast).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class LayoutAssignment {
 public:
  static const char* name() { return "layout-assignment"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
