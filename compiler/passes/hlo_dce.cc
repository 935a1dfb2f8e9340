#include "compiler/passes/hlo_dce.h"

#include <algorithm>

namespace oneflow_like::hlo {

StatusOr<bool> HloDCE::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : module->MakeComputationPostOrder()) {
    std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
    std::reverse(order.begin(), order.end());  // users before operands: one sweep suffices
    for (HloInstruction* i : order) {
      if (i->user_count() != 0 || i->IsRoot() || i->opcode() == HloOpcode::kParameter) continue;
      RETURN_IF_ERROR(c->RemoveInstruction(i));
      changed = true;
    }
  }
  changed |= module->RemoveUnreachableComputations() > 0;
  return changed;
}

}  // namespace oneflow_like::hlo
