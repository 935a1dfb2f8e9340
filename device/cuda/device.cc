#include "device/cuda/device.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace oneflow_like {
namespace cuda {

Status CudaStatus(cudaError_t e, const char* expr, const char* file, int line) {
  std::string msg = absl::StrFormat("CUDA error %d %s (%s) in %s at %s:%d", static_cast<int>(e),
                                    cudaGetErrorName(e), cudaGetErrorString(e), expr, file, line);
  if (IsStickyError(e))
    msg +=
        ": the CUDA context of this process is lost (an asynchronous fault of a CUDA op issued "
        "earlier; CUDA_LAUNCH_BLOCKING=1 names it); CUDA work fails until the process "
        "restarts, CPU work is unaffected";
  return e == cudaErrorMemoryAllocation ? absl::ResourceExhaustedError(msg)
                                        : absl::InternalError(msg);
}

Status CublasStatus(cublasStatus_t e, const char* expr, const char* file, int line) {
  std::string msg =
      absl::StrFormat("cuBLAS error %d %s (%s) in %s at %s:%d", static_cast<int>(e),
                      cublasGetStatusName(e), cublasGetStatusString(e), expr, file, line);
  return e == CUBLAS_STATUS_ALLOC_FAILED ? absl::ResourceExhaustedError(msg)
                                         : absl::InternalError(msg);
}

Status CudnnStatus(cudnnStatus_t e, const char* expr, const char* file, int line) {
  std::string msg = absl::StrFormat("cuDNN error %d (%s) in %s at %s:%d", static_cast<int>(e),
                                    cudnnGetErrorString(e), expr, file, line);
  return e == CUDNN_STATUS_ALLOC_FAILED ? absl::ResourceExhaustedError(msg)
                                        : absl::InternalError(msg);
}

namespace {

struct Discovery {
  int count = 0;
  std::string reason;
};

const Discovery& Discover() {
  static const Discovery* d = [] {
    auto* r = new Discovery();
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r->reason = absl::StrCat(cudaGetErrorName(e), ": ", cudaGetErrorString(e));
      (void)cudaGetLastError();  // clear it so that no later check reports it
      n = 0;
    } else if (n == 0) {
      r->reason = "the CUDA runtime reports no devices";
    }
    r->count = n;
    return r;
  }();
  return *d;
}

std::atomic<bool> g_allow_tf32{false};

std::mutex g_streams_mu;
std::set<CudaStream*>& LiveStreams() {
  static auto* s = new std::set<CudaStream*>();
  return *s;
}

}  // namespace

int DeviceCount() {
  return Discover().count;
}
std::string NoDeviceReason() {
  return Discover().reason;
}

Status CheckDevice(int index) {
  int n = DeviceCount();
  if (n == 0)
    return absl::FailedPreconditionError(absl::StrCat("[cuda] no CUDA device: ", NoDeviceReason()));
  if (index < 0 || index >= n)
    return InvalidArgument("[cuda] device index %d out of range: %d device(s)", index, n);
  return Status();
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&prev_) != cudaSuccess) {
    prev_ = -1;
    (void)cudaGetLastError();
  }
  if (prev_ != device && cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
}

DeviceGuard::~DeviceGuard() {
  int cur = -1;
  if (prev_ >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev_) (void)cudaSetDevice(prev_);
  (void)cudaGetLastError();
}

void SetAllowTF32(bool allow) {
  g_allow_tf32.store(allow);
}
bool AllowTF32() {
  return g_allow_tf32.load();
}

// ---- streams ----

StatusOr<std::unique_ptr<CudaStream>> CudaStream::Create(int device) {
  RETURN_IF_ERROR(CheckDevice(device));
  DeviceGuard g(device);
  cudaStream_t s = nullptr;
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err != cudaSuccess) {
    cudaStreamDestroy(s);
    return CudaStatus(err, "cudaEventCreateWithFlags", __FILE__, __LINE__);
  }
  std::unique_ptr<CudaStream> r(new CudaStream(device, s, e));
  std::lock_guard<std::mutex> l(g_streams_mu);
  LiveStreams().insert(r.get());
  return r;
}

CudaStream::~CudaStream() {
  {
    std::lock_guard<std::mutex> l(g_streams_mu);
    LiveStreams().erase(this);
  }
  // Errors are ignored: at process exit the runtime may already be unloading.
  DeviceGuard g(device_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublaslt_) cublasLtDestroy(cublaslt_);
  if (cublas_) cublasDestroy(cublas_);
  if (workspace_) cudaFree(workspace_);
  for (void* c : slot_chunks_) cudaFreeHost(c);
  cudaEventDestroy(done_);
  cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

// Polls the event rather than blocking in cudaEventSynchronize so that the wait has a limit
// (ONEFLOW_LIKE_CUDA_SYNC_TIMEOUT_S, default 600 s): a hung kernel becomes DeadlineExceeded
// naming the stream instead of a hang. Yields for the first 200 us (short kernels), then sleeps.
// Note [Deferred device checks]
// Kernels that validate their inputs on the device (nll_loss's targets, integer division by zero)
// used to copy the verdict back and wait for the stream, so every such op stalled the host until
// the GPU caught up. Now they enqueue an asynchronous copy of the verdict into page-locked host
// memory (DeferCheck) and return: the error is raised at the next sync point of this stream
// (Synchronize: a host read of a tensor, flow.cuda.synchronize(), a kernel that must wait),
// naming the op that found it, as PyTorch raises device-side errors at the next sync. A
// Synchronize evaluates only the checks counted before it recorded its event, so every copy it
// reads has completed. More than kMaxPendingChecks pending checks force a Synchronize.
namespace {
constexpr size_t kMaxPendingChecks = 1024;
constexpr size_t kSlotsPerChunk = 128;
}  // namespace

Status CudaStream::DeferCheck(const void* device_data, size_t bytes, CheckVerdict verdict) {
  if (bytes > kCheckBytes)
    return Internal("[cuda:%d stream] a deferred check reads %d bytes, at most %d", device_,
                    int64_t(bytes), int64_t(kCheckBytes));
  bool full;
  {
    std::lock_guard<std::mutex> l(checks_mu_);
    full = checks_.size() >= kMaxPendingChecks;
  }
  if (full) RETURN_IF_ERROR(Synchronize());
  DeviceGuard g(device_);
  char* slot = nullptr;
  {
    std::lock_guard<std::mutex> l(checks_mu_);
    if (free_slots_.empty()) {
      void* chunk = nullptr;
      CUDA_RETURN_IF_ERROR(
          cudaHostAlloc(&chunk, kSlotsPerChunk * kCheckBytes, cudaHostAllocDefault));
      slot_chunks_.push_back(chunk);
      for (size_t i = 0; i < kSlotsPerChunk; ++i)
        free_slots_.push_back(static_cast<char*>(chunk) + i * kCheckBytes);
    }
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  cudaError_t e = cudaMemcpyAsync(slot, device_data, bytes, cudaMemcpyDeviceToHost, stream_);
  std::lock_guard<std::mutex> l(checks_mu_);
  if (e != cudaSuccess) {
    free_slots_.push_back(slot);
    return CudaStatus(e, "cudaMemcpyAsync (deferred check)", __FILE__, __LINE__);
  }
  checks_.push_back({slot, std::move(verdict)});  // after the copy was enqueued
  return Status();
}

size_t CudaStream::pending_checks() {
  std::lock_guard<std::mutex> l(checks_mu_);
  return checks_.size();
}

Status CudaStream::RunDeferredChecks(size_t n) {
  if (n == 0) return Status();
  std::vector<PendingCheck> done;
  {
    std::lock_guard<std::mutex> l(checks_mu_);
    n = std::min(n, checks_.size());
    done.assign(std::make_move_iterator(checks_.begin()),
                std::make_move_iterator(checks_.begin() + n));
    checks_.erase(checks_.begin(), checks_.begin() + n);
  }
  Status first;
  for (PendingCheck& c : done) {
    if (first.ok()) first = c.verdict(c.slot);
  }
  std::lock_guard<std::mutex> l(checks_mu_);
  for (PendingCheck& c : done) free_slots_.push_back(c.slot);
  return first;
}

Status CudaStream::Synchronize() {
  DeviceGuard g(device_);
  size_t checks = 0;
  {
    // Counted before the event: each of these checks' copies was enqueued before it.
    std::lock_guard<std::mutex> l(checks_mu_);
    checks = checks_.size();
  }
  CUDA_RETURN_IF_ERROR(cudaEventRecord(done_, stream_));
  static const double limit_s = [] {
    const char* v = std::getenv("ONEFLOW_LIKE_CUDA_SYNC_TIMEOUT_S");
    double t = v ? std::atof(v) : 0;
    return t > 0 ? t : 600.0;
  }();
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaEventQuery(done_);
    if (e == cudaSuccess) return RunDeferredChecks(checks);
    if (e != cudaErrorNotReady) CUDA_RETURN_IF_ERROR(e);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (waited > limit_s)
      return absl::DeadlineExceededError(
          absl::StrFormat("cuda:%d stream: the device did not finish its queued work within %.0f s "
                          "(ONEFLOW_LIKE_CUDA_SYNC_TIMEOUT_S); a kernel may be hung",
                          device_, limit_s));
    if (waited > 200e-6)
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else
      std::this_thread::yield();
  }
}

StatusOr<cublasHandle_t> CudaStream::cublas() {
  if (!cublas_) {
    DeviceGuard g(device_);
    cublasHandle_t h = nullptr;
    CUBLAS_RETURN_IF_ERROR(cublasCreate(&h));
    cublas_ = h;
    CUBLAS_RETURN_IF_ERROR(cublasSetStream(cublas_, stream_));
    CUBLAS_RETURN_IF_ERROR(cublasSetPointerMode(cublas_, CUBLAS_POINTER_MODE_HOST));
  }
  // Re-applied on every use so that SetAllowTF32 takes effect on existing handles.
  CUBLAS_RETURN_IF_ERROR(
      cublasSetMathMode(cublas_, AllowTF32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  return cublas_;
}

StatusOr<cublasLtHandle_t> CudaStream::cublaslt() {
  if (!cublaslt_) {
    DeviceGuard g(device_);
    cublasLtHandle_t h = nullptr;
    CUBLAS_RETURN_IF_ERROR(cublasLtCreate(&h));
    cublaslt_ = h;
  }
  return cublaslt_;
}

StatusOr<cudnnHandle_t> CudaStream::cudnn() {
  if (!cudnn_) {
    DeviceGuard g(device_);
    cudnnHandle_t h = nullptr;
    CUDNN_RETURN_IF_ERROR(cudnnCreate(&h));
    cudnn_ = h;
    CUDNN_RETURN_IF_ERROR(cudnnSetStream(cudnn_, stream_));
  }
  return cudnn_;
}

StatusOr<void*> CudaStream::Workspace(size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_;
  DeviceGuard g(device_);
  // The old buffer may still be read by queued work: wait before freeing it.
  RETURN_IF_ERROR(Synchronize());
  if (workspace_) CUDA_RETURN_IF_ERROR(cudaFree(workspace_));
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return OutOfMemory("[cuda] cannot allocate a %d-byte library workspace on cuda:%d",
                       int64_t(bytes), device_);
  }
  workspace_ = p;
  workspace_bytes_ = bytes;
  return p;
}

StatusOr<CudaStream*> AsCudaStream(oneflow_like::Stream* s, const char* op) {
  if (s == nullptr || !s->device().is_cuda())
    return Internal("[%s] CUDA kernel called without a CUDA stream", op);
  return static_cast<CudaStream*>(s);
}

Status SynchronizeAllStreams(int device) {
  std::vector<CudaStream*> streams;
  // Held while waiting: a stream cannot be destroyed under us, and waits are short-lived.
  std::lock_guard<std::mutex> l(g_streams_mu);
  for (CudaStream* s : LiveStreams())
    if (device < 0 || s->device().index() == device) RETURN_IF_ERROR(s->Synchronize());
  return Status();
}

// ---- events ----

CudaEvent::~CudaEvent() {
  if (event_) {
    cudaEventDestroy(event_);
    (void)cudaGetLastError();
  }
}

Status CudaEvent::Record(oneflow_like::Stream* stream) {
  ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(stream, "record_event"));
  DeviceGuard g(s->device().index());
  if (!event_) CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(event_, s->get()));
  return Status();
}

Status CudaEvent::WaitOn(oneflow_like::Stream* stream) {
  ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(stream, "wait_event"));
  if (!event_) return Status();  // nothing recorded: nothing to wait for
  DeviceGuard g(s->device().index());
  CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s->get(), event_, 0));
  return Status();
}

StatusOr<bool> CudaEvent::Query() {
  if (!event_) return true;
  cudaError_t e = cudaEventQuery(event_);
  if (e == cudaSuccess) return true;
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  return CudaStatus(e, "cudaEventQuery", __FILE__, __LINE__);
}

Status CudaEvent::Synchronize() {
  if (!event_) return Status();
  CUDA_RETURN_IF_ERROR(cudaEventSynchronize(event_));
  return Status();
}

// ---- allocators ----

namespace {

void* DeviceMalloc(int device, size_t n) {
  DeviceGuard g(device);
  void* p = nullptr;
  if (cudaMalloc(&p, n) != cudaSuccess) {
    (void)cudaGetLastError();  // an OOM must not surface as the next kernel's launch error
    return nullptr;
  }
  return p;
}

void DeviceFree(int device, void* p) {
  DeviceGuard g(device);
  (void)cudaFree(p);
  (void)cudaGetLastError();
}

}  // namespace

CachingAllocator* DeviceAllocator(int index) {
  if (index < 0 || index >= DeviceCount()) return nullptr;
  static std::mutex mu;
  static std::vector<CachingAllocator*>* all = new std::vector<CachingAllocator*>();
  std::lock_guard<std::mutex> l(mu);
  if (all->empty()) all->assign(DeviceCount(), nullptr);
  CachingAllocator*& a = (*all)[index];
  // Intentionally leaked, like the CPU allocator: blobs may be freed during static destruction.
  if (!a)
    a = new CachingAllocator(Device(DeviceType::kCUDA, index),
                             SystemMemory{[index](size_t n) { return DeviceMalloc(index, n); },
                                          [index](void* p) { DeviceFree(index, p); }});
  return a;
}

CachingAllocator* PinnedHostAllocator() {
  if (DeviceCount() == 0) return nullptr;
  static CachingAllocator* a = new CachingAllocator(
      Device::CPU(),
      SystemMemory{[](size_t n) -> void* {
                     void* p = nullptr;
                     if (cudaHostAlloc(&p, n, cudaHostAllocPortable) != cudaSuccess) {
                       (void)cudaGetLastError();
                       return nullptr;
                     }
                     return p;
                   },
                   [](void* p) {
                     (void)cudaFreeHost(p);
                     (void)cudaGetLastError();
                   }});
  return a;
}

namespace {
// Registration touches no CUDA API: discovery runs on the first GetAllocator(cuda:N).
const bool g_registered = [] {
  RegisterAllocatorFactory(DeviceType::kCUDA,
                           [](int index) -> Allocator* { return DeviceAllocator(index); });
  return true;
}();
}  // namespace

}  // namespace cuda
}  // namespace oneflow_like
