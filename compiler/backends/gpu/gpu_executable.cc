#include "compiler/backends/gpu/gpu_executable.h"

#include <algorithm>
#include <functional>

#include "device/cuda/cuda_status.h"
#include "device/cuda/device.h"

namespace oneflow_like::hlo {
namespace {

// The array leaves of `s` in flattened order.
void AppendLeaves(const HloShape& s, std::vector<HloShape>* out) {
  if (s.is_tuple()) {
    for (const HloShape& e : s.tuple_shapes()) AppendLeaves(e, out);
  } else {
    out->push_back(s);
  }
}

// Device buffers freed on every path (RunOnHostLiterals).
class DeviceBuffers {
 public:
  ~DeviceBuffers() {
    for (void* p : ptrs_) cudaFree(p);
  }
  StatusOr<void*> Allocate(int64_t bytes) {
    void* p = nullptr;
    CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<int64_t>(bytes, 1)));
    ptrs_.push_back(p);
    return p;
  }

 private:
  std::vector<void*> ptrs_;
};

}  // namespace

std::string GpuCompileStats::ToString() const {
  return absl::StrFormat(
      "passes %.3fs, codegen %.3fs, nvrtc %.3fs (%s, %s), command buffers %d\n%s", passes_seconds,
      codegen_seconds, nvrtc_seconds, arch, nvrtc_cache_hit ? "cache hit" : "compiled",
      command_buffers, emit.ToString());
}

GpuExecutable::GpuExecutable(std::unique_ptr<HloModule> module,
                             std::unique_ptr<BufferAssignment> assignment, ThunkSequence thunks,
                             std::shared_ptr<KernelLibrary> kernels, GpuCompileStats stats,
                             int device)
    : module_(std::move(module)),
      assignment_(std::move(assignment)),
      thunks_(std::move(thunks)),
      kernels_(std::move(kernels)),
      stats_(std::move(stats)),
      device_(device) {
  for (HloInstruction* p : module_->entry_computation()->parameters())
    parameter_shapes_.push_back(p->shape());
  AppendLeaves(module_->entry_computation()->root_instruction()->shape(), &output_shapes_);
}

GpuExecutable::~GpuExecutable() {
  cuda::DeviceGuard guard(device_);
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  thunks_.clear();  // graphs and cuBLAS handles before the memory they point into
  for (char* p : device_allocations_)
    if (p != nullptr) cudaFree(p);
  if (last_run_ != nullptr) cudaEventDestroy(last_run_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status GpuExecutable::Initialize() {
  RETURN_IF_ERROR(cuda::CheckDevice(device_));
  cuda::DeviceGuard guard(device_);
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&last_run_, cudaEventDisableTiming));
  device_allocations_.assign(assignment_->allocations().size(), nullptr);
  staged_.assign(assignment_->allocations().size(), false);
  if (stage_bytes_ > 0 && stats_.command_buffers > 0) {
    for (const BufferAllocation& a : assignment_->allocations()) {
      if (a.size <= 0 || a.size > stage_bytes_) continue;
      bool donated = false;
      for (auto [k, p] : aliases_)
        donated |= (a.kind == BufferAllocation::Kind::kParameter && a.parameter_number == p) ||
                   (a.kind == BufferAllocation::Kind::kOutput && a.output_index == k);
      if (!donated && (a.kind == BufferAllocation::Kind::kParameter ||
                       a.kind == BufferAllocation::Kind::kOutput)) {
        staged_[a.index] = true;
        staged_bytes_ += a.size;
      }
    }
  }
  for (const BufferAllocation& a : assignment_->allocations()) {
    if (a.size <= 0 || (a.kind != BufferAllocation::Kind::kTemp &&
                        a.kind != BufferAllocation::Kind::kConstant && !staged_[a.index]))
      continue;
    void* p = nullptr;
    if (cudaMalloc(&p, a.size) != cudaSuccess) {
      cudaGetLastError();
      return OutOfMemory(
          "[gpu executable %s] cannot allocate %d bytes of device memory for allocation %d",
          module_->name(), a.size, a.index);
    }
    device_allocations_[a.index] = static_cast<char*>(p);
    if (a.kind == BufferAllocation::Kind::kConstant) {
      const std::vector<char> bytes = a.constant->literal().ToBytes();
      CUDA_RETURN_IF_ERROR(cudaMemcpy(p, bytes.data(), std::min<int64_t>(a.size, bytes.size()),
                                      cudaMemcpyHostToDevice));
    }
  }
  RETURN_IF_ERROR(PrepareAll(thunks_, {}));
  Thunk::InitializeParams init;
  init.kernels = kernels_.get();
  return InitializeAll(thunks_, init);
}

Status GpuExecutable::Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
                          cudaStream_t stream) {
  return RunOn(arguments, outputs, stream, nullptr);
}

Status GpuExecutable::Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
                          oneflow_like::Stream* stream) {
  if (stream == nullptr || stream->device() != device())
    return InvalidArgument(
        "[gpu executable %s] compiled for %s, run on a stream of %s", module_->name(),
        device().ToString(),
        stream == nullptr ? std::string("no device") : stream->device().ToString());
  return RunOn(arguments, outputs, static_cast<cudaStream_t>(stream->native_handle()), stream);
}

Status GpuExecutable::RunOn(absl::Span<const void* const> arguments,
                            absl::Span<void* const> outputs, cudaStream_t stream,
                            oneflow_like::Stream* runtime_stream) {
  if (arguments.size() != parameter_shapes_.size())
    return InvalidArgument("[gpu executable %s] takes %d arguments, got %d", module_->name(),
                           static_cast<int64_t>(parameter_shapes_.size()),
                           static_cast<int64_t>(arguments.size()));
  if (outputs.size() != output_shapes_.size())
    return InvalidArgument("[gpu executable %s] writes %d outputs, got %d buffers", module_->name(),
                           static_cast<int64_t>(output_shapes_.size()),
                           static_cast<int64_t>(outputs.size()));
  if (stream_ == nullptr) return Internal("[gpu executable %s] not initialized", module_->name());
  cuda::DeviceGuard guard(device_);
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<char*> bases = device_allocations_;
  for (const BufferAllocation& a : assignment_->allocations()) {
    if (staged_[a.index]) continue;  // the executable's own buffer
    if (a.kind == BufferAllocation::Kind::kParameter)
      bases[a.index] = const_cast<char*>(static_cast<const char*>(arguments[a.parameter_number]));
    else if (a.kind == BufferAllocation::Kind::kOutput)
      bases[a.index] = static_cast<char*>(outputs[a.output_index]);
  }
  BufferAllocations buffers(std::move(bases));
  Thunk::ExecuteParams params;
  params.buffers = &buffers;
  params.stream = stream != nullptr ? stream : stream_;
  params.runtime_stream = runtime_stream;
  const cudaStream_t s = static_cast<cudaStream_t>(params.stream);
  if (last_stream_ != nullptr && last_stream_ != s)
    CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s, last_run_, 0));
  for (const BufferAllocation& a : assignment_->allocations()) {
    if (staged_[a.index] && a.kind == BufferAllocation::Kind::kParameter)
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_allocations_[a.index],
                                           arguments[a.parameter_number], a.size,
                                           cudaMemcpyDeviceToDevice, s));
  }
  RETURN_IF_ERROR(ExecuteAll(thunks_, params));
  for (const BufferAllocation& a : assignment_->allocations()) {
    if (staged_[a.index] && a.kind == BufferAllocation::Kind::kOutput)
      CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(outputs[a.output_index], device_allocations_[a.index],
                                           a.size, cudaMemcpyDeviceToDevice, s));
  }
  CUDA_RETURN_IF_ERROR(cudaEventRecord(last_run_, s));
  last_stream_ = s;
  return absl::OkStatus();
}

StatusOr<Literal> GpuExecutable::RunOnHostLiterals(absl::Span<const Literal> args) {
  if (args.size() != parameter_shapes_.size())
    return InvalidArgument("[gpu executable %s] takes %d arguments, got %d", module_->name(),
                           static_cast<int64_t>(parameter_shapes_.size()),
                           static_cast<int64_t>(args.size()));
  cuda::DeviceGuard guard(device_);
  DeviceBuffers mem;
  std::vector<const void*> in;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].shape.Compatible(parameter_shapes_[i]))
      return InvalidArgument("[gpu executable %s] argument %d is %s, expected %s", module_->name(),
                             static_cast<int64_t>(i), args[i].shape.ToString(false),
                             parameter_shapes_[i].ToString(false));
    Literal l = args[i];
    l.shape = parameter_shapes_[i];  // the executable's layout
    const std::vector<char> bytes = l.ToBytes();
    ASSIGN_OR_RETURN(void* d, mem.Allocate(bytes.size()));
    CUDA_RETURN_IF_ERROR(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    in.push_back(d);
  }
  std::vector<void*> out;
  for (const HloShape& s : output_shapes_) {
    ASSIGN_OR_RETURN(void* d, mem.Allocate(s.ByteSize()));
    out.push_back(d);
  }
  RETURN_IF_ERROR(Run(in, out, stream_));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  std::vector<Literal> leaves;
  for (size_t k = 0; k < out.size(); ++k) {
    std::vector<char> bytes(std::max<int64_t>(output_shapes_[k].ByteSize(), 1));
    CUDA_RETURN_IF_ERROR(
        cudaMemcpy(bytes.data(), out[k], output_shapes_[k].ByteSize(), cudaMemcpyDeviceToHost));
    leaves.push_back(Literal::FromBytes(output_shapes_[k], bytes.data()));
  }
  const HloShape& root = module_->entry_computation()->root_instruction()->shape();
  if (!root.is_tuple()) return std::move(leaves[0]);
  // Rebuild the (possibly nested) tuple from the leaves, in order.
  size_t next = 0;
  std::function<Literal(const HloShape&)> rebuild = [&](const HloShape& s) -> Literal {
    if (!s.is_tuple()) return std::move(leaves[next++]);
    std::vector<Literal> parts;
    for (const HloShape& e : s.tuple_shapes()) parts.push_back(rebuild(e));
    return Literal::MakeTuple(std::move(parts));
  };
  return rebuild(root);
}

}  // namespace oneflow_like::hlo
