#include "compiler/passes/multi_output_fusion.h"

#include "absl/container/flat_hash_map.h"
#include "compiler/passes/fusion_utils.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/priority_fusion.h"

namespace oneflow_like::hlo {
namespace {

bool Candidate(const HloInstruction* f) {
  return f->opcode() == HloOpcode::kFusion && f->attrs().fusion_kind == FusionKind::kLoop &&
         !IsMultiOutputFusion(f);
}

// One loop fusion computing `a` and `b` (same iteration space) with root tuple(a, b). Where `b`
// reads `a` (producer-consumer) it uses a's value inside the loop instead of a parameter, so a
// is computed once, written once and never read back; siblings just share their common inputs.
StatusOr<bool> MergeIntoMultiOutput(HloInstruction* a, HloInstruction* b) {
  HloComputation* comp = a->parent();
  HloComputation* body = comp->parent()->AddEmbeddedComputation(
      std::make_unique<HloComputation>(absl::StrCat("fused_multi_", b->name())));
  std::vector<HloInstruction*> outer;
  auto param_for = [&](HloInstruction* o) -> HloInstruction* {
    for (size_t k = 0; k < outer.size(); ++k)
      if (outer[k] == o) return body->parameter(k);
    outer.push_back(o);
    return body->AddParameter(HloInstruction::CreateParameter(0, o->shape(), "param"));
  };
  HloInstruction* a_root = nullptr;
  auto clone = [&](HloInstruction* f) -> HloInstruction* {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> m;
    for (HloInstruction* i : f->fused_computation()->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kParameter) {
        HloInstruction* o = f->operand(i->parameter_number());
        m[i] = o == a && a_root != nullptr ? a_root : param_for(o);
        continue;
      }
      std::vector<HloInstruction*> ops;
      for (HloInstruction* o : i->operands()) ops.push_back(m.at(o));
      m[i] = body->AddInstruction(i->CloneWithNewOperands(i->shape(), ops));
    }
    return m.at(f->fused_computation()->root_instruction());
  };
  a_root = clone(a);
  HloInstruction* b_root = clone(b);
  HloShape tuple_shape = HloShape::Tuple({a->shape(), b->shape()});
  body->set_root_instruction(AddInst(body, HloOpcode::kTuple, tuple_shape, {a_root, b_root}));
  auto fi = HloInstruction::Create(HloOpcode::kFusion, tuple_shape, outer);
  fi->set_called_computations({body});
  HloInstruction* fusion = comp->AddInstruction(std::move(fi));
  body->set_fusion_instruction(fusion);
  HloAttrs g0, g1;
  g1.index = 1;
  HloInstruction* ga = AddInst(comp, HloOpcode::kGetTupleElement, a->shape(), {fusion}, g0);
  HloInstruction* gb = AddInst(comp, HloOpcode::kGetTupleElement, b->shape(), {fusion}, g1);
  RETURN_IF_ERROR(comp->ReplaceInstruction(b, gb));  // b first: it may be a's user
  RETURN_IF_ERROR(comp->ReplaceInstruction(a, ga));
  return true;
}

bool CanMergeProducerConsumer(const HloInstruction* p, const HloInstruction* c) {
  if (!Candidate(p) || !Candidate(c) || p->shape().dims() != c->shape().dims()) return false;
  if (FusedInstructionCount(p) + FusedInstructionCount(c) > PriorityFusion::kMaxFusedInstructions)
    return false;
  if (!ReadsOperandElementwise(c, p)) return false;
  // Another path p -> x -> c would make the merged fusion both feed and need x: a cycle.
  for (const HloInstruction* o : c->operands())
    if (o != p && Reachable(p, o)) return false;
  return true;
}

}  // namespace

StatusOr<bool> MultiOutputFusion::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : NonFusionComputations(*module)) {
    bool merged = true;
    while (merged) {
      merged = false;
      for (HloInstruction* p : c->MakeInstructionPostOrder()) {
        if (!Candidate(p) || p->user_count() < 2) continue;
        for (HloInstruction* u : p->users()) {
          if (!CanMergeProducerConsumer(p, u)) continue;
          ASSIGN_OR_RETURN(merged, MergeIntoMultiOutput(p, u));
          break;
        }
        if (merged) break;
      }
      if (merged) {
        changed = true;
        continue;
      }
      for (HloInstruction* shared : c->MakeInstructionPostOrder()) {
        std::vector<HloInstruction*> users;
        for (HloInstruction* u : shared->users())
          if (Candidate(u)) users.push_back(u);
        for (size_t x = 0; x < users.size() && !merged; ++x) {
          for (size_t y = x + 1; y < users.size() && !merged; ++y) {
            HloInstruction *a = users[x], *b = users[y];
            if (a->shape().dims() != b->shape().dims()) continue;
            if (FusedInstructionCount(a) + FusedInstructionCount(b) >
                PriorityFusion::kMaxFusedInstructions)
              continue;
            if (Reachable(a, b) || Reachable(b, a)) continue;
            ASSIGN_OR_RETURN(merged, MergeIntoMultiOutput(a, b));
          }
        }
        if (merged) break;
      }
      changed |= merged;
    }
  }
  if (changed) module->RemoveUnreachableComputations();
  return changed;
}

}  // namespace oneflow_like::hlo
