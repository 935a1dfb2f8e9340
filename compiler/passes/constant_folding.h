// ConstantFolding: replaces instructions whose operands are all constants by the constant the
// reference evaluator computes. Skips rng, custom calls, control flow, and results over 4096
// elements (a folded broadcast would only bloat the module; codegen broadcasts for free).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class ConstantFolding {
 public:
  static const char* name() { return "constant-folding"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
