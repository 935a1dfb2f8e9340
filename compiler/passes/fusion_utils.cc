#include "compiler/passes/fusion_utils.h"

#include "absl/container/flat_hash_map.h"
#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

bool IsPureReshapeBitcast(const HloInstruction* i) {
  return i->opcode() == HloOpcode::kBitcast && i->shape().is_array() &&
         i->shape().HasDefaultLayout() && i->operand(0)->shape().is_array() &&
         i->operand(0)->shape().HasDefaultLayout() &&
         i->shape().dtype() == i->operand(0)->shape().dtype();
}

bool IsLoopOp(const HloInstruction* i) {
  if (IsElementwise(i->opcode())) return i->shape().is_array();
  switch (i->opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kIota:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad: return true;
    default: return false;
  }
}

HloComputation* NewFusedComputation(HloModule* module, const std::string& name) {
  return module->AddEmbeddedComputation(std::make_unique<HloComputation>(name));
}

}  // namespace

bool IsMultiOutputFusion(const HloInstruction* i) {
  return i->opcode() == HloOpcode::kFusion &&
         i->fused_computation()->root_instruction()->opcode() == HloOpcode::kTuple;
}

bool IsFusibleProducer(const HloInstruction* i) {
  if (i->opcode() == HloOpcode::kFusion)
    return i->attrs().fusion_kind == FusionKind::kLoop && !IsMultiOutputFusion(i);
  if (i->IsScalarConstant() || IsPureReshapeBitcast(i)) return true;
  return IsLoopOp(i);
}

bool IsFusibleConsumer(const HloInstruction* i) {
  if (i->opcode() == HloOpcode::kFusion) return !IsMultiOutputFusion(i);
  if (i->opcode() == HloOpcode::kReduce) return i->GetReduceKind() != ReduceKind::kNone;
  return IsLoopOp(i);
}

int64_t FusedInstructionCount(const HloInstruction* i) {
  return i->opcode() == HloOpcode::kFusion ? i->fused_computation()->instruction_count() : 1;
}

StatusOr<HloInstruction*> WrapInFusion(HloInstruction* inst) {
  HloComputation* comp = inst->parent();
  HloComputation* body = NewFusedComputation(comp->parent(), absl::StrCat("fused_", inst->name()));
  std::vector<HloInstruction*> outer, inner;
  for (HloInstruction* o : inst->operands()) {
    auto it = std::find(outer.begin(), outer.end(), o);
    if (it != outer.end()) {
      inner.push_back(body->parameter(it - outer.begin()));
      continue;
    }
    outer.push_back(o);
    inner.push_back(body->AddParameter(HloInstruction::CreateParameter(0, o->shape(), "param")));
  }
  HloInstruction* clone = body->AddInstruction(inst->CloneWithNewOperands(inst->shape(), inner));
  body->set_root_instruction(clone);
  auto f = HloInstruction::Create(HloOpcode::kFusion, inst->shape(), outer);
  f->mutable_attrs()->fusion_kind =
      inst->opcode() == HloOpcode::kReduce ? FusionKind::kInput : FusionKind::kLoop;
  f->set_called_computations({body});
  HloInstruction* fusion = comp->AddInstruction(std::move(f));
  body->set_fusion_instruction(fusion);
  RETURN_IF_ERROR(comp->ReplaceInstruction(inst, fusion));
  return fusion;
}

StatusOr<HloInstruction*> FuseProducerIntoConsumer(HloInstruction* producer,
                                                   HloInstruction* consumer) {
  HloComputation* comp = consumer->parent();
  HloInstruction* fusion = consumer;
  if (fusion->opcode() != HloOpcode::kFusion) {
    ASSIGN_OR_RETURN(fusion, WrapInFusion(consumer));
  }
  HloComputation* body = fusion->fused_computation();
  auto param_for = [&](HloInstruction* o) -> HloInstruction* {
    for (int64_t k = 0; k < fusion->operand_count(); ++k)
      if (fusion->operand(k) == o) return body->parameter(k);
    fusion->AppendOperand(o);
    return body->AddParameter(HloInstruction::CreateParameter(0, o->shape(), "param"));
  };
  HloInstruction* cloned = nullptr;
  if (producer->opcode() == HloOpcode::kFusion) {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> m;
    for (HloInstruction* i : producer->fused_computation()->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kParameter) {
        m[i] = param_for(producer->operand(i->parameter_number()));
        continue;
      }
      std::vector<HloInstruction*> ops;
      for (HloInstruction* o : i->operands()) ops.push_back(m.at(o));
      m[i] = body->AddInstruction(i->CloneWithNewOperands(i->shape(), ops));
    }
    cloned = m.at(producer->fused_computation()->root_instruction());
  } else {
    std::vector<HloInstruction*> ops;
    for (HloInstruction* o : producer->operands()) ops.push_back(param_for(o));
    cloned = body->AddInstruction(producer->CloneWithNewOperands(producer->shape(), ops));
  }
  int64_t k = 0;
  while (fusion->operand(k) != producer) ++k;
  RETURN_IF_ERROR(body->parameter(k)->ReplaceAllUsesWith(cloned));
  fusion->RemoveOperand(k);
  RETURN_IF_ERROR(body->RemoveParameter(k));
  if (producer->user_count() == 0 && !producer->IsRoot())
    RETURN_IF_ERROR(comp->RemoveInstruction(producer));
  fusion->mutable_attrs()->fusion_kind = body->root_instruction()->opcode() == HloOpcode::kReduce
                                             ? FusionKind::kInput
                                             : FusionKind::kLoop;
  return fusion;
}

bool ReadsOperandElementwise(const HloInstruction* f, const HloInstruction* x) {
  for (int64_t k = 0; k < f->operand_count(); ++k) {
    if (f->operand(k) != x) continue;
    const HloInstruction* param = f->fused_computation()->parameter(k);
    for (const HloInstruction* u : param->users())
      if (!IsElementwise(u->opcode()) || u->shape().dims() != x->shape().dims()) return false;
  }
  return true;
}

}  // namespace oneflow_like::hlo
