#include "compiler/ir/hlo_computation.h"

#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> inst) {
  HloInstruction* raw = inst.get();
  raw->set_parent(this);
  if (parent_ != nullptr) {
    if (raw->name().empty())
      raw->set_name(parent_->UniqueName(HloOpcodeString(raw->opcode())));
    else if (!parent_->RegisterName(raw->name()))
      raw->set_name(parent_->UniqueName(raw->name()));
    raw->set_unique_id(parent_->NextUniqueId());
  }
  insts_.push_back(std::move(inst));
  return raw;
}

HloInstruction* HloComputation::AddParameter(std::unique_ptr<HloInstruction> param) {
  param->mutable_attrs()->index = static_cast<int64_t>(params_.size());
  HloInstruction* raw = AddInstruction(std::move(param));
  params_.push_back(raw);
  return raw;
}

Status HloComputation::RemoveInstruction(HloInstruction* inst) {
  if (inst->user_count() != 0)
    return Internal("cannot remove %s: it still has users", inst->name());
  if (inst == root_) return Internal("cannot remove the root %s", inst->name());
  if (inst->opcode() == HloOpcode::kParameter) {
    auto it = std::find(params_.begin(), params_.end(), inst);
    if (it != params_.end()) return Internal("use RemoveParameter for %s", inst->name());
  }
  inst->DetachOperands();
  auto it = std::find_if(insts_.begin(), insts_.end(), [&](auto& p) { return p.get() == inst; });
  if (it == insts_.end()) return Internal("%s is not in computation %s", inst->name(), name_);
  insts_.erase(it);
  return absl::OkStatus();
}

Status HloComputation::RebuildParameterList() {
  std::vector<HloInstruction*> params;
  for (auto& i : insts_)
    if (i->opcode() == HloOpcode::kParameter) params.push_back(i.get());
  std::vector<HloInstruction*> by_number(params.size(), nullptr);
  for (HloInstruction* p : params) {
    int64_t n = p->parameter_number();
    if (n < 0 || n >= static_cast<int64_t>(params.size()) || by_number[n] != nullptr)
      return InvalidArgument("computation %s: parameter numbers must be 0..%d without repeats",
                             name_, static_cast<int64_t>(params.size()) - 1);
    by_number[n] = p;
  }
  params_ = std::move(by_number);
  return absl::OkStatus();
}

Status HloComputation::RemoveParameter(int64_t number) {
  HloInstruction* p = params_.at(number);
  if (p->user_count() != 0) return Internal("parameter %s still has users", p->name());
  params_.erase(params_.begin() + number);
  for (size_t i = 0; i < params_.size(); ++i) params_[i]->mutable_attrs()->index = i;
  auto it = std::find_if(insts_.begin(), insts_.end(), [&](auto& q) { return q.get() == p; });
  insts_.erase(it);
  return absl::OkStatus();
}

Status HloComputation::ReplaceInstruction(HloInstruction* old_inst, HloInstruction* new_inst) {
  RETURN_IF_ERROR(old_inst->ReplaceAllUsesWith(new_inst));
  if (old_inst->opcode() == HloOpcode::kParameter) return absl::OkStatus();
  return RemoveInstruction(old_inst);
}

std::vector<HloInstruction*> HloComputation::instructions() const {
  std::vector<HloInstruction*> out;
  out.reserve(insts_.size());
  for (auto& i : insts_) out.push_back(i.get());
  return out;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  // Kahn's algorithm, always taking the ready instruction earliest in the list.
  absl::flat_hash_map<const HloInstruction*, int64_t> pos, pending;
  for (size_t i = 0; i < insts_.size(); ++i) pos[insts_[i].get()] = i;
  using Item = std::pair<int64_t, HloInstruction*>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (auto& up : insts_) {
    HloInstruction* i = up.get();
    int64_t n = 0;
    std::vector<const HloInstruction*> seen;
    for (HloInstruction* o : i->operands()) {
      if (std::find(seen.begin(), seen.end(), o) != seen.end()) continue;
      seen.push_back(o);
      ++n;
    }
    pending[i] = n;
    if (n == 0) ready.push({pos[i], i});
  }
  std::vector<HloInstruction*> order;
  order.reserve(insts_.size());
  while (!ready.empty()) {
    HloInstruction* i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (HloInstruction* u : i->users()) {
      if (u->parent() != this) continue;
      if (--pending[u] == 0) ready.push({pos[u], u});
    }
  }
  return order;
}

Status HloComputation::SetInstructionOrder(const std::vector<HloInstruction*>& order) {
  if (order.size() != insts_.size()) return Internal("schedule of %s has the wrong length", name_);
  absl::flat_hash_map<const HloInstruction*, int64_t> rank;
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = i;
  for (auto& up : insts_) {
    if (!rank.contains(up.get())) return Internal("schedule of %s misses %s", name_, up->name());
  }
  std::stable_sort(insts_.begin(), insts_.end(),
                   [&](const auto& a, const auto& b) { return rank[a.get()] < rank[b.get()]; });
  return absl::OkStatus();
}

}  // namespace oneflow_like::hlo
