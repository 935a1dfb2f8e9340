// HloComputation: a DAG of instructions with numbered parameters and one root. Owns them.
// Instruction order: the list order is kept; MakeInstructionPostOrder() returns the stable
// topological order (list order wherever dependences allow), which the printer uses, so a
// scheduled computation prints in its schedule.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_instruction.h"

namespace oneflow_like::hlo {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* m) { parent_ = m; }

  // Takes ownership; names it uniquely in the module if unnamed. Returns the raw pointer.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> inst);
  HloInstruction* AddParameter(std::unique_ptr<HloInstruction> param);
  // Removes an instruction with no users (and not the root); parameters need RemoveParameter.
  Status RemoveInstruction(HloInstruction* inst);
  // Rebuilds the parameter list from the kParameter instructions (numbers must be 0..n-1).
  Status RebuildParameterList();
  // Removes parameter `number` (no users allowed) and renumbers the later ones.
  Status RemoveParameter(int64_t number);
  // Replaces `old_inst` everywhere by `new_inst`, then removes `old_inst`.
  Status ReplaceInstruction(HloInstruction* old_inst, HloInstruction* new_inst);

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* r) { root_ = r; }
  const std::vector<HloInstruction*>& parameters() const { return params_; }
  HloInstruction* parameter(int64_t i) const { return params_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(params_.size()); }
  int64_t instruction_count() const { return static_cast<int64_t>(insts_.size()); }
  // List order (not necessarily topological after rewrites).
  std::vector<HloInstruction*> instructions() const;
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  // Reorders the list to `order` (a permutation of the instructions): used by scheduling.
  Status SetInstructionOrder(const std::vector<HloInstruction*>& order);

  // The instruction that calls this computation, when it is a fusion computation.
  HloInstruction* fusion_instruction() const { return fusion_instruction_; }
  void set_fusion_instruction(HloInstruction* f) { fusion_instruction_ = f; }
  bool IsFusionComputation() const { return fusion_instruction_ != nullptr; }

  std::string ToString(bool is_entry = false) const;

 private:
  std::string name_;
  HloModule* parent_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> insts_;
  std::vector<HloInstruction*> params_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instruction_ = nullptr;
};

}  // namespace oneflow_like::hlo
