#include "compiler/backends/gpu/gpu_thunks.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_join.h"
#include "device/cuda/cuda_status.h"
#include "device/cuda/device.h"

namespace oneflow_like::hlo {
namespace {

cudaStream_t StreamOf(const Thunk::ExecuteParams& p) {
  return static_cast<cudaStream_t>(p.stream);
}

std::string SliceList(const std::vector<BufferSlice>& v) {
  std::vector<std::string> parts;
  for (const auto& s : v) parts.push_back(s.ToString());
  return absl::StrJoin(parts, ", ");
}

// Prefixes a failed Status with the thunk it came from.
Status Named(const char* what, const std::string& name, const Status& s) {
  if (s.ok()) return s;
  return Status(s.code(), absl::StrCat("[", what, " ", name, "] ", s.message()));
}

}  // namespace

// ---- kernel library -------------------------------------------------------------------------

StatusOr<std::shared_ptr<CudaKernelLibrary>> CudaKernelLibrary::Load(const GpuKernelImage& image) {
  if (image.image.empty()) return InvalidArgument("[gpu] empty kernel image");
  cudaLibrary_t lib = nullptr;
  // image.image.data() is NUL-terminated, as PTX must be.
  CUDA_RETURN_IF_ERROR(
      cudaLibraryLoadData(&lib, image.image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return std::shared_ptr<CudaKernelLibrary>(new CudaKernelLibrary(lib));
}

CudaKernelLibrary::~CudaKernelLibrary() {
  if (lib_ != nullptr) cudaLibraryUnload(lib_);  // may fail during process teardown: nothing to do
}

StatusOr<void*> CudaKernelLibrary::Resolve(const std::string& name) const {
  cudaKernel_t k = nullptr;
  cudaError_t e = cudaLibraryGetKernel(&k, lib_, name.c_str());
  if (e != cudaSuccess) {
    cudaGetLastError();
    return Internal("[gpu] kernel %s not found in the loaded image: %s", name,
                    cudaGetErrorString(e));
  }
  return reinterpret_cast<void*>(k);
}

// ---- kernel -------------------------------------------------------------------------------------

Status GpuKernelThunk::Initialize(const InitializeParams& p) {
  if (p.kernels == nullptr) return Internal("[gpu kernel %s] no kernel library", name());
  ASSIGN_OR_RETURN(void* k, p.kernels->Resolve(kernel_name_));
  // Also loads (and JITs the PTX of) the kernel into the current context now, so a bad image
  // fails compilation rather than the first run or a graph capture.
  cudaFuncAttributes attr;
  const cudaError_t e = cudaFuncGetAttributes(&attr, k);
  if (e != cudaSuccess)
    return Named("gpu kernel", name(),
                 cuda::CudaStatus(e, kernel_name_.c_str(), __FILE__, __LINE__));
  block_ = std::max(32, std::min(kBlock, attr.maxThreadsPerBlock) / 32 * 32);
  kernel_ = k;
  return absl::OkStatus();
}

Status GpuKernelThunk::ExecuteOnStream(const ExecuteParams& p) {
  if (kernel_ == nullptr) return Internal("[gpu kernel %s] not initialized", name());
  std::vector<char*> ptrs(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) ptrs[i] = p.buffers->Get(args_[i]);
  // The entry takes OflKernelArgs<N> by value: the N pointers, laid out as this array.
  for (int64_t begin = 0; begin < num_elements_; begin += kMaxBlocks * block_) {
    int64_t end = std::min(num_elements_, begin + kMaxBlocks * block_);
    void* params[] = {ptrs.data(), &begin, &end};
    const unsigned blocks = static_cast<unsigned>((end - begin + block_ - 1) / block_);
    const cudaError_t e =
        cudaLaunchKernel(kernel_, dim3(blocks), dim3(block_), params, 0, StreamOf(p));
    if (e != cudaSuccess)
      return Named("gpu kernel", name(),
                   cuda::CudaStatus(e, kernel_name_.c_str(), __FILE__, __LINE__));
  }
  return absl::OkStatus();
}

std::string GpuKernelThunk::Details() const {
  return absl::StrCat(kernel_name_, " n=", num_elements_, " block=", block_, " args=[",
                      SliceList(args_), "]");
}

// ---- GEMM ---------------------------------------------------------------------------------------

CublasContext::~CublasContext() {
  if (handle_ != nullptr) cublasDestroy(handle_);
  if (workspace_ != nullptr) cudaFree(workspace_);
}

Status CublasContext::Initialize() {
  std::lock_guard<std::mutex> lock(mu_);
  if (handle_ != nullptr) return absl::OkStatus();
  CUDA_RETURN_IF_ERROR(cudaMalloc(&workspace_, kWorkspaceBytes));
  CUBLAS_RETURN_IF_ERROR(cublasCreate(&handle_));
  CUBLAS_RETURN_IF_ERROR(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes));
  return absl::OkStatus();
}

StatusOr<cublasHandle_t> CublasContext::HandleFor(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (handle_ == nullptr) return Internal("[gpu gemm] cuBLAS context not initialized");
  CUBLAS_RETURN_IF_ERROR(cublasSetStream(handle_, stream));
  // cublasSetStream resets the workspace to cuBLAS's default pool: set ours again.
  CUBLAS_RETURN_IF_ERROR(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes));
  CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(
      handle_, cuda::AllowTF32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  return handle_;
}

Status GpuGemmThunk::Initialize(const InitializeParams&) {
  if (c_.dtype != DType::kF32 && c_.dtype != DType::kF64)
    return Unimplemented("[gpu gemm %s] %s", name(), DTypeName(c_.dtype));
  for (int64_t d : {c_.m, c_.n, c_.k})
    if (d > INT_MAX)
      return Unimplemented("[gpu gemm %s] dimension %d exceeds cuBLAS's int range", name(), d);
  return Named("gpu gemm", name(), blas_->Initialize());
}

Status GpuGemmThunk::ExecuteOnStream(const ExecuteParams& p) {
  char* out = p.buffers->Get(out_);
  if (c_.m == 0 || c_.n == 0 || c_.batch == 0) return absl::OkStatus();
  if (c_.k == 0) {
    CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out, 0, out_.size, StreamOf(p)));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(cublasHandle_t h, blas_->HandleFor(StreamOf(p)));
  const cublasOperation_t op_lhs = c_.lhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_rhs = c_.rhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = static_cast<int>(c_.m), n = static_cast<int>(c_.n), k = static_cast<int>(c_.k);
  const int lda = c_.lhs_transposed ? m : k, ldb = c_.rhs_transposed ? k : n;
  const long long stride_lhs = c_.m * c_.k, stride_rhs = c_.k * c_.n, stride_out = c_.m * c_.n;
  const char *lhs = p.buffers->Get(lhs_), *rhs = p.buffers->Get(rhs_);
  const int batch = static_cast<int>(c_.batch);
  // Column-major out^T[n,m] = op(rhs)^T[n,k] x op(lhs)^T[k,m].
  if (c_.dtype == DType::kF32) {
    const float one = 1, zero = 0;
    CUBLAS_RETURN_IF_ERROR(cublasSgemmStridedBatched(
        h, op_rhs, op_lhs, n, m, k, &one, reinterpret_cast<const float*>(rhs), ldb, stride_rhs,
        reinterpret_cast<const float*>(lhs), lda, stride_lhs, &zero, reinterpret_cast<float*>(out),
        n, stride_out, batch));
  } else {
    const double one = 1, zero = 0;
    CUBLAS_RETURN_IF_ERROR(cublasDgemmStridedBatched(
        h, op_rhs, op_lhs, n, m, k, &one, reinterpret_cast<const double*>(rhs), ldb, stride_rhs,
        reinterpret_cast<const double*>(lhs), lda, stride_lhs, &zero,
        reinterpret_cast<double*>(out), n, stride_out, batch));
  }
  return absl::OkStatus();
}

std::string GpuGemmThunk::Details() const {
  return absl::StrFormat("cublas %s batch=%d m=%d n=%d k=%d%s%s lhs=%s rhs=%s out=%s",
                         DTypeName(c_.dtype), c_.batch, c_.m, c_.n, c_.k,
                         c_.lhs_transposed ? " lhsT" : "", c_.rhs_transposed ? " rhsT" : "",
                         lhs_.ToString(), rhs_.ToString(), out_.ToString());
}

// ---- copy, memset -------------------------------------------------------------------------------

Status GpuCopyThunk::ExecuteOnStream(const ExecuteParams& p) {
  char *src = p.buffers->Get(src_), *dst = p.buffers->Get(dst_);
  if (src == dst || dst_.size == 0) return absl::OkStatus();
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, dst_.size, cudaMemcpyDeviceToDevice, StreamOf(p)));
  return absl::OkStatus();
}

std::string GpuCopyThunk::Details() const {
  return absl::StrCat(src_.ToString(), " -> ", dst_.ToString());
}

Status GpuMemsetThunk::ExecuteOnStream(const ExecuteParams& p) {
  if (dst_.size == 0) return absl::OkStatus();
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(p.buffers->Get(dst_), byte_, dst_.size, StreamOf(p)));
  return absl::OkStatus();
}

std::string GpuMemsetThunk::Details() const {
  return absl::StrCat(dst_.ToString(), " = ", static_cast<int>(byte_));
}

// ---- library call -------------------------------------------------------------------------------

Status GpuLibraryCallThunk::ExecuteOnStream(const ExecuteParams& p) {
  if (p.runtime_stream == nullptr)
    return Internal(
        "[gpu library call %s] \"%s\" runs the runtime's kernels: run the executable on a runtime "
        "stream (DeviceExecutable::Run)",
        name(), target_);
  absl::InlinedVector<ExternalBuffer, 4> ins, outs;
  for (const Operand& o : operands_) ins.push_back({p.buffers->Get(o.slice), o.dtype, o.dims});
  for (const Operand& o : results_) outs.push_back({p.buffers->Get(o.slice), o.dtype, o.dims});
  return Named("gpu library call", name(),
               call_->run(target_, config_, ins, outs, p.runtime_stream));
}

std::vector<BufferSlice> GpuLibraryCallThunk::Slices() const {
  std::vector<BufferSlice> v;
  for (const Operand& o : operands_) v.push_back(o.slice);
  for (const Operand& o : results_) v.push_back(o.slice);
  return v;
}

std::string GpuLibraryCallThunk::Details() const {
  std::vector<BufferSlice> in, out;
  for (const Operand& o : operands_) in.push_back(o.slice);
  for (const Operand& o : results_) out.push_back(o.slice);
  return absl::StrCat("\"", target_, "\" ", SliceList(in), " -> ", SliceList(out));
}

// ---- command buffer -----------------------------------------------------------------------------

CommandBufferThunk::CommandBufferThunk(std::string name,
                                       std::vector<std::unique_ptr<GpuThunk>> thunks)
    : GpuThunk(Kind::kSequential, std::move(name)) {
  for (auto& t : thunks) {
    for (const BufferSlice& s : t->Slices())
      if (std::find(slices_.begin(), slices_.end(), s) == slices_.end()) slices_.push_back(s);
    thunks_.push_back(std::move(t));
  }
}

CommandBufferThunk::~CommandBufferThunk() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
}

Status CommandBufferThunk::Prepare(const PrepareParams& p) {
  return PrepareAll(thunks_, p);
}
Status CommandBufferThunk::Initialize(const InitializeParams& p) {
  return InitializeAll(thunks_, p);
}

Status CommandBufferThunk::Capture(const ExecuteParams& p) {
  const cudaStream_t stream = StreamOf(p);
  CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  Status recorded = ExecuteAll(thunks_, p);
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(stream, &graph);  // always end, even after a failure
  if (!recorded.ok() || ended != cudaSuccess) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    RETURN_IF_ERROR(recorded);
    CUDA_RETURN_IF_ERROR(ended);
  }
  if (exec_ != nullptr) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(exec_, graph, &info) != cudaSuccess) {
      cudaGetLastError();  // refused (topology changed): instantiate afresh below
      cudaGraphExecDestroy(exec_);
      exec_ = nullptr;
    }
  }
  cudaError_t inst = exec_ == nullptr ? cudaGraphInstantiate(&exec_, graph, 0) : cudaSuccess;
  cudaGraphDestroy(graph);
  CUDA_RETURN_IF_ERROR(inst);
  ++captures_;
  return absl::OkStatus();
}

Status CommandBufferThunk::ExecuteOnStream(const ExecuteParams& p) {
  if (p.stream == nullptr) return ExecuteAll(thunks_, p);  // the legacy stream cannot be captured
  // Inside the caller's own capture: record into that graph instead of nesting a capture.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  CUDA_RETURN_IF_ERROR(cudaStreamIsCapturing(StreamOf(p), &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return ExecuteAll(thunks_, p);
  std::vector<char*> addresses(slices_.size());
  for (size_t i = 0; i < slices_.size(); ++i) addresses[i] = p.buffers->Get(slices_[i]);
  if (exec_ == nullptr || addresses != captured_addresses_) {
    captured_addresses_.clear();  // a failed capture leaves nothing to replay
    RETURN_IF_ERROR(Named("command buffer", name(), Capture(p)));
    captured_addresses_ = std::move(addresses);
  } else {
    ++replays_;
  }
  CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, StreamOf(p)));
  return absl::OkStatus();
}

std::string CommandBufferThunk::ToString(int indent) const {
  return absl::StrCat(std::string(indent, ' '), "command-buffer %", name(), " (", thunks_.size(),
                      " thunks, CUDA graph)\n", ThunkSequenceToString(thunks_, indent + 2));
}

}  // namespace oneflow_like::hlo
