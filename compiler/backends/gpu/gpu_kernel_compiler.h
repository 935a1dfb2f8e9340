// GpuKernelCompiler: compiles one module's fused-loop kernels (the emitter's CUDA dialect) with
// NVRTC into one PTX (arch compute_XY) or CUBIN (arch sm_XY) image. Needs no device.
//
// Launch ABI. The emitter's CUDA kernels take `char** args`, a pointer the kernel dereferences
// on the device. Rather than keep a device-resident pointer table per launch, the translation
// unit turns each emitted kernel into a __device__ __forceinline__ body and adds a __global__
// entry with the emitter's name that takes the pointers by value:
//   extern "C" __global__ void name(OflKernelArgs<num_args> args, int64_t begin, int64_t end)
// so a launch passes {&pointer_array, &begin, &end} and a CUDA graph records the addresses.
// Each thread computes output element begin + blockIdx.x * blockDim.x + threadIdx.x (< end).
//
// Cache: the image is stored under KernelCacheDir() (the CPU JIT's: $ONEFLOW_LIKE_CACHE_DIR or
// ~/.cache/oneflow_like/kernels) as gpu_<key>.ptx|.cubin, key = hash of (NVRTC version, options,
// translation unit).
#pragma once
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "compiler/codegen/fused_loop_emitter.h"

namespace oneflow_like::hlo {

// The kernel name of a fusion: "k_" + its name with non-alphanumerics as '_' (as the CPU's).
std::string GpuKernelName(const HloInstruction& fusion);

struct NvrtcOptions {
  std::string arch = "compute_90";         // compute_XY: PTX (driver JIT); sm_XY: CUBIN
  std::vector<std::string> extra_options;  // appended after ours (e.g. "--fmad=false")
  bool use_disk_cache = true;
};

struct GpuKernelImage {
  std::string image;  // PTX text or CUBIN bytes
  bool is_cubin = false;
  std::vector<std::string> kernel_names;  // the __global__ entries, in source order
  std::string translation_unit;           // what NVRTC compiled (for dumps)
  std::string cache_path;                 // "" when the cache is off
  bool cache_hit = false;
  double compile_seconds = 0;
};

class GpuKernelCompiler {
 public:
  explicit GpuKernelCompiler(NvrtcOptions options = {}) : options_(std::move(options)) {}

  // Compiles `kernels` (from EmitFusionKernel(..., KernelDialect::kCuda)); `module_name` only
  // names errors. Errors carry the NVRTC log and name the kernels its errors point into.
  StatusOr<GpuKernelImage> Compile(const std::string& module_name,
                                   absl::Span<const KernelSource> kernels) const;

  // Compiles an arbitrary CUDA C++ source (no prelude added); `entries` are the expected
  // __global__ names, checked against the output.
  StatusOr<GpuKernelImage> CompileSource(const std::string& what, const std::string& source,
                                         const std::vector<std::string>& entries) const;

  // The translation unit for `kernels`: our NVRTC prelude, KernelPrelude(kCuda), then each
  // kernel as a body plus its by-value entry. InvalidArgument when a kernel's header is not the
  // emitter's documented CUDA ABI.
  static StatusOr<std::string> TranslationUnit(absl::Span<const KernelSource> kernels);
  // The options passed to nvrtcCompileProgram.
  std::vector<std::string> CompileOptions() const;
  // "major.minor" of the linked NVRTC.
  static std::string NvrtcVersion();
  // "compute_XY" for a device of compute capability major*10+minor: the newest architecture
  // NVRTC supports that is not newer than the device (PTX runs on newer devices, not older).
  static std::string ArchForComputeCapability(int capability);

 private:
  NvrtcOptions options_;
};

}  // namespace oneflow_like::hlo
