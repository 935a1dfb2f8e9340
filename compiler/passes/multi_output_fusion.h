// MultiOutputFusion: one loop for two loop fusions of the same iteration space, with a tuple root:
//  - producer-consumer: a producer that has other users too (so priority fusion kept it) and a
//    consumer reading it elementwise (an optimizer's new momentum buffer and the parameter update
//    that reads it): the producer's value is computed once, written once, never read back;
//  - siblings: two fusions reading a common operand (the shared input is read once).
// Never merges when that would create a cycle (another path from one to the other).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class MultiOutputFusion {
 public:
  static const char* name() { return "multi-output-fusion"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
