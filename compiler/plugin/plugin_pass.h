// The compiler-plugin pass: for each plugin in turn, show it the entry computation (GraphView),
// let it select ops, group them (partitioner.h), outline each partition, compile all of them in
// one plugin call and replace each by a dispatch op owning its bytecode (a DispatchThunk at
// emission). Runs on simplified, layout-normalized HLO before fusion (pipeline.cc): plugins see
// plain ops and fuse on their own; what they leave fuses for the CPU backend.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_module.h"
#include "compiler/plugin/plugin_loader.h"

namespace oneflow_like::hlo::plugin {

// What went where: compute ops (parameters, constants, tuples excluded) and the bytes they
// produce, per backend; each partition; every op left on the CPU with its reason.
struct PluginReport {
  struct Backend {
    std::string name;  // the plugin's display name, or "cpu"
    int64_t ops = 0, bytes = 0, flops = 0;
  };
  struct PartitionInfo {
    std::string name, plugin, entry_point;
    int64_t ops = 0, inputs = 0, outputs = 0, bytecode_bytes = 0;
  };
  struct Fallback {
    std::string op, opcode, reason;
  };
  std::vector<Backend> backends;
  std::vector<PartitionInfo> partitions;
  std::vector<Fallback> fallbacks;
  std::string ToString() const;
};

// Rough FLOPs of one op (2*M*N*K for dots, one per element read by reductions, one per output
// element otherwise): the coverage share the benchmark reports.
int64_t OpFlops(const HloInstruction& i);

// Returns whether the module changed. `report` (optional) receives the coverage.
StatusOr<bool> ApplyCompilerPlugins(
    HloModule* module, const std::vector<std::shared_ptr<CompilerPluginLibrary>>& plugins,
    PluginReport* report);

}  // namespace oneflow_like::hlo::plugin
