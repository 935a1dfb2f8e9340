// Compiled graphs <-> .oflx artifacts (compiler/artifact). Export writes a CompiledGraph's lowered
// module (before optimization) in the versioned op set, downgraded to the target op set, with its
// captured tensors; load upgrades the module, lowers it and compiles a CompiledGraph whose
// captures are tensors over the file's mapping.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/artifact/artifact_file.h"
#include "oneflow_like/lazy/graph.h"

namespace oneflow_like::artifact {

struct ExportSpec {
  std::vector<std::string> input_names, output_names;
  std::vector<std::string> capture_names, capture_roles;  // one per captured tensor
  bool training = false;
  std::string metadata;
  int target_opset = 0;  // 0 = kCurrentOpset
  // Also store the JIT's kernel library, so a loader whose compiler, flags and generated source
  // match skips the C++ compiler (native code: load such files only from trusted sources).
  bool embed_kernels = false;
};

// The contents `graph` exports to (tensor bytes copied into `storage`).
StatusOr<ArtifactContents> ContentsOf(const lazy::CompiledGraph& graph, const ExportSpec& spec,
                                      std::vector<std::string>* storage);
Status ExportGraph(const lazy::CompiledGraph& graph, const ExportSpec& spec,
                   const std::string& path);

struct LoadedGraph {
  LoadedArtifact artifact;
  TensorList tensors;  // artifact.contents.tensors as tensors over the mapping
  std::shared_ptr<lazy::CompiledGraph> graph;
};

// Reads, upgrades, lowers and checks the signature against the module (no compile).
StatusOr<std::unique_ptr<hlo::HloModule>> VerifyArtifact(const LoadedArtifact& artifact);
// VerifyArtifact, then compiles a graph over the file's tensors. With `install_kernels`, embedded
// kernel libraries missing from the JIT's cache are written there first.
StatusOr<LoadedGraph> LoadGraph(const std::string& path, bool install_kernels = true);

// AOT compiler plugins: the artifact at `in` with its module run through the pipeline up to the
// plugin pass (simplified, layout-normalized, each partition a dispatch op holding its bytecode
// and its original HLO), written to `out` (op-set 3 or later). Loading it needs only the
// dispatch libraries; without one, that partition runs on the CPU, with a warning.
StatusOr<hlo::plugin::PluginReport> ApplyPlugins(const std::string& in,
                                                 const std::vector<std::string>& plugins,
                                                 const std::string& out);

}  // namespace oneflow_like::artifact
