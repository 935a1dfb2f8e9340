#include "compiler/ir/hlo_module.h"

#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "compiler/ir/hlo_parser.h"

namespace oneflow_like::hlo {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> c, bool is_entry) {
  HloComputation* raw = c.get();
  raw->set_parent(this);
  if (!RegisterName(raw->name(), true)) raw->set_name(UniqueName(raw->name(), true));
  for (HloInstruction* i : raw->instructions()) {
    if (i->name().empty())
      i->set_name(UniqueName(HloOpcodeString(i->opcode())));
    else if (!RegisterName(i->name()))
      i->set_name(UniqueName(i->name()));
    i->set_unique_id(NextUniqueId());
  }
  computations_.push_back(std::move(c));
  if (is_entry) entry_ = raw;
  return raw;
}

std::vector<HloComputation*> HloModule::computations() const {
  std::vector<HloComputation*> out;
  for (auto& c : computations_) out.push_back(c.get());
  return out;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> visited;
  std::function<void(HloComputation*)> visit = [&](HloComputation* c) {
    if (!visited.insert(c).second) return;
    for (HloInstruction* i : c->MakeInstructionPostOrder())
      for (HloComputation* callee : i->called_computations()) visit(callee);
    order.push_back(c);
  };
  for (auto& c : computations_)
    if (c.get() != entry_) visit(c.get());
  if (entry_ != nullptr) visit(entry_);
  // The entry must come last even if something else was visited through it first.
  return order;
}

HloComputation* HloModule::GetComputation(const std::string& name) const {
  for (auto& c : computations_)
    if (c->name() == name) return c.get();
  return nullptr;
}

int64_t HloModule::RemoveUnreachableComputations() {
  absl::flat_hash_set<const HloComputation*> live;
  std::function<void(const HloComputation*)> visit = [&](const HloComputation* c) {
    if (!live.insert(c).second) return;
    for (HloInstruction* i : c->instructions())
      for (HloComputation* callee : i->called_computations()) visit(callee);
  };
  if (entry_ != nullptr) visit(entry_);
  int64_t removed = 0;
  for (auto it = computations_.begin(); it != computations_.end();) {
    if (!live.contains(it->get())) {
      it = computations_.erase(it);
      ++removed;
    } else
      ++it;
  }
  return removed;
}

std::string HloModule::UniqueName(const std::string& prefix, bool computation) {
  std::string base = prefix;
  size_t dot = base.rfind('.');
  int64_t ignored;
  if (dot != std::string::npos && dot > 0 && absl::SimpleAtoi(base.substr(dot + 1), &ignored))
    base = base.substr(0, dot);
  auto& used = used_names_[computation];
  if (used.insert(base).second) return base;
  int64_t& n = next_suffix_[computation][base];
  while (true) {
    std::string cand = absl::StrCat(base, ".", ++n);
    if (used.insert(cand).second) return cand;
  }
}

bool HloModule::RegisterName(const std::string& name, bool computation) {
  return used_names_[computation].insert(name).second;
}

std::unique_ptr<HloModule> HloModule::Clone() const {
  auto m = ParseHloModule(ToString());
  return m.ok() ? std::move(m).value() : nullptr;
}

}  // namespace oneflow_like::hlo
