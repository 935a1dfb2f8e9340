#include "compiler/passes/priority_fusion.h"

#include "absl/container/flat_hash_set.h"
#include "compiler/passes/fusion_utils.h"
#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

int64_t Bytes(const HloInstruction* i) {
  return i->shape().ByteSize();
}

int64_t TranscendentalOps(const HloInstruction* i) {
  if (i->opcode() != HloOpcode::kFusion) return IsTranscendental(i->opcode()) ? 1 : 0;
  int64_t n = 0;
  for (HloInstruction* f : i->fused_computation()->instructions())
    n += IsTranscendental(f->opcode()) ? 1 : 0;
  return n;
}

bool CanFuseIntoAllUsers(const HloInstruction* p) {
  if (!IsFusibleProducer(p) || p->user_count() == 0 || p->IsRoot()) return false;
  for (const HloInstruction* u : p->users()) {
    if (!IsFusibleConsumer(u)) return false;
    if (FusedInstructionCount(u) + FusedInstructionCount(p) > PriorityFusion::kMaxFusedInstructions)
      return false;
    if (u->operand_count() + p->operand_count() > PriorityFusion::kMaxFusionOperands) return false;
  }
  return true;
}

}  // namespace

int64_t PriorityFusion::Benefit(const HloInstruction* p) {
  const int64_t users = p->user_count(), out = Bytes(p);
  int64_t in = 0;
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const HloInstruction* o : p->operands())
    if (seen.insert(o).second) in += Bytes(o);
  const int64_t saved = out + users * out + in + kLaunchBytes;
  const int64_t spent = users * in + (users - 1) * p->shape().numel() * 4 * TranscendentalOps(p);
  return saved - spent;
}

StatusOr<bool> PriorityFusion::Run(HloModule* module) {
  bool changed = false;
  while (true) {
    HloInstruction* best = nullptr;
    int64_t best_benefit = 0;
    for (HloComputation* c : NonFusionComputations(*module)) {
      for (HloInstruction* p : c->MakeInstructionPostOrder()) {
        if (!CanFuseIntoAllUsers(p)) continue;
        int64_t b = Benefit(p);
        if (b > best_benefit) {
          best = p;
          best_benefit = b;
        }
      }
    }
    if (best == nullptr) break;
    std::vector<HloInstruction*> users = best->users();
    for (HloInstruction* u : users) RETURN_IF_ERROR(FuseProducerIntoConsumer(best, u).status());
    changed = true;
  }
  if (changed) module->RemoveUnreachableComputations();
  return changed;
}

}  // namespace oneflow_like::hlo
