#include "compiler/passes/layout_assignment.h"

#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

// Ops that may carry a non-default layout: they move no data or change the layout on purpose.
bool KeepsLayout(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kCopy:
    case HloOpcode::kBitcast:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement: return true;
    default: return false;
  }
}

bool FillMissing(HloShape* s) {
  if (s->is_tuple()) {
    bool changed = false;
    for (HloShape& e : s->mutable_tuple_shapes()) changed |= FillMissing(&e);
    return changed;
  }
  if (s->has_layout()) return false;
  s->SetDefaultLayout();
  return true;
}

}  // namespace

StatusOr<bool> LayoutAssignment::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : module->MakeComputationPostOrder()) {
    const bool entry = c == module->entry_computation();
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      changed |= FillMissing(i->mutable_shape());
      if (i->shape().is_tuple() || i->shape().HasDefaultLayout() ||
          (entry && i->opcode() == HloOpcode::kParameter))
        continue;
      if (KeepsLayout(i) && i->opcode() != HloOpcode::kParameter) continue;
      // A computing op with a requested non-default layout: compute in the default layout and
      // copy into the requested one.
      HloShape wanted = i->shape();
      i->set_shape(WithDefaultLayout(wanted));
      std::vector<HloInstruction*> users = i->users();
      bool was_root = i->IsRoot();
      HloInstruction* copy = AddInst(c, HloOpcode::kCopy, wanted, {i});
      for (HloInstruction* u : users) u->ReplaceOperandWith(i, copy);
      if (was_root) c->set_root_instruction(copy);
      changed = true;
    }
    // Operands with non-default layouts feeding ops that need the default one get a copy.
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (KeepsLayout(i)) continue;
      for (int64_t k = 0; k < i->operand_count(); ++k) {
        HloInstruction* o = i->operand(k);
        if (o->shape().is_tuple() || o->shape().HasDefaultLayout()) continue;
        HloInstruction* copy = AddInst(c, HloOpcode::kCopy, WithDefaultLayout(o->shape()), {o});
        i->ReplaceOperand(k, copy);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace oneflow_like::hlo
