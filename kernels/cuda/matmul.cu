// Device code of the matmul family that cuBLAS does not cover: integer GEMM (the CPU supports
// u8, i8, i32, i64 with wrap-around arithmetic in the element type). One thread per output.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
__global__ void IntGemmKernel(int64_t m, int64_t n, int64_t k, T alpha, bool accumulate,
                              GemmOperand a, GemmOperand b, T* c) {
  const T* A = static_cast<const T*>(a.data);
  const T* B = static_cast<const T*>(b.data);
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < m * n;
       idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t i = idx / n, j = idx % n;
    T acc = 0;
    for (int64_t p = 0; p < k; ++p) acc += A[i * a.rs + p * a.cs] * B[p * b.rs + j * b.cs];
    T v = static_cast<T>(alpha * acc);
    c[idx] = accumulate ? T(c[idx] + v) : v;
  }
}

}  // namespace

bool IntGemmSupported(ScalarType t) {
  return t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI16 ||
         t == ScalarType::kI32 || t == ScalarType::kI64;
}

cudaError_t LaunchIntGemm(ScalarType t, int64_t m, int64_t n, int64_t k, double alpha,
                          bool accumulate, const GemmOperand& a, const GemmOperand& b, void* c,
                          cudaStream_t stream) {
  if (!IntGemmSupported(t)) return cudaErrorInvalidValue;
  if (m * n == 0) return cudaSuccess;
  switch (t) {
    OFL_CU_CASE(
        kU8, uint8_t,
        IntGemmKernel<scalar_t><<<GridFor(m * n), kThreads, 0, stream>>>(
            m, n, k, static_cast<scalar_t>(alpha), accumulate, a, b, static_cast<scalar_t*>(c)))
    OFL_CU_CASE(
        kI8, int8_t,
        IntGemmKernel<scalar_t><<<GridFor(m * n), kThreads, 0, stream>>>(
            m, n, k, static_cast<scalar_t>(alpha), accumulate, a, b, static_cast<scalar_t*>(c)))
    OFL_CU_CASE(
        kI16, int16_t,
        IntGemmKernel<scalar_t><<<GridFor(m * n), kThreads, 0, stream>>>(
            m, n, k, static_cast<scalar_t>(alpha), accumulate, a, b, static_cast<scalar_t*>(c)))
    OFL_CU_CASE(
        kI32, int32_t,
        IntGemmKernel<scalar_t><<<GridFor(m * n), kThreads, 0, stream>>>(
            m, n, k, static_cast<scalar_t>(alpha), accumulate, a, b, static_cast<scalar_t*>(c)))
    OFL_CU_CASE(
        kI64, int64_t,
        IntGemmKernel<scalar_t><<<GridFor(m * n), kThreads, 0, stream>>>(
            m, n, k, static_cast<scalar_t>(alpha), accumulate, a, b, static_cast<scalar_t*>(c)))
    default: break;
  }
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
