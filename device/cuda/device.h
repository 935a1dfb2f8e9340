// The CUDA device layer: discovery, streams and events (base/stream.h), per-device caching
// allocators, pinned host memory, and per-stream cuBLAS/cuBLASLt/cuDNN handles.
//
// Discovery: the first call to DeviceCount() asks the runtime once; ANY error (no driver, driver
// too old for this runtime, no GPU) means "no CUDA device" and is never fatal.
// Threads: a CudaStream and its library handles belong to the thread that created them (the VM
// stream's worker thread, see stream_policy.cc); Synchronize/Query may be called from any thread.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/cuda/cuda_status.h"
#include "oneflow_like/base/allocator.h"
#include "oneflow_like/base/stream.h"

namespace oneflow_like {
namespace cuda {

// Number of usable devices; 0 when the runtime reports any error. Cached after the first call.
int DeviceCount();
// Why DeviceCount() is 0 (the runtime's message), or "" when devices were found.
std::string NoDeviceReason();
Status CheckDevice(int index);  // InvalidArgument unless 0 <= index < DeviceCount()

// Sets the calling thread's current device for its lifetime, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};

// TF32 in cuBLAS/cuDNN matmuls and convolutions: off by default (exact fp32 like the CPU).
void SetAllowTF32(bool allow);
bool AllowTF32();

// A non-blocking cudaStream_t on one device, with lazily made library handles bound to it.
class CudaStream final : public oneflow_like::Stream {
 public:
  static StatusOr<std::unique_ptr<CudaStream>> Create(int device);
  ~CudaStream() override;
  Device device() const override { return Device(DeviceType::kCUDA, device_); }
  void* native_handle() const override { return stream_; }
  cudaStream_t get() const { return stream_; }
  // Waits for the work queued so far, through an event (never cudaDeviceSynchronize).
  Status Synchronize() override;
  // Library handles bound to this stream (made on first use on the calling thread).
  StatusOr<cublasHandle_t> cublas();
  StatusOr<cublasLtHandle_t> cublaslt();
  StatusOr<cudnnHandle_t> cudnn();
  // Scratch for cuBLASLt/cuDNN, grown on demand; only valid until the next call on this stream
  // returns (the VM runs one instruction at a time per stream).
  StatusOr<void*> Workspace(size_t bytes);

  // A device-side check read at the next synchronization instead of a wait now (Note [Deferred
  // device checks], device.cc): the `bytes` (<= kCheckBytes) at `device_data` are copied, in
  // stream order, into page-locked host memory (so the device buffer may be freed or reused by
  // later work on this stream); the next Synchronize that finds this copy done passes them to
  // `verdict` and fails with its error, if any (the first failing check's, in issue order).
  static constexpr size_t kCheckBytes = 32;
  using CheckVerdict = std::function<Status(const void* host_bytes)>;
  Status DeferCheck(const void* device_data, size_t bytes, CheckVerdict verdict);
  // Checks deferred and not yet read (tests).
  size_t pending_checks();

 private:
  CudaStream(int device, cudaStream_t s, cudaEvent_t e) : device_(device), stream_(s), done_(e) {}
  // The first `n` pending checks, after a Synchronize saw the work before them done.
  Status RunDeferredChecks(size_t n);
  int device_;
  cudaStream_t stream_;
  cudaEvent_t done_;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  struct PendingCheck {
    char* slot;  // kCheckBytes of page-locked host memory
    CheckVerdict verdict;
  };
  std::mutex checks_mu_;
  std::vector<PendingCheck> checks_;  // in issue order
  std::vector<char*> free_slots_;
  std::vector<void*> slot_chunks_;  // cudaHostAlloc'd, freed with the stream
};

// The CudaStream behind a kernel's ctx.stream(); Internal error if it is not a CUDA stream.
StatusOr<CudaStream*> AsCudaStream(oneflow_like::Stream* s, const char* op);

class CudaEvent final : public oneflow_like::Event {
 public:
  explicit CudaEvent(int device) : device_(device) {}
  ~CudaEvent() override;
  Status Record(oneflow_like::Stream* stream) override;
  Status WaitOn(oneflow_like::Stream* stream) override;
  StatusOr<bool> Query() override;  // true also when never recorded
  Status Synchronize() override;

 private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

// The caching allocator of device `index` (cudaMalloc/cudaFree under base's CachingAllocator);
// null when the index is not a usable device. Also reachable as GetAllocator(Device("cuda:N")).
CachingAllocator* DeviceAllocator(int index);
// Page-locked host memory (cudaHostAlloc) for staging transfers; null without a device.
CachingAllocator* PinnedHostAllocator();
// Waits for every CudaStream of `device` (-1: all devices) that is alive.
Status SynchronizeAllStreams(int device);

}  // namespace cuda
}  // namespace oneflow_like
