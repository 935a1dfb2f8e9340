// The HLO optimization pipeline: one straight-line function, each pass named in order.
#pragma once
#include "compiler/dump.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

struct PipelineOptions {
  DumpOptions dump = DumpOptions::FromEnv();
  bool verify_each_pass = true;  // run the verifier after every pass (cheap at our sizes)
};

// Optimizes `module` in place; afterwards it is fused, scheduled and ready for buffer assignment.
Status RunHloPasses(HloModule* module, const PipelineOptions& options = {});

}  // namespace oneflow_like::hlo
