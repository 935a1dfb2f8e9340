// HloCSE: merges instructions that compute the same thing from the same operands (constants by
// value, fusions by structurally equal bodies). Rng and parameters are never merged.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class HloCSE {
 public:
  static const char* name() { return "cse"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
