#include "compiler/backends/gpu/gpu_compile.h"

#include <chrono>

#include "compiler/backends/gpu/gpu_thunks.h"
#include "device/cuda/cuda_status.h"
#include "device/cuda/device.h"

namespace oneflow_like::hlo {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

StatusOr<std::string> DeviceArch(int device) {
  int major = 0, minor = 0;
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return GpuKernelCompiler::ArchForComputeCapability(major * 10 + minor);
}

// compiler/device_compile.h's compiler for CUDA devices: the lazy runtime's nn.Graph on cuda.
StatusOr<std::unique_ptr<DeviceExecutable>> CompileForCudaDevice(std::unique_ptr<HloModule> module,
                                                                 const CompileOptions& options,
                                                                 const Device& device) {
  GpuCompileOptions o;
  o.pipeline = options.pipeline;
  o.device = device.index();
  o.donated = options.donated;
  // A training loop feeds a new batch and keeps each step's loss: without staging, every step
  // would move those buffers and re-capture the command buffers that touch them.
  o.stage_bytes = int64_t{1} << 20;
  ASSIGN_OR_RETURN(std::unique_ptr<GpuExecutable> exe, CompileForGpu(std::move(module), o));
  return std::unique_ptr<DeviceExecutable>(std::move(exe));
}

[[maybe_unused]] const bool kCudaCompilerRegistered =
    (RegisterDeviceCompiler(DeviceType::kCUDA, &CompileForCudaDevice), true);

}  // namespace

StatusOr<GpuCompiledModule> CompileGpuModule(std::unique_ptr<HloModule> module,
                                             const GpuCompileOptions& options) {
  if (module == nullptr) return InvalidArgument("[compile for gpu] null module");
  const DumpOptions& dump = options.pipeline.dump;
  GpuCompiledModule out;
  auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(RunHloPasses(module.get(), options.pipeline));
  out.stats.passes_seconds = SecondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(out.assignment, AssignBuffers(*module));
  DumpToFile(dump, module->name(), "9998.buffer_assignment.txt", out.assignment->ToString());
  FusionAliases fusion_aliases;
  out.aliases = AcceptOutputParameterAliases(*module, options.donated, &fusion_aliases);
  ASSIGN_OR_RETURN(out.emit,
                   EmitGpuThunks(*module, *out.assignment, options.emit, &fusion_aliases));
  out.stats.codegen_seconds = SecondsSince(t0);
  out.stats.emit = out.emit.stats;
  out.stats.command_buffers = out.emit.command_buffers;
  DumpToFile(dump, module->name(), "9999.thunks.txt",
             absl::StrCat(ThunkSequenceToString(out.emit.thunks), "\n", out.stats.emit.ToString()));
  NvrtcOptions nvrtc = options.nvrtc;
  if (options.arch_from_device && cuda::CheckDevice(options.device).ok()) {
    ASSIGN_OR_RETURN(nvrtc.arch, DeviceArch(options.device));
  }
  out.stats.arch = nvrtc.arch;
  if (!out.emit.kernels.empty()) {
    ASSIGN_OR_RETURN(out.image, GpuKernelCompiler(nvrtc).Compile(module->name(), out.emit.kernels));
    out.stats.nvrtc_seconds = out.image.compile_seconds;
    out.stats.nvrtc_cache_hit = out.image.cache_hit;
    DumpToFile(dump, module->name(), "kernels.cu", out.image.translation_unit);
    if (!out.image.is_cubin) DumpToFile(dump, module->name(), "ptx", out.image.image);
  }
  out.module = std::move(module);
  return out;
}

StatusOr<std::unique_ptr<GpuExecutable>> CompileForGpu(std::unique_ptr<HloModule> module,
                                                       const GpuCompileOptions& options) {
  if (cuda::DeviceCount() == 0)
    return absl::FailedPreconditionError(
        absl::StrCat("[compile for gpu] no CUDA device: ", cuda::NoDeviceReason()));
  RETURN_IF_ERROR(cuda::CheckDevice(options.device));
  ASSIGN_OR_RETURN(GpuCompiledModule c, CompileGpuModule(std::move(module), options));
  std::shared_ptr<KernelLibrary> library;
  if (!c.emit.kernels.empty()) {
    cuda::DeviceGuard guard(options.device);
    auto loaded = CudaKernelLibrary::Load(c.image);
    if (!loaded.ok())
      return Status(loaded.status().code(),
                    absl::StrCat("[compile for gpu] loading the ", c.stats.arch, " image of ",
                                 c.module->name(), ": ", loaded.status().message()));
    library = std::move(loaded).value();
  }
  auto exe = std::make_unique<GpuExecutable>(std::move(c.module), std::move(c.assignment),
                                             std::move(c.emit.thunks), std::move(library),
                                             std::move(c.stats), options.device);
  exe->set_output_parameter_aliases(std::move(c.aliases));
  exe->set_stage_bytes(options.stage_bytes);
  RETURN_IF_ERROR(exe->Initialize());
  return exe;
}

}  // namespace oneflow_like::hlo
