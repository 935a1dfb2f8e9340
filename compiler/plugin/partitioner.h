// Partitioning for compiler plugins: group the ops a plugin selected into the largest sub-DAGs
// that create no cycle, outline each into a module of its own, and replace it in the caller by
// one dispatch op. Pure HLO logic: no plugin is called here (plugin_pass.h drives it).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo::plugin {

// custom_call_target of a dispatch op; backend_config holds DispatchConfig (dispatch_thunk.h).
inline constexpr char kDispatchTarget[] = "ofl.plugin.dispatch";

struct Partition {
  std::vector<HloInstruction*> members;  // post-order
  std::vector<HloInstruction*> inputs;   // non-members read by members (not scalar constants)
  std::vector<HloInstruction*> outputs;  // members read outside, or the root
};

// Why `i` can never be a partition member, or "" if it can be (the plugin then decides).
std::string NonPartitionableReason(const HloInstruction& i);

// `selected`: instruction -> OFL_ANY_PARTITION or partition index k >= 0 (ops with different k
// never share a partition). Greedy: each op joins a producer's group, then groups merge pairwise,
// whenever the merged set has no path leaving it and coming back (which would make the dispatch
// op depend on itself). Partitions come back in post-order of their first member.
std::vector<Partition> GroupPartitions(
    const HloComputation& c, const absl::flat_hash_map<const HloInstruction*, int32_t>& selected);

// The partition as a module: parameters = inputs (shapes and layouts kept), scalar constants
// cloned in, root = tuple(outputs).
StatusOr<std::unique_ptr<HloModule>> OutlinePartition(const Partition& p, const std::string& name);

// Replaces the members in `c` by custom-call(inputs) with `target`/`backend_config`, shaped as
// the output (one) or a tuple of them (several, read through get-tuple-element). Returns the
// value that now stands for each output (the dispatch op itself, or its get-tuple-elements).
StatusOr<std::vector<HloInstruction*>> ReplaceWithDispatch(HloComputation* c, const Partition& p,
                                                           const std::string& name,
                                                           const std::string& backend_config);

}  // namespace oneflow_like::hlo::plugin
