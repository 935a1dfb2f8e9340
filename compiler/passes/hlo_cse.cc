#include "compiler/passes/hlo_cse.h"

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

bool Equivalent(const HloInstruction* a, const HloInstruction* b) {
  if (a->opcode() != b->opcode() || a->operands() != b->operands() || a->shape() != b->shape() ||
      !(a->attrs() == b->attrs()))
    return false;
  if (a->opcode() == HloOpcode::kConstant) return a->literal() == b->literal();
  if (a->called_computations().size() != b->called_computations().size()) return false;
  for (size_t i = 0; i < a->called_computations().size(); ++i)
    if (!ComputationsEqual(*a->called_computations()[i], *b->called_computations()[i]))
      return false;
  return true;
}

}  // namespace

StatusOr<bool> HloCSE::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : module->MakeComputationPostOrder()) {
    // Bucket by opcode + operand identities + element count; compare fully inside a bucket.
    absl::flat_hash_map<size_t, std::vector<HloInstruction*>> buckets;
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kParameter || i->opcode() == HloOpcode::kRng) continue;
      size_t h = absl::HashOf(static_cast<int>(i->opcode()),
                              i->shape().is_tuple() ? -1 : i->shape().numel());
      for (HloInstruction* o : i->operands())
        h = absl::HashOf(h, o->unique_id(), reinterpret_cast<uintptr_t>(o));
      std::vector<HloInstruction*>& bucket = buckets[h];
      HloInstruction* same = nullptr;
      for (HloInstruction* cand : bucket) {
        if (Equivalent(cand, i)) {
          same = cand;
          break;
        }
      }
      if (same == nullptr) {
        bucket.push_back(i);
        continue;
      }
      RETURN_IF_ERROR(i->ReplaceAllUsesWith(same));
      if (!i->IsRoot()) RETURN_IF_ERROR(c->RemoveInstruction(i));
      changed = true;
    }
  }
  if (changed) module->RemoveUnreachableComputations();
  return changed;
}

}  // namespace oneflow_like::hlo
