// FusionWrapper: wraps every loop op and known-kind reduction that priority fusion left alone
// into a one-instruction fusion, so the thunk emitter sees fusions (kernels), library ops
// (dot, convolution, custom-call), copies, control flow and aliases only.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class FusionWrapper {
 public:
  static const char* name() { return "fusion-wrapper"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
