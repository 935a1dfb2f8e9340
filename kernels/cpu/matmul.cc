// CPU kernel of the linear algebra family: out = beta * bias + alpha * (a @ b), batched with
// broadcast batch dims. f32 GEMMs go to cpu::Sgemm (gemm.h: OpenBLAS, or oneDNN's batched
// matmul for batches of small products), f64 to OpenBLAS; tiny products and integers use a plain
// loop. Transposed operand views become BLAS transpose flags; other layouts are packed first.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "device/cpu/gemm.h"
#include "kernels/cpu/bf16_simd.h"
#include "kernels/cpu/loops.h"
#include "kernels/layout.h"
#include "oneflow_like/base/blas_threads.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/matmul.h"

namespace oneflow_like {
namespace kernels {
// The CPU device layer (device/cpu): GEMM and oneDNN convolution helpers.
using cpu::GemmShape;
using cpu::LowpGemm;
using cpu::LowpGemmNative;
using cpu::Sgemm;
namespace {

// Below this many multiply-adds a plain loop beats the BLAS call overhead.
constexpr int64_t kSmallGemm = 8 * 8 * 8;

struct Operand {
  const char* base;
  int64_t rows, cols, rs, cs;
  DimVector batch_strides;  // aligned to the output's batch dims, 0 where broadcast
};

Operand MakeOperand(const TensorView& v, const Shape& out_batch, size_t elem) {
  Operand o;
  o.base = static_cast<const char*>(v.data);
  int64_t nd = v.shape.ndim();
  o.rows = v.shape[nd - 2];
  o.cols = v.shape[nd - 1];
  o.rs = v.strides[nd - 2];
  o.cs = v.strides[nd - 1];
  int64_t nb = out_batch.ndim(), off = nb - (nd - 2);
  o.batch_strides.assign(nb, 0);
  for (int64_t i = 0; i < nd - 2; ++i)
    o.batch_strides[i + off] = v.shape[i] == 1 ? 0 : v.strides[i] * static_cast<int64_t>(elem);
  return o;
}

void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// c[m, n] = alpha * sum_k a[m, k] b[k, n] + (accumulate ? c : 0), any strides.
template <typename T>
void SmallGemm(const Operand& A, const T* a, const Operand& B, const T* b, T* c, int64_t m,
               int64_t n, int64_t k, double alpha, bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += a[i * A.rs + p * A.cs] * b[p * B.rs + j * B.cs];
      T v = static_cast<T>(static_cast<T>(alpha) * acc);
      c[i * n + j] = accumulate ? c[i * n + j] + v : v;
    }
  }
}

// Calls f(a, b, bi) for product bi of the batch, with each operand's base advanced by its
// (broadcast) batch strides; stops at the first error.
template <typename T, typename F>
Status ForEachProduct(const Operand& A, const Operand& B, const Shape& batch, F&& f) {
  const int64_t nb = batch.numel(), nbd = batch.ndim();
  DimVector idx(nbd, 0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t oa = 0, ob = 0;
    for (int64_t d = 0; d < nbd; ++d)
      oa += idx[d] * A.batch_strides[d], ob += idx[d] * B.batch_strides[d];
    RETURN_IF_ERROR(
        f(reinterpret_cast<const T*>(A.base + oa), reinterpret_cast<const T*>(B.base + ob), bi));
    for (int64_t d = nbd - 1; d >= 0; --d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return Status();
}

// Copies a strided rows x cols matrix into `dst` (row-major).
template <typename T>
void Pack(const T* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[i * rs + j * cs];
}

template <typename T>
Status RunMatmul(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const auto attrs = opdefs::ReadAttrs<opdefs::MatmulAttrs>(ctx.attrs());
  const double alpha = attrs.alpha, beta = attrs.beta;
  int64_t nd = out.shape.ndim(), m = out.shape[nd - 2], n = out.shape[nd - 1];
  int64_t k = ctx.input(0).shape[ctx.input(0).shape.ndim() - 1];
  Shape batch(absl::MakeConstSpan(out.shape.dims().data(), nd - 2));
  T* c = out.ptr<T>();
  bool has_bias = ctx.num_inputs() == 3 && beta != 0.0;
  if (has_bias) {  // c = beta * bias, then the GEMM accumulates
    const T bt = static_cast<T>(beta);
    BinaryLoop<T, T>(out, ctx.input(2), ctx.input(2), [bt](T x, T) { return bt * x; });
  }
  if (out.numel() == 0) return Status();
  if (k == 0) {
    if (!has_bias) std::memset(c, 0, out.numel() * sizeof(T));
    return Status();
  }
  Operand A = MakeOperand(ctx.input(0), batch, sizeof(T)),
          B = MakeOperand(ctx.input(1), batch, sizeof(T));
  bool small = m * n * k <= kSmallGemm || !std::is_floating_point_v<T>;
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  T *pa = nullptr, *pb = nullptr;  // packing buffers for layouts BLAS cannot read
  if (!small) {
    InitBlasThreads();
    if (!BlasLayout(m, k, A.rs, A.cs, &ta, &lda)) {
      ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(m * k * sizeof(T)));
      pa = static_cast<T*>(p), ta = false, lda = k;
    }
    if (!BlasLayout(k, n, B.rs, B.cs, &tb, &ldb)) {
      ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(k * n * sizeof(T)));
      pb = static_cast<T*>(p), tb = false, ldb = n;
    }
  }
  [[maybe_unused]] const int64_t nbd = batch.ndim();
  if constexpr (std::is_same_v<T, float>) {
    if (!small && pa == nullptr &&
        pb == nullptr) {  // the whole batch in one call (views need no copy)
      GemmShape g;
      g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = n,
      g.c_batch_stride = m * n;
      g.batch = batch.dims();
      for (int64_t d = 0; d < nbd; ++d) {
        g.a_strides.push_back(A.batch_strides[d] / static_cast<int64_t>(sizeof(T)));
        g.b_strides.push_back(B.batch_strides[d] / static_cast<int64_t>(sizeof(T)));
      }
      return Sgemm(g, static_cast<float>(alpha), reinterpret_cast<const T*>(A.base),
                   reinterpret_cast<const T*>(B.base), has_bias ? 1.0f : 0.0f, c);
    }
  }
  return ForEachProduct<T>(A, B, batch, [&](const T* a, const T* b, int64_t bi) -> Status {
    T* cb = c + bi * m * n;
    if (small) {
      SmallGemm<T>(A, a, B, b, cb, m, n, k, alpha, has_bias);
    } else if constexpr (std::is_floating_point_v<T>) {
      if (pa) Pack(a, m, k, A.rs, A.cs, pa), a = pa;
      if (pb) Pack(b, k, n, B.rs, B.cs, pb), b = pb;
      if constexpr (std::is_same_v<T, float>) {
        GemmShape g;
        g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = n;
        RETURN_IF_ERROR(Sgemm(g, static_cast<float>(alpha), a, b, has_bias ? 1.0f : 0.0f, cb));
      } else {
        Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, has_bias ? 1.0 : 0.0, cb, n);
      }
    }
    return Status();
  });
}

// bf16/f16: oneDNN's matmul in the operands' type with f32 accumulation, the whole batch in one
// call when the layouts allow (else per product on packed copies). Where the CPU has no bf16
// instructions (oneDNN would emulate them) or oneDNN has no kernel for the type, each product
// runs in f32 (operands widened into scratch, Sgemm, result rounded once: the same sums).
template <typename T>
Status RunMatmulLowp(KernelContext& ctx, DType t) {
  static std::atomic<bool> no_dnnl{!LowpGemmNative(t)};
  const TensorView& out = ctx.output(0);
  const auto attrs = opdefs::ReadAttrs<opdefs::MatmulAttrs>(ctx.attrs());
  const double alpha = attrs.alpha, beta = attrs.beta;
  int64_t nd = out.shape.ndim(), m = out.shape[nd - 2], n = out.shape[nd - 1];
  int64_t k = ctx.input(0).shape[ctx.input(0).shape.ndim() - 1];
  Shape batch(absl::MakeConstSpan(out.shape.dims().data(), nd - 2));
  T* c = out.ptr<T>();
  bool has_bias = ctx.num_inputs() == 3 && beta != 0.0;
  if (has_bias) {
    const TensorView& bias = ctx.input(2);
    const int64_t nb = bias.shape.ndim();
    if (beta == 1.0 && out.contiguous() && bias.contiguous() && nb == 1 &&
        bias.shape[0] == out.shape[nd - 1]) {
      // linear's bias [N] under every row: copied as it is (no rounding), rows in parallel.
      const int64_t cols = bias.shape[0], rows = out.numel() / std::max<int64_t>(cols, 1);
      const T* src = bias.ptr<const T>();
      ParallelFor(
          rows,
          [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r)
              std::memcpy(static_cast<void*>(c + r * cols), src, cols * sizeof(T));
          },
          std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)));
    } else {
      const float bt = static_cast<float>(beta);
      BinaryLoop<T, T>(out, bias, bias, [bt](T x, T) { return T(bt * float(x)); });
    }
  }
  if (out.numel() == 0) return Status();
  if (k == 0) {
    if (!has_bias) std::memset(static_cast<void*>(c), 0, out.numel() * sizeof(T));
    return Status();
  }
  Operand A = MakeOperand(ctx.input(0), batch, sizeof(T)),
          B = MakeOperand(ctx.input(1), batch, sizeof(T));
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  const bool pack_a = !BlasLayout(m, k, A.rs, A.cs, &ta, &lda),
             pack_b = !BlasLayout(k, n, B.rs, B.cs, &tb, &ldb);
  const float fa = static_cast<float>(alpha), fb = has_bias ? 1.0f : 0.0f;
  const int64_t nbd = batch.ndim();
  if (!no_dnnl.load(std::memory_order_relaxed) && !pack_a && !pack_b) {
    GemmShape g;
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = n,
    g.c_batch_stride = m * n;
    g.batch = batch.dims();
    for (int64_t d = 0; d < nbd; ++d) {
      g.a_strides.push_back(A.batch_strides[d] / static_cast<int64_t>(sizeof(T)));
      g.b_strides.push_back(B.batch_strides[d] / static_cast<int64_t>(sizeof(T)));
    }
    if (LowpGemm(g, t, fa, A.base, B.base, fb, c).ok()) return Status();
    no_dnnl.store(true, std::memory_order_relaxed);
  }
  // Per product: f32 copies for Sgemm (BLAS layouts widened as they lie, in parallel), or
  // packed low-precision copies for oneDNN.
  const bool f32 = no_dnnl.load(std::memory_order_relaxed);
  const int64_t span_a = pack_a ? m * k : (ta ? (k - 1) * lda + m : (m - 1) * lda + k),
                span_b = pack_b ? k * n : (tb ? (n - 1) * ldb + k : (k - 1) * ldb + n);
  const size_t es = f32 ? sizeof(float) : sizeof(T);
  ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp((span_a + span_b + (f32 ? m * n : 0)) * es));
  return ForEachProduct<T>(A, B, batch, [&](const T* a, const T* b, int64_t bi) -> Status {
    T* cb = c + bi * m * n;
    GemmShape g;
    g.m = m, g.n = n, g.k = k, g.ldc = n;
    g.ta = pack_a ? false : ta, g.lda = pack_a ? k : lda;
    g.tb = pack_b ? false : tb, g.ldb = pack_b ? n : ldb;
    if (f32) {
      float *wa = static_cast<float*>(buf), *wb = wa + span_a, *wc = wb + span_b;
      auto widen = [](const T* src, float* dst, int64_t count) {
        ParallelFor(count, [&](int64_t s, int64_t e) {
          if constexpr (std::is_same_v<T, bfloat16>)
            Bf16ToFloat(src + s, dst + s, e - s);
          else
            for (int64_t i = s; i < e; ++i) dst[i] = float(src[i]);
        });
      };
      if (pack_a)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) wa[i * k + p] = float(a[i * A.rs + p * A.cs]);
      else
        widen(a, wa, span_a);
      if (pack_b)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) wb[p * n + j] = float(b[p * B.rs + j * B.cs]);
      else
        widen(b, wb, span_b);
      if (has_bias) widen(cb, wc, m * n);
      RETURN_IF_ERROR(Sgemm(g, fa, wa, wb, fb, wc));
      ParallelFor(m * n, [&](int64_t s, int64_t e) {
        if constexpr (std::is_same_v<T, bfloat16>)
          FloatToBf16(wc + s, cb + s, e - s);
        else
          for (int64_t i = s; i < e; ++i) cb[i] = T(wc[i]);
      });
    } else {
      T *pa = static_cast<T*>(buf), *pb = pa + span_a;
      if (pack_a) Pack(a, m, k, A.rs, A.cs, pa), a = pa;
      if (pack_b) Pack(b, k, n, B.rs, B.cs, pb), b = pb;
      RETURN_IF_ERROR(LowpGemm(g, t, fa, a, b, fb, cb));
    }
    return Status();
  });
}

Status MatmulKernel(KernelContext& ctx) {
  DType t = ctx.output(0).dtype;
  switch (t) {
    case DType::kBF16: return RunMatmulLowp<bfloat16>(ctx, t);
    case DType::kF16: return RunMatmulLowp<float16>(ctx, t);
    case DType::kF32: return RunMatmul<float>(ctx);
    case DType::kF64: return RunMatmul<double>(ctx);
    case DType::kI32: return RunMatmul<int32_t>(ctx);
    case DType::kI64: return RunMatmul<int64_t>(ctx);
    case DType::kI8: return RunMatmul<int8_t>(ctx);
    case DType::kI16: return RunMatmul<int16_t>(ctx);
    case DType::kU8: return RunMatmul<uint8_t>(ctx);
    default: return TypeError("[matmul] not supported for %s on cpu", DTypeName(t));
  }
}

}  // namespace

OFL_REGISTER_KERNEL(matmul, kCPU, MatmulKernel);

}  // namespace kernels
}  // namespace oneflow_like
