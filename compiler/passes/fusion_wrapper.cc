#include "compiler/passes/fusion_wrapper.h"

#include "compiler/passes/fusion_utils.h"
#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {

StatusOr<bool> FusionWrapper::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : NonFusionComputations(*module)) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kFusion || i->opcode() == HloOpcode::kBitcast ||
          i->opcode() == HloOpcode::kConstant || !IsFusibleConsumer(i))
        continue;
      RETURN_IF_ERROR(WrapInFusion(i).status());
      changed = true;
    }
  }
  return changed;
}

}  // namespace oneflow_like::hlo
