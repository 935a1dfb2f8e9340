// Row-major f32 GEMM shared by the eager matmul kernel and the compiler's GEMM thunk, so both
// modes run the same implementation for the same shape:
//   c[i] = op(a[i]) @ op(b[i])        for i < batch, op = transpose when ta / tb,
// where the batch may have several dims, each with its own stride per operand (so a view such as
// attention's q.transpose(1, 2) needs no copy), and leading dimensions lda / ldb / ldc as in BLAS.
// Two implementations:
//  - OpenBLAS sgemm, single-threaded, spread over the intra-op pool: whole products per thread,
//    or one product cut into row or column blocks (OpenBLAS's own pool is not used: its idle
//    workers spin for ~2^28 cycles after each call and take the cores from what runs next);
//  - oneDNN's matmul primitive over the whole batch: batches of small products (attention), and
//    single products with every dim >= 64 (its AVX-512 brgemm kernels run them 5-15% faster
//    than OpenBLAS here); OpenBLAS keeps row vectors, thin and small products.
// GemmImpl::kAuto picks by shape (see ChooseGemmImpl); callers may force one (tests, autotuning).
#pragma once
#include <cstdint>
#include <string>

#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/shape.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace cpu {

enum class GemmImpl { kAuto, kBlas, kDnnl };

struct GemmShape {
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;  // leading dims (elements)
  DimVector batch;                    // batch dims, outermost first; empty: one product
  DimVector a_strides, b_strides;     // element stride of each batch dim in a / b (0: broadcast)
  int64_t c_batch_stride = 0;  // elements between consecutive products of c (row-major batch order)

  int64_t batch_size() const;
  // One batch dim of `b` products at the given strides.
  void SetBatch(int64_t b, int64_t a_stride, int64_t b_stride, int64_t c_stride);
};

// The implementation kAuto runs for this shape (a fixed rule from measurements; see gemm.cc).
GemmImpl ChooseGemmImpl(const GemmShape& s);
// The faster implementation for this shape, timed on these operands (three runs of each into
// scratch; the output is not touched), remembered per shape for the process. Products too small
// to be worth timing, and every product while deterministic algorithms are on
// (base/determinism.h), get ChooseGemmImpl's answer. For compilers: a GEMM thunk tunes once; eager
// calls use the fixed rule (no timing on a user's first call, same choice every run).
GemmImpl AutotuneGemm(const GemmShape& s, const float* a, const float* b);
const char* GemmImplName(GemmImpl impl);

// c = alpha * op(a) @ op(b) + beta * c over the batch. Errors (a oneDNN failure) name the shape.
Status Sgemm(const GemmShape& s, float alpha, const float* a, const float* b, float beta, float* c,
             GemmImpl impl = GemmImpl::kAuto);

// The same product in bf16 or f16 (operands and c of type `t`, accumulation in f32) through
// oneDNN's matmul; beta is 0 or 1. Fails (Unimplemented/Internal) where oneDNN has no kernel for
// the type on this CPU; the caller then computes in f32.
Status LowpGemm(const GemmShape& s, DType t, float alpha, const void* a, const void* b, float beta,
                void* c);
// Whether this CPU has instructions for `t` (AVX512-BF16 or AMX for bf16): elsewhere oneDNN
// emulates them, slower than widening the operands to f32 (whose products are exact) and Sgemm.
bool LowpGemmNative(DType t);

// Time spent in Sgemm since the last reset, over all threads (a benchmark aid: it tells how much
// of a training step is GEMM work, the part a compiler cannot remove).
struct GemmStats {
  int64_t calls = 0;
  double seconds = 0;
  int64_t autotuned = 0;  // shapes AutotuneGemm timed
};
GemmStats GetGemmStats();
void ResetGemmStats();

}  // namespace cpu
}  // namespace oneflow_like
