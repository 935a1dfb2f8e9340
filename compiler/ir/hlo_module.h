// HloModule: computations (callees before callers), one entry, unique names, optional schedule.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/ir/hlo_computation.h"

namespace oneflow_like::hlo {

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  HloComputation* AddComputation(std::unique_ptr<HloComputation> c, bool is_entry = false);
  HloComputation* AddEmbeddedComputation(std::unique_ptr<HloComputation> c) {
    return AddComputation(std::move(c));
  }
  HloComputation* entry_computation() const { return entry_; }
  // Callees before callers (the order the printer uses); entry last.
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  std::vector<HloComputation*> computations() const;
  HloComputation* GetComputation(const std::string& name) const;
  // Drops computations no longer reachable from the entry. Returns how many.
  int64_t RemoveUnreachableComputations();

  // `prefix` or `prefix.N`, never used before in this module (instructions and computations
  // have separate name spaces).
  std::string UniqueName(const std::string& prefix, bool computation = false);
  bool RegisterName(const std::string& name, bool computation = false);  // false if taken
  int64_t NextUniqueId() { return next_id_++; }

  // Set by the scheduler: every non-fusion computation's list order is its schedule.
  bool is_scheduled() const { return is_scheduled_; }
  void set_is_scheduled(bool s) { is_scheduled_ = s; }

  std::string ToString() const;
  std::unique_ptr<HloModule> Clone() const;  // via text (exact, since text round-trips)

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  absl::flat_hash_map<std::string, int64_t> next_suffix_[2];
  absl::flat_hash_set<std::string> used_names_[2];
  int64_t next_id_ = 0;
  bool is_scheduled_ = false;
};

}  // namespace oneflow_like::hlo
