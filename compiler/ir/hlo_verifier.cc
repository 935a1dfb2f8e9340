#include "compiler/ir/hlo_verifier.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "compiler/ir/shape_inference.h"

namespace oneflow_like::hlo {
namespace {

Status Fail(const HloInstruction* i, const std::string& msg) {
  return InvalidArgument("[verifier] %%%s in %%%s: %s", i->name(),
                         i->parent() ? i->parent()->name() : "?", msg);
}

Status CheckLayout(const HloInstruction* i, const HloShape& s) {
  if (s.is_tuple()) {
    for (auto& e : s.tuple_shapes()) RETURN_IF_ERROR(CheckLayout(i, e));
    return absl::OkStatus();
  }
  if (s.rank() == 0 || s.minor_to_major().empty()) return absl::OkStatus();
  DimVector sorted = s.minor_to_major();
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d = 0; d < s.rank(); ++d)
    if (static_cast<int64_t>(sorted.size()) != s.rank() || sorted[d] != d)
      return Fail(i, absl::StrCat("layout of ", s.ToString(), " is not a permutation"));
  return absl::OkStatus();
}

Status VerifyComputation(const HloComputation* c) {
  if (c->root_instruction() == nullptr)
    return InvalidArgument("[verifier] computation %%%s has no root", c->name());
  std::vector<HloInstruction*> insts = c->instructions();
  absl::flat_hash_set<const HloInstruction*> members(insts.begin(), insts.end());
  if (!members.contains(c->root_instruction()))
    return InvalidArgument("[verifier] root of %%%s is not in it", c->name());
  for (int64_t p = 0; p < c->num_parameters(); ++p) {
    if (c->parameter(p)->parameter_number() != p)
      return Fail(c->parameter(p), "parameter number out of order");
  }
  int64_t params = 0;
  for (HloInstruction* i : insts) {
    if (i->parent() != c) return Fail(i, "parent pointer is wrong");
    if (i->opcode() == HloOpcode::kParameter) ++params;
    for (HloInstruction* o : i->operands()) {
      if (!members.contains(o)) return Fail(i, "operand from another computation");
      const auto& u = o->users();
      if (std::find(u.begin(), u.end(), i) == u.end())
        return Fail(i, absl::StrCat("missing from the users of %", o->name()));
    }
    for (HloInstruction* u : i->users()) {
      const auto& ops = u->operands();
      if (std::find(ops.begin(), ops.end(), i) == ops.end())
        return Fail(i, absl::StrCat("stale user %", u->name()));
    }
    for (HloComputation* callee : i->called_computations())
      if (callee == nullptr) return Fail(i, "null called computation");
    if (i->opcode() == HloOpcode::kFusion && i->fused_computation()->fusion_instruction() != i)
      return Fail(i, "fused computation does not point back at its fusion");
    RETURN_IF_ERROR(CheckLayout(i, i->shape()));
    auto inferred = InferShape(*i);
    if (!inferred.ok()) return Fail(i, std::string(inferred.status().message()));
    if (!inferred->Compatible(i->shape()))
      return Fail(i, absl::StrCat("declared ", i->shape().ToString(false),
                                  " but the operands give ", inferred->ToString(false)));
  }
  if (params != c->num_parameters())
    return InvalidArgument("[verifier] %%%s: stray parameter instruction", c->name());
  if (static_cast<int64_t>(c->MakeInstructionPostOrder().size()) != c->instruction_count())
    return InvalidArgument("[verifier] computation %%%s has a cycle", c->name());
  return absl::OkStatus();
}

}  // namespace

Status VerifyHloModule(const HloModule& module) {
  if (module.entry_computation() == nullptr)
    return InvalidArgument("[verifier] module %s has no entry", module.name());
  absl::flat_hash_set<std::string> names;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (!names.insert(i->name()).second) return Fail(i, "duplicate instruction name");
    }
    RETURN_IF_ERROR(VerifyComputation(c));
  }
  return absl::OkStatus();
}

StatusOr<bool> HloVerifier::Run(HloModule* module) {
  RETURN_IF_ERROR(VerifyHloModule(*module));
  return false;
}

}  // namespace oneflow_like::hlo
