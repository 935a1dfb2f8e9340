// The HLO optimization pipeline: one straight-line function, each pass named in order.
#pragma once
#include "compiler/dump.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/plugin/plugin_pass.h"

namespace oneflow_like::hlo {

struct PipelineOptions {
  DumpOptions dump = DumpOptions::FromEnv();
  bool verify_each_pass = true;  // run the verifier after every pass (cheap at our sizes)
  // Compiler plugins offered the module before fusion (compiler/plugin); their coverage goes to
  // `plugin_report` when set and to the dumps (<module>.plugin_report.txt).
  std::vector<std::shared_ptr<plugin::CompilerPluginLibrary>> plugins;
  plugin::PluginReport* plugin_report = nullptr;
  // Return right after the plugin pass (AOT: the artifact keeps a module the load-time pipeline
  // finishes, fusion and all).
  bool stop_after_plugins = false;
};

// Optimizes `module` in place; afterwards it is fused, scheduled and ready for buffer assignment.
Status RunHloPasses(HloModule* module, const PipelineOptions& options = {});

}  // namespace oneflow_like::hlo
