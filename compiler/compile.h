// Compile: HloModule -> Executable (CPU). The one entry point the lazy runtime calls.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, Compile(std::move(module)));
//   RETURN_IF_ERROR(exe->Run({x_ptr, w_ptr}, {out_ptr}));   // raw buffers, see Executable::Run
//
// Steps: RunHloPasses (pipeline.h) -> AssignBuffers -> EmitThunks -> JIT the kernels ->
// Executable::Initialize. Dumps (dump.h) add the buffer assignment and the thunk sequence.
#pragma once
#include <memory>

#include "compiler/backends/cpu/cpu_executable.h"
#include "compiler/pipeline.h"

namespace oneflow_like::hlo {

struct CompileOptions {
  PipelineOptions pipeline;
};

StatusOr<std::unique_ptr<Executable>> Compile(std::unique_ptr<HloModule> module, const CompileOptions& options = {});

}  // namespace oneflow_like::hlo
