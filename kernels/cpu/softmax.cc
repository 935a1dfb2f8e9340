// CPU kernels of the softmax family. The input is viewed as (outer, D, inner) around `dim`.
// Rows (inner == 1) take one trip through memory: max, then exp + sum into the output, then a
// scale of the (cache-resident) output row. f32 rows use an AVX2 polynomial exp. bfloat16: blocks
// of whole slices widened to f32 (bf16_loops.h), the f32 code, the result rounded back: one pass
// over the bf16 tensors, f32 math (the row sums too), as torch's CPU softmax on bf16.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/bf16_loops.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vec_exp.h"
#include "kernels/layout.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/softmax.h"

namespace oneflow_like {
namespace kernels {
namespace {

// Row max and sum(exp(x - max)) written into y (y[j] = exp(x[j] - max)); returns {max, sum}.
template <typename T>
std::pair<T, T> ExpRow(const T* x, T* y, int64_t n) {
  int64_t j = 0;
  T m = -std::numeric_limits<T>::infinity(), s = 0;
#ifdef __AVX2__
  if constexpr (std::is_same_v<T, float>) {
    if (n >= 8) {
      __m256 vm = _mm256_set1_ps(m);
      for (; j + 8 <= n; j += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + j));
      m = HMax(vm);
      for (int64_t k = j; k < n; ++k) m = std::max(m, x[k]);
      __m256 bm = _mm256_set1_ps(m), vs = _mm256_setzero_ps();
      for (j = 0; j + 8 <= n; j += 8) {
        __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), bm));
        _mm256_storeu_ps(y + j, e);
        vs = _mm256_add_ps(vs, e);
      }
      s = HSum(vs);
      for (; j < n; ++j) {
        y[j] = std::exp(x[j] - m);
        s += y[j];
      }
      return {m, s};
    }
  }
#endif
  for (int64_t k = 0; k < n; ++k) m = std::max(m, x[k]);
  for (int64_t k = 0; k < n; ++k) {
    y[k] = std::exp(x[k] - m);
    s += y[k];
  }
  return {m, s};
}

template <typename T, bool kLog>
void SoftmaxRows(const T* x, T* y, int64_t rows, int64_t n) {
  ParallelFor(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* xr = x + r * n;
          T* yr = y + r * n;
          auto ms = ExpRow(xr, yr, n);
          if (kLog) {
            T sub = ms.first + std::log(ms.second);
            for (int64_t j = 0; j < n; ++j) yr[j] = xr[j] - sub;
          } else {
            T inv = T(1) / ms.second;
            for (int64_t j = 0; j < n; ++j) yr[j] *= inv;
          }
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)));
}

// dim is not innermost: vectorise over `inner` with per-outer column buffers.
template <typename T, bool kLog>
void SoftmaxStrided(const T* x, T* y, const DimLayout& l) {
  ParallelFor(
      l.outer,
      [&](int64_t b, int64_t e) {
        std::vector<T> m(l.inner), s(l.inner);
        for (int64_t o = b; o < e; ++o) {
          const T* xo = x + o * l.d * l.inner;
          T* yo = y + o * l.d * l.inner;
          std::fill(m.begin(), m.end(), -std::numeric_limits<T>::infinity());
          std::fill(s.begin(), s.end(), T(0));
          for (int64_t k = 0; k < l.d; ++k)
            for (int64_t i = 0; i < l.inner; ++i) m[i] = std::max(m[i], xo[k * l.inner + i]);
          for (int64_t k = 0; k < l.d; ++k)
            for (int64_t i = 0; i < l.inner; ++i) s[i] += std::exp(xo[k * l.inner + i] - m[i]);
          for (int64_t i = 0; i < l.inner; ++i) s[i] = kLog ? m[i] + std::log(s[i]) : T(1) / s[i];
          for (int64_t k = 0; k < l.d; ++k)
            for (int64_t i = 0; i < l.inner; ++i) {
              int64_t p = k * l.inner + i;
              yo[p] = kLog ? xo[p] - s[i] : std::exp(xo[p] - m[i]) * s[i];
            }
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.d * l.inner, 1)));
}

// Runs fn(block_layout, inputs_f32, output_f32) over blocks of whole (d, inner) slices of the
// bf16 operands `in` (each widened to f32 first), and rounds the f32 output into `out`.
template <size_t N, typename Fn>
void Bf16Slices(const DimLayout& l, const std::array<const bfloat16*, N>& in, bfloat16* out,
                Fn fn) {
  const int64_t slice = l.d * l.inner;
  const int64_t per = std::max<int64_t>(1, 4096 / std::max<int64_t>(slice, 1));  // slices a block
  ParallelFor(
      l.outer,
      [&](int64_t b, int64_t e) {
        std::vector<float> buf((N + 1) * std::min(per, e - b) * slice);
        for (int64_t o = b; o < e; o += per) {
          const int64_t k = std::min(per, e - o), n = k * slice;
          std::array<const float*, N> f;
          for (size_t i = 0; i < N; ++i) {
            WidenBf16(in[i] + o * slice, buf.data() + i * n, n);
            f[i] = buf.data() + i * n;
          }
          float* y = buf.data() + N * n;
          fn(DimLayout{k, l.d, l.inner}, f, y);
          NarrowToBf16(y, out + o * slice, n);
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(slice, 1)));
}

template <bool kLog>
Status SoftmaxKernel(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.output(0);
  DimLayout l = LayoutOf(x.shape, opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(ctx.attrs()).dim);
  if (x.dtype == DType::kBF16) {
    Bf16Slices<1>(l, {x.ptr<const bfloat16>()}, y.ptr<bfloat16>(),
                  [](const DimLayout& b, const std::array<const float*, 1>& in, float* out) {
                    if (b.inner == 1)
                      SoftmaxRows<float, kLog>(in[0], out, b.outer, b.d);
                    else
                      SoftmaxStrided<float, kLog>(in[0], out, b);
                  });
    return Status();
  }
  bool done = false;
  OFL_SWITCH_FLOAT(x.dtype, {
    if (l.inner == 1)
      SoftmaxRows<scalar_t, kLog>(x.ptr<const scalar_t>(), y.ptr<scalar_t>(), l.outer, l.d);
    else
      SoftmaxStrided<scalar_t, kLog>(x.ptr<const scalar_t>(), y.ptr<scalar_t>(), l);
    done = true;
  });
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(x.dtype));
  return Status();
}

// softmax: dx = y * (dy - sum(dy * y));  log_softmax: dx = dy - exp(y) * sum(dy).
// Rows (inner == 1), kRows at a time: each row's sum runs in the same order as a one-row loop
// (so the bits do not change), but the kRows independent chains hide the add latency that a
// single running sum waits on; the elementwise pass then vectorises over the row.
template <typename T, bool kLog>
void SoftmaxGradRows(const T* g, const T* y, T* o, int64_t rows, int64_t d) {
  constexpr int64_t kRows = 8;
  ParallelFor(
      rows,
      [&](int64_t b, int64_t e) {
        for (int64_t r0 = b; r0 < e; r0 += kRows) {
          const int64_t nr = std::min(kRows, e - r0);
          T s[kRows] = {};
          for (int64_t k = 0; k < d; ++k)
            for (int64_t q = 0; q < nr; ++q) {
              int64_t p = (r0 + q) * d + k;
              s[q] += kLog ? g[p] : g[p] * y[p];
            }
          for (int64_t q = 0; q < nr; ++q) {
            const T* __restrict gr = g + (r0 + q) * d;
            const T* __restrict yr = y + (r0 + q) * d;
            T* __restrict orow = o + (r0 + q) * d;
            const T sq = s[q];
            if (kLog)
              for (int64_t k = 0; k < d; ++k) orow[k] = gr[k] - std::exp(yr[k]) * sq;
            else
              for (int64_t k = 0; k < d; ++k) orow[k] = yr[k] * (gr[k] - sq);
          }
        }
      },
      std::max<int64_t>(kRows, kParallelGrain / std::max<int64_t>(d, 1)));
}

// dim not innermost: per-outer column sums over `inner`.
template <typename T, bool kLog>
void SoftmaxGradStrided(const T* g, const T* yy, T* o, const DimLayout& l) {
  ParallelFor(
      l.outer,
      [&](int64_t b, int64_t e) {
        std::vector<T> s(l.inner);
        for (int64_t r = b; r < e; ++r) {
          int64_t base = r * l.d * l.inner;
          std::fill(s.begin(), s.end(), T(0));
          for (int64_t k = 0; k < l.d; ++k)
            for (int64_t i = 0; i < l.inner; ++i) {
              int64_t p = base + k * l.inner + i;
              s[i] += kLog ? g[p] : g[p] * yy[p];
            }
          for (int64_t k = 0; k < l.d; ++k)
            for (int64_t i = 0; i < l.inner; ++i) {
              int64_t p = base + k * l.inner + i;
              o[p] = kLog ? g[p] - std::exp(yy[p]) * s[i] : yy[p] * (g[p] - s[i]);
            }
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.d * l.inner, 1)));
}

template <bool kLog>
Status SoftmaxGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &y = ctx.input(1), &dx = ctx.output(0);
  DimLayout l = LayoutOf(y.shape, opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(ctx.attrs()).dim);
  if (y.dtype == DType::kBF16) {
    Bf16Slices<2>(l, {dy.ptr<const bfloat16>(), y.ptr<const bfloat16>()}, dx.ptr<bfloat16>(),
                  [](const DimLayout& b, const std::array<const float*, 2>& in, float* out) {
                    if (b.inner == 1)
                      SoftmaxGradRows<float, kLog>(in[0], in[1], out, b.outer, b.d);
                    else
                      SoftmaxGradStrided<float, kLog>(in[0], in[1], out, b);
                  });
    return Status();
  }
  bool done = false;
  OFL_SWITCH_FLOAT(y.dtype, {
    using T = scalar_t;
    const T *g = dy.ptr<const T>(), *yy = y.ptr<const T>();
    T* o = dx.ptr<T>();
    if (l.inner == 1)
      SoftmaxGradRows<T, kLog>(g, yy, o, l.outer, l.d);
    else
      SoftmaxGradStrided<T, kLog>(g, yy, o, l);
    done = true;
  });
  if (!done) return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeName(y.dtype));
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(softmax, kCPU, SoftmaxKernel<false>);
OFL_REGISTER_KERNEL(log_softmax, kCPU, SoftmaxKernel<true>);
OFL_REGISTER_KERNEL(softmax_grad, kCPU, SoftmaxGradKernel<false>);
OFL_REGISTER_KERNEL(log_softmax_grad, kCPU, SoftmaxGradKernel<true>);

}  // namespace kernels
}  // namespace oneflow_like
