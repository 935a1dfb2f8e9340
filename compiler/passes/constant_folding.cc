#include "compiler/passes/constant_folding.h"

#include "compiler/eval/hlo_evaluator.h"

namespace oneflow_like::hlo {
namespace {
constexpr int64_t kMaxFoldedElements = 4096;

bool Foldable(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kRng:
    case HloOpcode::kCustomCall:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kFusion:
    case HloOpcode::kBitcast:
    case HloOpcode::kCopy:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota: return false;
    default: break;
  }
  if (!i->shape().is_array() || i->shape().numel() > kMaxFoldedElements) return false;
  for (const HloInstruction* o : i->operands())
    if (o->opcode() != HloOpcode::kConstant) return false;
  return i->operand_count() > 0;
}
}  // namespace

StatusOr<bool> ConstantFolding::Run(HloModule* module) {
  bool changed = false;
  HloEvaluator evaluator;
  for (HloComputation* c : module->MakeComputationPostOrder()) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (!Foldable(i)) continue;
      std::vector<const Literal*> ops;
      for (const HloInstruction* o : i->operands()) ops.push_back(&o->literal());
      auto value = evaluator.EvaluateInstruction(*i, ops);
      if (!value.ok()) continue;  // unsupported here: leave it to run time
      Literal lit = std::move(value).value();
      lit.shape = i->shape();
      lit.RoundToType();
      HloInstruction* k = c->AddInstruction(HloInstruction::CreateConstant(std::move(lit)));
      RETURN_IF_ERROR(c->ReplaceInstruction(i, k));
      changed = true;
    }
  }
  return changed;
}

}  // namespace oneflow_like::hlo
