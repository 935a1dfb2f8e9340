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
#include "compiler/backends/cpu/thunk_emitter.h"
#include "compiler/pipeline.h"

namespace oneflow_like::hlo {

struct CompileOptions {
  PipelineOptions pipeline;
  // (output leaf, parameter) pairs the caller would like to run on one buffer (parameter
  // donation: an optimizer writing a parameter's new value over the old one). Compile accepts a
  // pair when the output is computed by a loop fusion that reads the parameter only elementwise
  // and every other reader of the parameter runs before it; Executable::output_parameter_aliases
  // lists the accepted ones. The caller may still pass separate buffers.
  std::vector<std::pair<int64_t, int64_t>> donated;
};

StatusOr<std::unique_ptr<Executable>> Compile(std::unique_ptr<HloModule> module,
                                              const CompileOptions& options = {});

// The `donated` pairs Compile accepts on a scheduled module (instruction post-order = run order),
// and per fusion involved its (output index, operand index) pairs for the kernel emitter.
std::vector<std::pair<int64_t, int64_t>> AcceptOutputParameterAliases(
    const HloModule& module, const std::vector<std::pair<int64_t, int64_t>>& donated,
    FusionAliases* fusions);

}  // namespace oneflow_like::hlo
