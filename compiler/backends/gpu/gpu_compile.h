// CompileForGpu: HloModule -> GpuExecutable on one CUDA device; the GPU twin of compile.h's
// Compile. Steps: RunHloPasses (pipeline.h, the same passes as the CPU) -> AssignBuffers ->
// EmitGpuThunks -> NVRTC (GpuKernelCompiler) -> load the image -> GpuExecutable::Initialize.
// CompileGpuModule stops before loading and needs no device. Dumps as Compile's, plus
// `<module>.kernels.cu` (the NVRTC translation unit) and `<module>.ptx`.
//
//   ASSIGN_OR_RETURN(auto exe, CompileForGpu(std::move(module)));
//   RETURN_IF_ERROR(exe->Run({x_dev, w_dev}, {out_dev}, stream));   // device pointers
#pragma once
#include <memory>

#include "compiler/backends/gpu/gpu_executable.h"
#include "compiler/backends/gpu/gpu_kernel_compiler.h"
#include "compiler/backends/gpu/gpu_thunk_emitter.h"
#include "compiler/pipeline.h"

namespace oneflow_like::hlo {

struct GpuCompileOptions {
  PipelineOptions pipeline;
  NvrtcOptions nvrtc;
  // Compile for the device's architecture (see ArchForComputeCapability) instead of nvrtc.arch
  // when a device is present.
  bool arch_from_device = true;
  GpuEmitOptions emit;
  int device = 0;
  // (output leaf, parameter) pairs the caller would like to share a buffer (CompileOptions's
  // `donated`); the accepted ones are GpuExecutable::output_parameter_aliases().
  std::vector<std::pair<int64_t, int64_t>> donated;
  // Parameters and outputs of at most this many bytes run through the executable's own buffers
  // (GpuExecutable::set_stage_bytes): 0 = none.
  int64_t stage_bytes = 0;
};

// The compiled pieces before anything touches a device.
struct GpuCompiledModule {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<BufferAssignment> assignment;
  GpuEmitResult emit;
  GpuKernelImage image;  // empty when the module has no kernels
  GpuCompileStats stats;
  std::vector<std::pair<int64_t, int64_t>> aliases;  // the accepted `donated` pairs
};

StatusOr<GpuCompiledModule> CompileGpuModule(std::unique_ptr<HloModule> module,
                                             const GpuCompileOptions& options = {});

// FailedPrecondition (with device/cuda's NoDeviceReason) when options.device is not usable.
StatusOr<std::unique_ptr<GpuExecutable>> CompileForGpu(std::unique_ptr<HloModule> module,
                                                       const GpuCompileOptions& options = {});

}  // namespace oneflow_like::hlo
