// Row-major typed GEMM for CPU kernels that run their own products (convolution's im2col path, the
// whole-sequence RNN): c[m, n] = alpha * op(a)[m, k] op(b)[k, n] + beta * c. f32 goes through the
// shared cpu::Sgemm (BLAS by default; `impl` as cpu::Sgemm takes it), f64 through OpenBLAS's dgemm.
#pragma once
#include <cblas.h>

#include <cstdint>

#include "device/cpu/gemm.h"

namespace oneflow_like {
namespace kernels {

inline Status Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                   cpu::GemmImpl impl = cpu::GemmImpl::kBlas) {
  cpu::GemmShape g;  // it cannot fail on BLAS; oneDNN's errors name the shape
  g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
  return cpu::Sgemm(g, alpha, a, b, beta, c, impl);
}
inline Status Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                   int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc,
                   cpu::GemmImpl = cpu::GemmImpl::kBlas) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
  return Status();
}

}  // namespace kernels
}  // namespace oneflow_like
