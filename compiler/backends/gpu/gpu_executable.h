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
#include "compiler/device_compile.h"
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

class GpuExecutable : public DeviceExecutable {
 public:
  GpuExecutable(std::unique_ptr<HloModule> module, std::unique_ptr<BufferAssignment> assignment,
                ThunkSequence thunks, std::shared_ptr<KernelLibrary> kernels, GpuCompileStats stats,
                int device);
  ~GpuExecutable() override;
  GpuExecutable(const GpuExecutable&) = delete;
  GpuExecutable& operator=(const GpuExecutable&) = delete;

  Status Initialize();

  // arguments[i] / outputs[k]: device pointers on device() laid out as parameter_shapes()[i] /
  // output_shapes()[k]. Enqueues on `stream` and returns (the caller waits on the stream before
  // reading outputs); null = the executable's own stream. Runs are ordered: a run on another
  // stream waits for the previous run (the temp arena is shared).
  Status Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
             cudaStream_t stream = nullptr);
  // DeviceExecutable: enqueues on the runtime's CUDA stream `stream` (of device()); library
  // calls run the runtime's kernels on it.
  Status Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
             oneflow_like::Stream* stream) override;
  // Host literals in, host literals out (tuples as tuples): copies, Run, waits. For tests.
  StatusOr<Literal> RunOnHostLiterals(absl::Span<const Literal> args);

  int device_index() const { return device_; }
  Device device() const override { return Device(DeviceType::kCUDA, device_); }
  cudaStream_t own_stream() const { return stream_; }
  const std::vector<HloShape>& parameter_shapes() const { return parameter_shapes_; }
  const std::vector<HloShape>& output_shapes() const { return output_shapes_; }
  const HloModule& module() const override { return *module_; }
  const BufferAssignment& buffer_assignment() const override { return *assignment_; }
  const GpuCompileStats& stats() const { return stats_; }
  std::string StatsString() const override { return stats_.ToString(); }
  const ThunkSequence& thunks() const { return thunks_; }
  std::string ThunksToString() const override { return ThunkSequenceToString(thunks_); }
  const std::vector<std::pair<int64_t, int64_t>>& output_parameter_aliases() const override {
    return aliases_;
  }
  // The accepted donations (CompileForGpu): the caller may pass a parameter's buffer as the
  // output of the pair.
  void set_output_parameter_aliases(std::vector<std::pair<int64_t, int64_t>> a) {
    aliases_ = std::move(a);
  }
  // Before Initialize, when the executable has command buffers: parameters and outputs of at most
  // `max_bytes` (not in a donated pair) get buffers of the executable's own, which Run fills from
  // the arguments (a device copy first) and copies to the outputs (after), so their addresses
  // are the same on every run and the command buffers replay whatever buffers the caller passes.
  void set_stage_bytes(int64_t max_bytes) { stage_bytes_ = max_bytes; }
  // Bytes copied per run by staging (parameters in, outputs out).
  int64_t staged_bytes_per_run() const { return staged_bytes_; }

 private:
  Status RunOn(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
               cudaStream_t stream, oneflow_like::Stream* runtime_stream);

  std::unique_ptr<HloModule> module_;
  std::unique_ptr<BufferAssignment> assignment_;
  ThunkSequence thunks_;
  std::shared_ptr<KernelLibrary> kernels_;
  GpuCompileStats stats_;
  int device_;
  std::vector<HloShape> parameter_shapes_, output_shapes_;
  std::vector<char*> device_allocations_;  // by allocation index: arena, constants, staged
  cudaStream_t stream_ = nullptr;
  cudaEvent_t last_run_ = nullptr;
  cudaStream_t last_stream_ = nullptr;
  std::vector<std::pair<int64_t, int64_t>> aliases_;  // (output leaf, parameter) in place
  int64_t stage_bytes_ = 0, staged_bytes_ = 0;
  std::vector<bool> staged_;  // by allocation index
  std::mutex mu_;
};

}  // namespace oneflow_like::hlo
