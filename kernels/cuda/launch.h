// The interface between host-side CUDA kernels (*.cc: attributes, checks, Status, registration)
// and device code (*.cu: kernels and their launchers). Plain C++ only, no abseil: nvcc compiles
// the .cu files with nothing but this header and the CUDA headers, which keeps device builds
// fast. Launchers enqueue on `stream` and return cudaGetLastError() of the launch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace oneflow_like {
namespace cuda {

constexpr int kMaxDims = 8;

// Mirrors oneflow_like::DType value for value (checked in kernel_util.cc).
enum class ScalarType : int8_t { kBool = 0, kU8, kI8, kI32, kI64, kF16, kBF16, kF32, kF64 };

// An iteration space (after collapsing dims) and one operand's strides in elements over it.
struct LoopShape {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t numel = 0;
};
struct Operand {
  void* data = nullptr;
  int64_t strides[kMaxDims] = {};
  bool contiguous = false;  // strides are row-major over the loop (then only `data` is used)
};

// ---- elementwise (unary.cu, binary.cu) ----
// out = f(in, scalar); all operands of dtype `t`.
enum class UnaryOp : int { kNeg, kExp, kRelu, kAddScalar, kMulScalar, kRSubScalar, kRDivScalar };
bool UnarySupported(UnaryOp op, ScalarType t);
cudaError_t LaunchUnary(UnaryOp op, ScalarType t, double scalar, const LoopShape& loop, const Operand& out,
                        const Operand& in, cudaStream_t stream);

// out = f(a, b, alpha); a and b already broadcast to the loop (stride 0 on broadcast dims).
enum class BinaryOp : int { kAdd, kMul, kDiv, kReluGrad };
bool BinarySupported(BinaryOp op, ScalarType t);
cudaError_t LaunchBinary(BinaryOp op, ScalarType t, double alpha, const LoopShape& loop, const Operand& out,
                         const Operand& a, const Operand& b, cudaStream_t stream);

// ---- copy.cu / creation.cu ----
// out (dtype `to`) = convert(in (dtype `from`)); any dtype pair; same conversion rules as the CPU.
cudaError_t LaunchCast(ScalarType to, ScalarType from, const LoopShape& loop, const Operand& out, const Operand& in,
                       cudaStream_t stream);
// out = value converted to `t` (as the CPU does: through float for f16/bf16, != 0 for bool).
cudaError_t LaunchFill(ScalarType t, double value, const LoopShape& loop, const Operand& out, cudaStream_t stream);

// ---- reduce.cu ----
// Input dims split into kept ones (in output order; the output is contiguous) and reduced ones.
struct ReduceShape {
  int keep_ndim = 0, red_ndim = 0;
  int64_t keep_sizes[kMaxDims] = {}, keep_strides[kMaxDims] = {};
  int64_t red_sizes[kMaxDims] = {}, red_strides[kMaxDims] = {};
  int64_t out_numel = 1, red_numel = 1;
};
// Deterministic sum: floats accumulate in double, integers and bool in int64 (output i64).
// `scratch` holds ReduceScratchBytes(...) bytes of device memory (may be null when that is 0).
bool SumSupported(ScalarType in);
size_t SumScratchBytes(const ReduceShape& r, int device);
cudaError_t LaunchSum(ScalarType in, const ReduceShape& r, const void* x, void* out, void* scratch, int device,
                      cudaStream_t stream);

// ---- softmax.cu ----
// x viewed as (outer, d, inner) around the softmax dim; contiguous f32/f64.
bool SoftmaxSupported(ScalarType t);
cudaError_t LaunchSoftmax(ScalarType t, bool log, int64_t outer, int64_t d, int64_t inner, const void* x, void* y,
                          cudaStream_t stream);
// softmax: dx = y * (dy - sum(dy * y));  log_softmax: dx = dy - exp(y) * sum(dy).
cudaError_t LaunchSoftmaxGrad(ScalarType t, bool log, int64_t outer, int64_t d, int64_t inner, const void* dy,
                              const void* y, void* dx, cudaStream_t stream);

// ---- matmul.cu ----
// Integer GEMM (cuBLAS has none): c[b][m, n] = alpha * sum_k a[m, k] b[k, n] (+ c when
// `accumulate`), strided operands; batch offsets (elements) per output batch in a_off/b_off.
struct GemmOperand {
  const void* data;
  int64_t rs, cs;  // element strides of rows and columns
};
bool IntGemmSupported(ScalarType t);
cudaError_t LaunchIntGemm(ScalarType t, int64_t m, int64_t n, int64_t k, double alpha, bool accumulate,
                          const GemmOperand& a, const GemmOperand& b, void* c, cudaStream_t stream);

}  // namespace cuda
}  // namespace oneflow_like
