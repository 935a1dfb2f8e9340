// GPU thunks. ExecuteOnStream enqueues on `params.stream` (a cudaStream_t) and returns; the
// buffers in `params.buffers` are device addresses. Lifecycle as in compiler/thunks/thunk.h:
//   Prepare     nothing to declare (the executable owns the arena)
//   Initialize  resolve kernels in the loaded library, create the cuBLAS handle (needs a device)
//   Execute     enqueue; a CommandBufferThunk records its thunks into a CUDA graph instead
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/backends/cpu/cpu_thunks.h"
#include "compiler/backends/gpu/gpu_kernel_compiler.h"
#include "compiler/library/external_calls.h"
#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo {

// A GPU thunk names every slice it touches, so a command buffer knows when to capture again.
class GpuThunk : public Thunk {
 public:
  using Thunk::Thunk;
  virtual std::vector<BufferSlice> Slices() const = 0;
  // Whether stream capture may record it into a CUDA graph (host work or syncs may not).
  virtual bool Capturable() const { return true; }
};

// A loaded kernel image (cudaLibraryLoadData: the runtime's library API, no libcuda link);
// Resolve returns a cudaKernel_t (launchable with cudaLaunchKernel). Loads into every context.
class CudaKernelLibrary : public KernelLibrary {
 public:
  static StatusOr<std::shared_ptr<CudaKernelLibrary>> Load(const GpuKernelImage& image);
  ~CudaKernelLibrary() override;
  StatusOr<void*> Resolve(const std::string& name) const override;

 private:
  explicit CudaKernelLibrary(cudaLibrary_t lib) : lib_(lib) {}
  cudaLibrary_t lib_;
};

// A fused loop: one thread per output element over [0, num_elements), in launches of at most
// kMaxBlocks blocks of kBlock threads (fewer if the kernel's register use demands; the entry
// adds `begin`).
class GpuKernelThunk : public GpuThunk {
 public:
  static constexpr int kBlock = 256;
  static constexpr int64_t kMaxBlocks = int64_t{1} << 30;
  GpuKernelThunk(std::string name, std::string kernel_name, std::vector<BufferSlice> args,
                 int64_t num_elements)
      : GpuThunk(Kind::kKernel, std::move(name)),
        kernel_name_(std::move(kernel_name)),
        args_(std::move(args)),
        num_elements_(num_elements) {}
  Status Initialize(const InitializeParams& p) override;
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::vector<BufferSlice> Slices() const override { return args_; }

 protected:
  std::string Details() const override;

 private:
  std::string kernel_name_;
  std::vector<BufferSlice> args_;
  int64_t num_elements_;
  const void* kernel_ = nullptr;  // cudaKernel_t
  int block_ = kBlock;
};

// One cuBLAS handle with a fixed workspace (so GEMMs can be captured into CUDA graphs), shared
// by the GEMM thunks of one executable; made on the first Initialize, on the current device.
class CublasContext {
 public:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;
  ~CublasContext();
  Status Initialize();
  // The handle bound to `stream`, with the TF32 setting of device/cuda (off by default).
  StatusOr<cublasHandle_t> HandleFor(cudaStream_t stream);

 private:
  std::mutex mu_;
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

// out[B,M,N] = lhs[B,M,K] x rhs[B,K,N], row-major, operands possibly transposed in their last
// two dims (GemmConfigFor); cuBLAS is column-major, so it computes out^T = rhs^T x lhs^T.
class GpuGemmThunk : public GpuThunk {
 public:
  GpuGemmThunk(std::string name, GemmThunk::Config c, BufferSlice lhs, BufferSlice rhs,
               BufferSlice out, std::shared_ptr<CublasContext> blas)
      : GpuThunk(Kind::kGemm, std::move(name)),
        c_(c),
        lhs_(lhs),
        rhs_(rhs),
        out_(out),
        blas_(std::move(blas)) {}
  Status Initialize(const InitializeParams& p) override;
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::vector<BufferSlice> Slices() const override { return {lhs_, rhs_, out_}; }

 protected:
  std::string Details() const override;

 private:
  GemmThunk::Config c_;
  BufferSlice lhs_, rhs_, out_;
  std::shared_ptr<CublasContext> blas_;
};

// Device-to-device copy (skipped when source and destination coincide).
class GpuCopyThunk : public GpuThunk {
 public:
  GpuCopyThunk(std::string name, BufferSlice src, BufferSlice dst)
      : GpuThunk(Kind::kCopy, std::move(name)), src_(src), dst_(dst) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::vector<BufferSlice> Slices() const override { return {src_, dst_}; }

 protected:
  std::string Details() const override;

 private:
  BufferSlice src_, dst_;
};

class GpuMemsetThunk : public GpuThunk {
 public:
  GpuMemsetThunk(std::string name, BufferSlice dst, uint8_t byte = 0)
      : GpuThunk(Kind::kMemset, std::move(name)), dst_(dst), byte_(byte) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::vector<BufferSlice> Slices() const override { return {dst_}; }

 protected:
  std::string Details() const override;

 private:
  BufferSlice dst_;
  uint8_t byte_;
};

// A call of a handler registered for the device (compiler/library/external_calls.h
// RegisterDeviceExternalCall): the lazy runtime runs the op library's CUDA kernels this way
// ("ofl.kernel.<op>", "ofl.view") on the runtime's stream of the run. Never captured: the
// kernels may wait on the host (device-side index checks) or allocate.
class GpuLibraryCallThunk : public GpuThunk {
 public:
  struct Operand {
    BufferSlice slice;
    DType dtype;
    DimVector dims;
  };
  GpuLibraryCallThunk(std::string name, std::string target, std::string config,
                      std::vector<Operand> operands, std::vector<Operand> results,
                      const DeviceExternalCall* call)
      : GpuThunk(Kind::kLibraryCall, std::move(name)),
        target_(std::move(target)),
        config_(std::move(config)),
        operands_(std::move(operands)),
        results_(std::move(results)),
        call_(call) {}
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::vector<BufferSlice> Slices() const override;
  bool Capturable() const override { return false; }

 protected:
  std::string Details() const override;

 private:
  std::string target_, config_;
  std::vector<Operand> operands_, results_;
  const DeviceExternalCall* call_;
};

// Records its thunks into a CUDA graph by stream capture on the first execution and replays it
// (cudaGraphLaunch) while the addresses of every slice they touch stay the same; when one
// changes it captures again and updates the executable graph in place (cudaGraphExecUpdate),
// instantiating a new one if the update is refused. On the legacy default stream (null), which
// cannot be captured, or on a stream the caller is capturing, it runs its thunks directly.
class CommandBufferThunk : public GpuThunk {
 public:
  CommandBufferThunk(std::string name, std::vector<std::unique_ptr<GpuThunk>> thunks);
  ~CommandBufferThunk() override;
  Status Prepare(const PrepareParams& p) override;
  Status Initialize(const InitializeParams& p) override;
  Status ExecuteOnStream(const ExecuteParams& p) override;
  std::vector<BufferSlice> Slices() const override { return slices_; }
  std::string ToString(int indent) const override;
  int64_t captures() const { return captures_; }
  int64_t replays() const { return replays_; }

 private:
  Status Capture(const ExecuteParams& p);
  ThunkSequence thunks_;
  std::vector<BufferSlice> slices_;  // of every nested thunk, deduplicated
  std::vector<char*> captured_addresses_;
  cudaGraphExec_t exec_ = nullptr;
  int64_t captures_ = 0, replays_ = 0;
};

}  // namespace oneflow_like::hlo
