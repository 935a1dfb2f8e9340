// MultiOutputFusion: merges two sibling loop fusions that read a common operand and produce the
// same iteration space into one fusion with a tuple root, so the shared input is read once and
// one launch is saved. Never merges when one sibling reaches the other (that would be a cycle).
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class MultiOutputFusion {
 public:
  static const char* name() { return "multi-output-fusion"; }
  static StatusOr<bool> Run(HloModule* module);
};

}  // namespace oneflow_like::hlo
