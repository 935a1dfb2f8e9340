#include "compiler/passes/layout_normalization.h"

#include <algorithm>

#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {

StatusOr<bool> LayoutNormalization::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : NonFusionComputations(*module)) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kReshape && i->shape().HasDefaultLayout() &&
          i->operand(0)->shape().HasDefaultLayout() && i->shape().has_layout()) {
        HloInstruction* b = AddInst(c, HloOpcode::kBitcast, i->shape(), {i->operand(0)});
        RETURN_IF_ERROR(c->ReplaceInstruction(i, b));
        changed = true;
        continue;
      }
      if (i->opcode() != HloOpcode::kCopy || i->shape().is_tuple()) continue;
      const HloShape &from = i->operand(0)->shape(), &to = i->shape();
      if (!from.has_layout() || !to.has_layout() || from == to) continue;
      const int64_t rank = to.rank();
      HloShape phys_from = HloShape::WithDefaultLayout(from.dtype(), PhysicalDims(from));
      HloShape phys_to = HloShape::WithDefaultLayout(to.dtype(), PhysicalDims(to));
      // Physical dim j of the result holds logical dim to.m2m[rank-1-j]; find it in the source.
      HloAttrs perm;
      for (int64_t j = 0; j < rank; ++j) {
        int64_t logical = to.minor_to_major()[rank - 1 - j];
        const auto& m = from.minor_to_major();
        int64_t pos = std::find(m.begin(), m.end(), logical) - m.begin();
        perm.dimensions.push_back(rank - 1 - pos);
      }
      HloInstruction* b1 = AddInst(c, HloOpcode::kBitcast, phys_from, {i->operand(0)});
      HloInstruction* t = AddInst(c, HloOpcode::kTranspose, phys_to, {b1}, perm);
      HloInstruction* b2 = AddInst(c, HloOpcode::kBitcast, to, {t});
      RETURN_IF_ERROR(c->ReplaceInstruction(i, b2));
      changed = true;
    }
  }
  return changed;
}

}  // namespace oneflow_like::hlo
