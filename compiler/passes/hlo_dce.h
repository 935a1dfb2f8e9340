// HloDCE: removes instructions nobody uses (never parameters or roots) and computations that
// are no longer called. Rng counts as removable: an unused random draw has no observable effect.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class HloDCE {
 public:
  static const char* name() { return "dce"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
