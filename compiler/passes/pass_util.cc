#include "compiler/passes/pass_util.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace oneflow_like::hlo {

HloInstruction* AddInst(HloComputation* comp, HloOpcode op, const HloShape& shape,
                        std::vector<HloInstruction*> operands, const HloAttrs& attrs) {
  auto inst = HloInstruction::Create(op, shape, std::move(operands));
  *inst->mutable_attrs() = attrs;
  return comp->AddInstruction(std::move(inst));
}

HloInstruction* AddScalarConstant(HloComputation* comp, DType t, double v) {
  auto inst = HloInstruction::CreateConstant(Literal::Scalar(t, v));
  return comp->AddInstruction(std::move(inst));
}

bool GetSplatValue(const HloInstruction* inst, double* value) {
  while (inst->opcode() == HloOpcode::kBroadcast || inst->opcode() == HloOpcode::kReshape)
    inst = inst->operand(0);
  if (inst->opcode() != HloOpcode::kConstant || inst->literal().data.empty()) return false;
  double v = inst->literal().data[0];
  for (double x : inst->literal().data)
    if (x != v) return false;
  *value = v;
  return true;
}

bool IsSplat(const HloInstruction* inst, double value) {
  double v;
  return GetSplatValue(inst, &v) && v == value;
}

std::vector<HloComputation*> NonFusionComputations(const HloModule& module) {
  std::vector<HloComputation*> out;
  for (HloComputation* c : module.MakeComputationPostOrder())
    if (!c->IsFusionComputation()) out.push_back(c);
  return out;
}

bool ComputationsEqual(const HloComputation& a, const HloComputation& b) {
  if (&a == &b) return true;
  auto pa = a.MakeInstructionPostOrder(), pb = b.MakeInstructionPostOrder();
  if (pa.size() != pb.size() || a.num_parameters() != b.num_parameters()) return false;
  absl::flat_hash_map<const HloInstruction*, const HloInstruction*> map;
  for (size_t i = 0; i < pa.size(); ++i) {
    const HloInstruction *x = pa[i], *y = pb[i];
    if (x->operand_count() != y->operand_count()) return false;
    bool same_called = x->called_computations().size() == y->called_computations().size();
    for (size_t c = 0; same_called && c < x->called_computations().size(); ++c)
      same_called = ComputationsEqual(*x->called_computations()[c], *y->called_computations()[c]);
    if (!same_called || x->opcode() != y->opcode() || x->shape() != y->shape() ||
        !(x->attrs() == y->attrs()))
      return false;
    if (x->opcode() == HloOpcode::kConstant && !(x->literal() == y->literal())) return false;
    for (int64_t k = 0; k < x->operand_count(); ++k)
      if (map[x->operand(k)] != y->operand(k)) return false;
    map[x] = y;
  }
  return map[a.root_instruction()] == b.root_instruction();
}

bool Reachable(const HloInstruction* from, const HloInstruction* to) {
  std::vector<const HloInstruction*> stack = {from};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (i == to) return true;
    if (!seen.insert(i).second) continue;
    for (const HloInstruction* u : i->users()) stack.push_back(u);
  }
  return false;
}

HloShape WithDefaultLayout(HloShape s) {
  s.SetDefaultLayout();
  return s;
}

}  // namespace oneflow_like::hlo
