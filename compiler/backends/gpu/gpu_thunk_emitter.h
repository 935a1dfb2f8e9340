// GpuThunkEmitter: walks the scheduled entry computation with its buffer assignment and emits
// one GPU thunk per instruction that does work: fusion -> GpuKernel (CUDA source for NVRTC),
// canonical dot -> GpuGemm (cuBLAS), copy -> GpuCopy; aliases (parameter, constant, bitcast,
// tuple, get-tuple-element) emit nothing. Then runs of thunks become CommandBufferThunks.
// Everything else (convolution, library custom calls, while, conditional, ops the CPU runs
// through the evaluator, fusions the emitter declines) is an Unimplemented error naming the
// instruction: the GPU has no fallback. Needs no device.
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

StatusOr<GpuEmitResult> EmitGpuThunks(const HloModule& module, const BufferAssignment& assignment,
                                      const GpuEmitOptions& options = {});

}  // namespace oneflow_like::hlo
