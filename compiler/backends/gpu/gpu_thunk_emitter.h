// GpuThunkEmitter: walks the scheduled entry computation with its buffer assignment and emits
// one GPU thunk per instruction that does work: fusion -> GpuKernel (CUDA source for NVRTC),
// canonical dot -> GpuGemm (cuBLAS), copy -> GpuCopy, a custom-call with a handler registered for
// CUDA (external_calls.h) -> GpuLibraryCall; aliases (parameter, constant, bitcast, tuple,
// get-tuple-element) emit nothing. Then runs of capturable thunks become CommandBufferThunks.
// Everything else (convolution, other custom calls, while, conditional, ops the CPU runs
// through the evaluator, fusions the emitter declines) is an Unimplemented error naming the
// instruction. Needs no device.
#pragma once
#include <string>
#include <vector>

#include "compiler/backends/cpu/thunk_emitter.h"
#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo {

struct GpuEmitOptions {
  bool command_buffers = true;            // wrap runs of thunks into CUDA graphs
  int64_t min_command_buffer_thunks = 2;  // shorter runs are launched directly
};

struct GpuEmitResult {
  ThunkSequence thunks;
  std::vector<KernelSource> kernels;  // CUDA dialect, for GpuKernelCompiler
  EmitStats stats;                    // evaluator_fallbacks stays empty
  int64_t command_buffers = 0;
};

// `aliased` (optional): per fusion, the (output, operand) pairs that share a buffer at run time
// (donated parameters, compile.h): their kernel pointers lose __restrict__.
StatusOr<GpuEmitResult> EmitGpuThunks(const HloModule& module, const BufferAssignment& assignment,
                                      const GpuEmitOptions& options = {},
                                      const FusionAliases* aliased = nullptr);

}  // namespace oneflow_like::hlo
