#include "compiler/passes/multi_output_fusion.h"

#include "absl/container/flat_hash_map.h"
#include "compiler/passes/fusion_utils.h"
#include "compiler/passes/pass_util.h"
#include "compiler/passes/priority_fusion.h"

namespace oneflow_like::hlo {
namespace {

bool Candidate(const HloInstruction* f) {
  return f->opcode() == HloOpcode::kFusion && f->attrs().fusion_kind == FusionKind::kLoop && !IsMultiOutputFusion(f);
}

StatusOr<bool> MergeSiblings(HloInstruction* a, HloInstruction* b) {
  HloComputation* comp = a->parent();
  HloComputation* body = comp->parent()->AddEmbeddedComputation(
      std::make_unique<HloComputation>(absl::StrCat("fused_multi_", a->name())));
  std::vector<HloInstruction*> outer;
  auto param_for = [&](HloInstruction* o) -> HloInstruction* {
    for (size_t k = 0; k < outer.size(); ++k) if (outer[k] == o) return body->parameter(k);
    outer.push_back(o);
    return body->AddParameter(HloInstruction::CreateParameter(0, o->shape(), "param"));
  };
  std::vector<HloInstruction*> roots;
  for (HloInstruction* f : {a, b}) {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> m;
    for (HloInstruction* i : f->fused_computation()->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kParameter) { m[i] = param_for(f->operand(i->parameter_number())); continue; }
      std::vector<HloInstruction*> ops;
      for (HloInstruction* o : i->operands()) ops.push_back(m.at(o));
      m[i] = body->AddInstruction(i->CloneWithNewOperands(i->shape(), ops));
    }
    roots.push_back(m.at(f->fused_computation()->root_instruction()));
  }
  HloShape tuple_shape = HloShape::Tuple({a->shape(), b->shape()});
  body->set_root_instruction(AddInst(body, HloOpcode::kTuple, tuple_shape, roots));
  auto fi = HloInstruction::Create(HloOpcode::kFusion, tuple_shape, outer);
  fi->set_called_computations({body});
  HloInstruction* fusion = comp->AddInstruction(std::move(fi));
  body->set_fusion_instruction(fusion);
  HloAttrs g0, g1;
  g1.index = 1;
  HloInstruction* ga = AddInst(comp, HloOpcode::kGetTupleElement, a->shape(), {fusion}, g0);
  HloInstruction* gb = AddInst(comp, HloOpcode::kGetTupleElement, b->shape(), {fusion}, g1);
  RETURN_IF_ERROR(comp->ReplaceInstruction(a, ga));
  RETURN_IF_ERROR(comp->ReplaceInstruction(b, gb));
  return true;
}

// Producer p with users besides the loop fusion c (e.g. an optimizer's new momentum buffer, a
// graph output that the parameter update also reads): one loop computing both, tuple(p, c).
StatusOr<bool> MergeProducerConsumer(HloInstruction* p, HloInstruction* c) {
  HloComputation* comp = p->parent();
  HloComputation* body = comp->parent()->AddEmbeddedComputation(
      std::make_unique<HloComputation>(absl::StrCat("fused_multi_", c->name())));
  std::vector<HloInstruction*> outer;
  auto param_for = [&](HloInstruction* o) -> HloInstruction* {
    for (size_t k = 0; k < outer.size(); ++k) if (outer[k] == o) return body->parameter(k);
    outer.push_back(o);
    return body->AddParameter(HloInstruction::CreateParameter(0, o->shape(), "param"));
  };
  auto clone = [&](HloInstruction* f, HloInstruction* produced) -> HloInstruction* {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> m;
    for (HloInstruction* i : f->fused_computation()->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kParameter) {
        HloInstruction* o = f->operand(i->parameter_number());
        m[i] = o == p && produced != nullptr ? produced : param_for(o);
        continue;
      }
      std::vector<HloInstruction*> ops;
      for (HloInstruction* o : i->operands()) ops.push_back(m.at(o));
      m[i] = body->AddInstruction(i->CloneWithNewOperands(i->shape(), ops));
    }
    return m.at(f->fused_computation()->root_instruction());
  };
  HloInstruction* p_root = clone(p, nullptr);
  HloInstruction* c_root = clone(c, p_root);
  HloShape tuple_shape = HloShape::Tuple({p->shape(), c->shape()});
  body->set_root_instruction(AddInst(body, HloOpcode::kTuple, tuple_shape, {p_root, c_root}));
  auto fi = HloInstruction::Create(HloOpcode::kFusion, tuple_shape, outer);
  fi->set_called_computations({body});
  HloInstruction* fusion = comp->AddInstruction(std::move(fi));
  body->set_fusion_instruction(fusion);
  HloAttrs g0, g1;
  g1.index = 1;
  HloInstruction* gp = AddInst(comp, HloOpcode::kGetTupleElement, p->shape(), {fusion}, g0);
  HloInstruction* gc = AddInst(comp, HloOpcode::kGetTupleElement, c->shape(), {fusion}, g1);
  RETURN_IF_ERROR(comp->ReplaceInstruction(c, gc));
  RETURN_IF_ERROR(comp->ReplaceInstruction(p, gp));
  return true;
}

bool CanMergeProducerConsumer(const HloInstruction* p, const HloInstruction* c) {
  if (!Candidate(p) || !Candidate(c) || p->shape().dims() != c->shape().dims()) return false;
  if (FusedInstructionCount(p) + FusedInstructionCount(c) > PriorityFusion::kMaxFusedInstructions) return false;
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
          ASSIGN_OR_RETURN(merged, MergeProducerConsumer(p, u));
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
        for (HloInstruction* u : shared->users()) if (Candidate(u)) users.push_back(u);
        for (size_t x = 0; x < users.size() && !merged; ++x) {
          for (size_t y = x + 1; y < users.size() && !merged; ++y) {
            HloInstruction *a = users[x], *b = users[y];
            if (a->shape().dims() != b->shape().dims()) continue;
            if (FusedInstructionCount(a) + FusedInstructionCount(b) > PriorityFusion::kMaxFusedInstructions) continue;
            if (Reachable(a, b) || Reachable(b, a)) continue;
            ASSIGN_OR_RETURN(merged, MergeSiblings(a, b));
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
