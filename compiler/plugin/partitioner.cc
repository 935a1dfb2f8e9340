#include "compiler/plugin/partitioner.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/plugin/ofl_compiler_plugin.h"

namespace oneflow_like::hlo::plugin {
namespace {

// Union-find over the selected ops plus the cycle test of a candidate merge.
class Grouper {
 public:
  Grouper(const HloComputation& c,
          const absl::flat_hash_map<const HloInstruction*, int32_t>& selected)
      : order_(c.MakeInstructionPostOrder()) {
    for (size_t k = 0; k < order_.size(); ++k) pos_[order_[k]] = static_cast<int64_t>(k);
    for (const HloInstruction* i : order_) {
      auto it = selected.find(i);
      if (it == selected.end() || !NonPartitionableReason(*i).empty()) continue;
      group_[i] = static_cast<int64_t>(members_.size());
      members_.push_back({i});
      label_.push_back(it->second);
    }
  }

  std::vector<Partition> Run() {
    // Producer-consumer merges in post-order, then any two groups (siblings, independent
    // branches), in order of their first member.
    for (const HloInstruction* i : order_) {
      if (!group_.contains(i)) continue;
      for (const HloInstruction* o : i->operands())
        if (group_.contains(o)) TryMerge(Find(group_.at(o)), Find(group_.at(i)));
    }
    for (int64_t a = 0; a < static_cast<int64_t>(members_.size()); ++a)
      for (int64_t b = a + 1; b < static_cast<int64_t>(members_.size()); ++b)
        if (Find(a) == a && Find(b) == b) TryMerge(a, b);
    std::vector<Partition> out;
    for (int64_t g = 0; g < static_cast<int64_t>(members_.size()); ++g)
      if (Find(g) == g && !members_[g].empty()) out.push_back(Describe(members_[g]));
    std::sort(out.begin(), out.end(), [&](const Partition& x, const Partition& y) {
      return pos_.at(x.members[0]) < pos_.at(y.members[0]);
    });
    return out;
  }

 private:
  int64_t Find(int64_t g) {
    while (parent_.count(g)) g = parent_.at(g);
    return g;
  }

  void TryMerge(int64_t a, int64_t b) {
    if (a == b) return;
    const int32_t la = label_[a], lb = label_[b];
    if (la != OFL_ANY_PARTITION && lb != OFL_ANY_PARTITION && la != lb) return;
    absl::flat_hash_set<const HloInstruction*> merged(members_[a].begin(), members_[a].end());
    merged.insert(members_[b].begin(), members_[b].end());
    if (CreatesCycle(merged)) return;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b].clear();
    label_[a] = la == OFL_ANY_PARTITION ? lb : la;
    parent_[b] = a;
  }

  // A path set -> outside -> set would make the dispatch op its own (indirect) operand. Other
  // groups count as the single node they become: reaching one member reaches all of them.
  bool CreatesCycle(const absl::flat_hash_set<const HloInstruction*>& set) {
    std::vector<const HloInstruction*> stack;
    absl::flat_hash_set<const HloInstruction*> seen;
    auto visit = [&](const HloInstruction* u) {
      if (set.contains(u) || !seen.insert(u).second) return;
      stack.push_back(u);
      if (auto g = group_.find(u); g != group_.end())
        for (const HloInstruction* m : members_[Find(g->second)])
          if (seen.insert(m).second) stack.push_back(m);
    };
    for (const HloInstruction* i : set)
      for (const HloInstruction* u : i->users()) visit(u);
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      for (const HloInstruction* u : x->users()) {
        if (set.contains(u)) return true;
        visit(u);
      }
    }
    return false;
  }

  Partition Describe(std::vector<const HloInstruction*> ms) const {
    std::sort(ms.begin(), ms.end(), [&](const HloInstruction* x, const HloInstruction* y) {
      return pos_.at(x) < pos_.at(y);
    });
    absl::flat_hash_set<const HloInstruction*> set(ms.begin(), ms.end());
    Partition p;
    absl::flat_hash_set<const HloInstruction*> seen_inputs;
    for (const HloInstruction* m : ms) {
      p.members.push_back(const_cast<HloInstruction*>(m));
      for (HloInstruction* o : m->operands())
        if (!set.contains(o) && !o->IsScalarConstant() && seen_inputs.insert(o).second)
          p.inputs.push_back(o);
      bool escapes = m->IsRoot();
      for (const HloInstruction* u : m->users()) escapes |= !set.contains(u);
      if (escapes) p.outputs.push_back(const_cast<HloInstruction*>(m));
    }
    return p;
  }

  std::vector<HloInstruction*> order_;
  absl::flat_hash_map<const HloInstruction*, int64_t> pos_, group_;
  std::vector<std::vector<const HloInstruction*>> members_;
  std::vector<int32_t> label_;
  absl::flat_hash_map<int64_t, int64_t> parent_;
};

}  // namespace

std::string NonPartitionableReason(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
      return absl::StrCat(HloOpcodeString(i.opcode()), " stays with the caller");
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kFusion:
      return absl::StrCat("control flow / fusion (", HloOpcodeString(i.opcode()),
                          ") is never offloaded");
    case HloOpcode::kCustomCall:
      if (i.attrs().custom_call_target == kDispatchTarget) return "already dispatched to a plugin";
      break;
    default: break;
  }
  if (!i.shape().is_array()) return "tuple-shaped results are never offloaded";
  return "";
}

std::vector<Partition> GroupPartitions(
    const HloComputation& c, const absl::flat_hash_map<const HloInstruction*, int32_t>& selected) {
  return Grouper(c, selected).Run();
}

StatusOr<std::unique_ptr<HloModule>> OutlinePartition(const Partition& p, const std::string& name) {
  // Through text: the printer and parser round-trip exactly, and called computations (reduce's
  // to_apply) come along by name.
  std::string text = absl::StrCat("HloModule ", name, "\n\n");
  absl::flat_hash_set<const HloComputation*> called;
  for (const HloInstruction* m : p.members)
    for (const HloComputation* c : m->called_computations())
      if (called.insert(c).second) absl::StrAppend(&text, c->ToString(), "\n\n");
  absl::StrAppend(&text, "ENTRY %", name, " {\n");
  for (size_t k = 0; k < p.inputs.size(); ++k)
    absl::StrAppend(&text, "  %", p.inputs[k]->name(), " = ", p.inputs[k]->shape().ToString(),
                    " parameter(", k, ")\n");
  absl::flat_hash_set<const HloInstruction*> constants;
  for (const HloInstruction* m : p.members)
    for (const HloInstruction* o : m->operands())
      if (o->IsScalarConstant() && constants.insert(o).second)
        absl::StrAppend(&text, "  ", o->ToString(), "\n");
  for (const HloInstruction* m : p.members) absl::StrAppend(&text, "  ", m->ToString(), "\n");
  std::vector<HloShape> shapes;
  std::vector<std::string> names;
  for (const HloInstruction* o : p.outputs) {
    shapes.push_back(o->shape());
    names.push_back(absl::StrCat("%", o->name()));
  }
  absl::StrAppend(&text, "  ROOT %", name, ".outputs = ", HloShape::Tuple(shapes).ToString(),
                  " tuple(", absl::StrJoin(names, ", "), ")\n}\n");
  auto module = ParseHloModule(text);
  if (!module.ok())
    return Internal("[plugin partitioner] outlining %s gave unparsable text: %s\n%s", name,
                    module.status().message(), text);
  return module;
}

StatusOr<std::vector<HloInstruction*>> ReplaceWithDispatch(HloComputation* c, const Partition& p,
                                                           const std::string& name,
                                                           const std::string& backend_config) {
  std::vector<HloShape> shapes;
  for (const HloInstruction* o : p.outputs) shapes.push_back(o->shape());
  const HloShape shape = shapes.size() == 1 ? shapes[0] : HloShape::Tuple(shapes);
  auto call = HloInstruction::Create(HloOpcode::kCustomCall, shape, p.inputs);
  call->set_name(name);
  call->mutable_attrs()->custom_call_target = kDispatchTarget;
  call->mutable_attrs()->backend_config = backend_config;
  HloInstruction* dispatch = c->AddInstruction(std::move(call));
  std::vector<HloInstruction*> values;
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    HloInstruction* value = dispatch;
    if (p.outputs.size() > 1) {
      auto gte = HloInstruction::Create(HloOpcode::kGetTupleElement, shapes[k], {dispatch});
      gte->mutable_attrs()->index = static_cast<int64_t>(k);
      value = c->AddInstruction(std::move(gte));
    }
    RETURN_IF_ERROR(p.outputs[k]->ReplaceAllUsesWith(value));
    values.push_back(value);
  }
  for (auto it = p.members.rbegin(); it != p.members.rend(); ++it) {
    (*it)->DetachOperands();
    RETURN_IF_ERROR(c->RemoveInstruction(*it));
  }
  return values;
}

}  // namespace oneflow_like::hlo::plugin
