// GpuExecutable: the optimized module, its buffer assignment, the GPU thunk sequence and the
// loaded kernel image, on one device. Initialize (once, by CompileForGpu) allocates the temp
// arena with cudaMalloc, uploads constants and initializes every thunk. Run binds the caller's
// device buffers to the parameter/output allocations and enqueues the thunks on a stream.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "compiler/backends/gpu/gpu_kernel_compiler.h"
#include "compiler/backends/gpu/gpu_thunk_emitter.h"
#include "compiler/ir/literal.h"
#include "compiler/passes/buffer_assignment.h"

namespace oneflow_like::hlo {

struct GpuCompileStats {
  double passes_seconds = 0, codegen_seconds = 0, nvrtc_seconds = 0;
  bool nvrtc_cache_hit = false;
  std::string arch;
  EmitStats emit;
  int64_t command_buffers = 0;
  std::string ToString() const;
};

class GpuExecutable {
 public:
  GpuExecutable(std::unique_ptr<HloModule> module, std::unique_ptr<BufferAssignment> assignment,
                ThunkSequence thunks, std::shared_ptr<KernelLibrary> kernels, GpuCompileStats stats,
                int device);
  ~GpuExecutable();
  GpuExecutable(const GpuExecutable&) = delete;
  GpuExecutable& operator=(const GpuExecutable&) = delete;

  Status Initialize();

  // arguments[i] / outputs[k]: device pointers on device() laid out as parameter_shapes()[i] /
  // output_shapes()[k]. Enqueues on `stream` and returns (the caller waits on the stream before
  // reading outputs); null = the executable's own stream. Runs are ordered: a run on another
  // stream waits for the previous run (the temp arena is shared).
  Status Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
             cudaStream_t stream = nullptr);
  // Host literals in, host literals out (tuples as tuples): copies, Run, waits. For tests.
  StatusOr<Literal> RunOnHostLiterals(absl::Span<const Literal> args);

  int device() const { return device_; }
  cudaStream_t own_stream() const { return stream_; }
  const std::vector<HloShape>& parameter_shapes() const { return parameter_shapes_; }
  const std::vector<HloShape>& output_shapes() const { return output_shapes_; }
  const HloModule& module() const { return *module_; }
  const BufferAssignment& buffer_assignment() const { return *assignment_; }
  const GpuCompileStats& stats() const { return stats_; }
  const ThunkSequence& thunks() const { return thunks_; }
  std::string ThunksToString() const { return ThunkSequenceToString(thunks_); }

 private:
  std::unique_ptr<HloModule> module_;
  std::unique_ptr<BufferAssignment> assignment_;
  ThunkSequence thunks_;
  std::shared_ptr<KernelLibrary> kernels_;
  GpuCompileStats stats_;
  int device_;
  std::vector<HloShape> parameter_shapes_, output_shapes_;
  std::vector<char*> device_allocations_;  // by allocation index: the arena and constants
  cudaStream_t stream_ = nullptr;
  cudaEvent_t last_run_ = nullptr;
  cudaStream_t last_stream_ = nullptr;
  std::mutex mu_;
};

}  // namespace oneflow_like::hlo
