// CPU kernels of the normalization family. Statistics accumulate in double; rows (layer_norm,
// group_norm, rms_norm) are parallel over rows, batch_norm over channels.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/bf16_simd.h"
#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/norm.h"

namespace oneflow_like {
namespace kernels {
namespace {

#define OFL_NORM_FLOAT(op, dtype, ...)                                                   \
  bool done = false;                                                                     \
  OFL_SWITCH_FLOAT(dtype, {                                                              \
    __VA_ARGS__;                                                                         \
    done = true;                                                                         \
  });                                                                                    \
  if (!done) return TypeError("[%s] not supported for %s on cpu", op, DTypeName(dtype)); \
  return Status();

using opdefs::BatchNormAttrs;
using opdefs::RmsNormAttrs;
using opdefs::RowNormAttrs;

struct RowGeom {
  int64_t rows, len, groups, cpg, inner;
  int64_t aff(int64_t r, int64_t j) const { return (r % groups) * cpg + j / inner; }
};
RowGeom RowGeomOf(const RowNormAttrs& a, int64_t numel) {
  int64_t len = a.channels_per_group * a.inner;
  return RowGeom{len > 0 ? numel / len : 0, len, a.groups, a.channels_per_group, a.inner};
}

// Sum over j in [0, n) of f(j) (a float or double term) in double, with 16 partial sums so the
// loop vectorises into four independent chains of 4-lane adds (a single running sum is bound by
// the add latency). The partials are combined in a fixed order: deterministic.
template <typename F>
inline double SumD(int64_t n, F f) {
  double acc[16] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int k = 0; k < 16; ++k) acc[k] += static_cast<double>(f(j + k));
  for (int k = 0; j < n; ++j, k = (k + 1) & 15) acc[k] += static_cast<double>(f(j));
  double s = 0;
  for (int k = 0; k < 16; ++k) s += acc[k];
  return s;
}

// Mean and variance of a row (two passes over the cache-resident row).
template <typename T>
inline void RowStats(const T* __restrict x, int64_t n, double* mean, double* var) {
  double m = SumD(n, [&](int64_t j) { return x[j]; }) / n;
  const T mt = static_cast<T>(m);
  *mean = m;
  *var = SumD(n,
              [&](int64_t j) {
                T d = x[j] - mt;
                return d * d;
              }) /
         n;
}

Status LayerNormBf16(KernelContext& ctx, const RowGeom& q, double eps);
Status LayerNormGradBf16(KernelContext& ctx, const RowGeom& q);

Status RowNormKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  auto a = opdefs::ReadAttrs<RowNormAttrs>(ctx.attrs());
  RowGeom q = RowGeomOf(a, x.numel());
  bool hw = a.has_weight, hb = a.has_bias;
  double eps = a.eps;
  if (x.dtype == DType::kBF16) return LayerNormBf16(ctx, q, eps);
  OFL_NORM_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    const T* xs = x.ptr<const T>();
    const T* w = hw ? ctx.input(1).ptr<const T>() : nullptr;
    const T* b = hb ? ctx.input(hw ? 2 : 1).ptr<const T>() : nullptr;
    T *y = ctx.output(0).ptr<T>(), *mean = ctx.output(1).ptr<T>(), *rstd = ctx.output(2).ptr<T>();
    ParallelFor(
        q.rows,
        [&](int64_t rb, int64_t re) {
          for (int64_t r = rb; r < re; ++r) {
            const T* xr = xs + r * q.len;
            T* yr = y + r * q.len;
            double m, v;
            RowStats(xr, q.len, &m, &v);
            T mt = static_cast<T>(m), rs = static_cast<T>(1.0 / std::sqrt(v + eps));
            mean[r] = mt;
            rstd[r] = rs;
            if (q.inner == 1 && q.groups == 1) {  // layer_norm: affine index = j
              if (w && b)
                for (int64_t j = 0; j < q.len; ++j) yr[j] = (xr[j] - mt) * rs * w[j] + b[j];
              else if (w)
                for (int64_t j = 0; j < q.len; ++j) yr[j] = (xr[j] - mt) * rs * w[j];
              else if (b)
                for (int64_t j = 0; j < q.len; ++j) yr[j] = (xr[j] - mt) * rs + b[j];
              else
                for (int64_t j = 0; j < q.len; ++j) yr[j] = (xr[j] - mt) * rs;
            } else {
              for (int64_t c = 0; c < q.cpg; ++c) {
                int64_t ai = (r % q.groups) * q.cpg + c;
                T sc = w ? rs * w[ai] : rs, sh = (b ? b[ai] : T(0)) - mt * sc;
                for (int64_t i = 0; i < q.inner; ++i)
                  yr[c * q.inner + i] = xr[c * q.inner + i] * sc + sh;
              }
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(q.len, 1)));
  });
}

// One layer_norm row of the gradient below, as loops over j that vectorise: the two row sums in
// SumD, the dw/db partials (pdw/pdb: double per column, this block's rows in order), then dx.
template <typename T>
inline void LayerNormGradRow(const T* __restrict xr, const T* __restrict gr, const T* __restrict w,
                             T m, T rs, int64_t len, T* __restrict dr, double* __restrict pdw,
                             double* __restrict pdb) {
  double sg, sgx;
  if (w) {
    sg = SumD(len, [&](int64_t j) { return gr[j] * w[j]; });
    sgx = SumD(len, [&](int64_t j) { return (gr[j] * w[j]) * ((xr[j] - m) * rs); });
  } else {
    sg = SumD(len, [&](int64_t j) { return gr[j]; });
    sgx = SumD(len, [&](int64_t j) { return gr[j] * ((xr[j] - m) * rs); });
  }
  if (pdw) {
    for (int64_t j = 0; j < len; ++j) {
      T xh = (xr[j] - m) * rs;
      pdw[j] += gr[j] * xh;
      pdb[j] += gr[j];
    }
  }
  const T mg = static_cast<T>(sg / len), mgx = static_cast<T>(sgx / len);
  if (w)
    for (int64_t j = 0; j < len; ++j) dr[j] = rs * (gr[j] * w[j] - mg - (xr[j] - m) * rs * mgx);
  else
    for (int64_t j = 0; j < len; ++j) dr[j] = rs * (gr[j] - mg - (xr[j] - m) * rs * mgx);
}

// ---- native bfloat16 layer_norm (framework/autocast.cc kCpuBf16Ops)
// ------------------------------ x, y, dy, dx in bf16; weight/bias (and their grads) in f32, as
// torch keeps them under autocast, or in bf16; the statistics in f32. Each row is widened to float
// once and run through the f32 row code above, so y (and dx) equal the f32 path's values rounded
// once to bf16, without its casts.

// The affine parameter `i` (f32 or bf16) as floats.
std::vector<float> AffineAsFloat(const TensorView& p) {
  std::vector<float> f(p.numel());
  if (p.dtype == DType::kBF16)
    WidenBf16(p.ptr<const bfloat16>(), f.data(), p.numel());
  else
    std::copy(p.ptr<const float>(), p.ptr<const float>() + p.numel(), f.begin());
  return f;
}
Status CheckBf16LayerNorm(KernelContext& ctx, const RowGeom& q, int first_param, int nparams) {
  if (q.inner != 1 || q.groups != 1)
    return TypeError("[%s] bfloat16 inputs are supported for layer_norm only on cpu", ctx.op());
  for (int i = first_param; i < first_param + nparams; ++i) {
    DType t = ctx.input(i).dtype;
    if (t != DType::kF32 && t != DType::kBF16)
      return TypeError("[%s] bfloat16 input with a %s weight/bias: expected float32 or bfloat16",
                       ctx.op(), DTypeName(t));
  }
  return Status();
}

Status LayerNormBf16(KernelContext& ctx, const RowGeom& q, double eps) {
  auto a = opdefs::ReadAttrs<RowNormAttrs>(ctx.attrs());
  const bool hw = a.has_weight, hb = a.has_bias;
  RETURN_IF_ERROR(CheckBf16LayerNorm(ctx, q, 1, int(hw) + int(hb)));
  const std::vector<float> wf = hw ? AffineAsFloat(ctx.input(1)) : std::vector<float>();
  const std::vector<float> bf = hb ? AffineAsFloat(ctx.input(hw ? 2 : 1)) : std::vector<float>();
  const float *w = hw ? wf.data() : nullptr, *b = hb ? bf.data() : nullptr;
  const bfloat16* xs = ctx.input(0).ptr<const bfloat16>();
  bfloat16* y = ctx.output(0).ptr<bfloat16>();
  float *mean = ctx.output(1).ptr<float>(), *rstd = ctx.output(2).ptr<float>();
  const int64_t len = q.len;
  ParallelFor(
      q.rows,
      [&](int64_t rb, int64_t re) {
        std::vector<float> xr(len), yr(len);
        for (int64_t r = rb; r < re; ++r) {
          WidenBf16(xs + r * len, xr.data(), len);
          double m, v;
          RowStats(xr.data(), len, &m, &v);
          const float mt = static_cast<float>(m), rs = static_cast<float>(1.0 / std::sqrt(v + eps));
          mean[r] = mt;
          rstd[r] = rs;
          const float* x = xr.data();
          float* o = yr.data();
          if (w && b)
            for (int64_t j = 0; j < len; ++j) o[j] = (x[j] - mt) * rs * w[j] + b[j];
          else if (w)
            for (int64_t j = 0; j < len; ++j) o[j] = (x[j] - mt) * rs * w[j];
          else if (b)
            for (int64_t j = 0; j < len; ++j) o[j] = (x[j] - mt) * rs + b[j];
          else
            for (int64_t j = 0; j < len; ++j) o[j] = (x[j] - mt) * rs;
          NarrowToBf16(o, y + r * len, len);
        }
      },
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)));
  return Status();
}

// (dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]); dw/db in their outputs' dtype (f32 or bf16).
Status LayerNormGradBf16(KernelContext& ctx, const RowGeom& q) {
  auto a = opdefs::ReadAttrs<RowNormAttrs>(ctx.attrs());
  const bool hw = a.has_weight, hb = a.has_bias;
  RETURN_IF_ERROR(CheckBf16LayerNorm(ctx, q, 4, int(hw)));
  for (int i = 2; i <= 3; ++i)
    if (ctx.input(i).dtype != DType::kF32)
      return TypeError("[%s] bfloat16 input: expected float32 statistics, got %s", ctx.op(),
                       DTypeName(ctx.input(i).dtype));
  const std::vector<float> wf = hw ? AffineAsFloat(ctx.input(4)) : std::vector<float>();
  const float* w = hw ? wf.data() : nullptr;
  const bfloat16 *dy = ctx.input(0).ptr<const bfloat16>(), *xs = ctx.input(1).ptr<const bfloat16>();
  const float *mean = ctx.input(2).ptr<const float>(), *rstd = ctx.input(3).ptr<const float>();
  bfloat16* dx = ctx.output(0).ptr<bfloat16>();
  const int64_t len = q.len;
  int64_t nblocks = std::min<int64_t>(q.rows, 4 * IntraOpPool()->num_threads());
  if (q.rows * len < kParallelGrain) nblocks = std::min<int64_t>(nblocks, 1);
  std::vector<double> pw((hw || hb) ? nblocks * len * 2 : 0, 0.0);
  ParallelFor(
      nblocks,
      [&](int64_t bb, int64_t be) {
        std::vector<float> xr(len), gr(len), dr(len);
        for (int64_t blk = bb; blk < be; ++blk) {
          double* pdw = pw.empty() ? nullptr : pw.data() + blk * len * 2;
          double* pdb = pdw ? pdw + len : nullptr;
          int64_t r0 = q.rows * blk / nblocks, r1 = q.rows * (blk + 1) / nblocks;
          for (int64_t r = r0; r < r1; ++r) {
            WidenBf16(xs + r * len, xr.data(), len);
            WidenBf16(dy + r * len, gr.data(), len);
            LayerNormGradRow(xr.data(), gr.data(), w, mean[r], rstd[r], len, dr.data(), pdw, pdb);
            NarrowToBf16(dr.data(), dx + r * len, len);
          }
        }
      },
      1);
  int k = 1;
  for (bool has : {hw, hb}) {
    if (!has) continue;
    const TensorView& o = ctx.output(k);
    const int64_t off = k == 1 && hw ? 0 : len;
    for (int64_t i = 0; i < len; ++i) {
      double sum = 0;
      for (int64_t blk = 0; blk < nblocks; ++blk) sum += pw[blk * len * 2 + off + i];
      if (o.dtype == DType::kBF16)
        o.ptr<bfloat16>()[i] = bfloat16(static_cast<float>(sum));
      else
        o.ptr<float>()[i] = static_cast<float>(sum);
    }
    ++k;
  }
  return Status();
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w; dw = sum(dy * xhat); db = sum(dy).
Status RowNormGradKernel(KernelContext& ctx) {
  const TensorView &dyv = ctx.input(0), &x = ctx.input(1);
  auto a = opdefs::ReadAttrs<RowNormAttrs>(ctx.attrs());
  RowGeom q = RowGeomOf(a, x.numel());
  bool hw = a.has_weight, hb = a.has_bias;
  int64_t naff = q.groups * q.cpg;
  if (x.dtype == DType::kBF16) return LayerNormGradBf16(ctx, q);
  OFL_NORM_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    const T *dy = dyv.ptr<const T>(), *xs = x.ptr<const T>(), *mean = ctx.input(2).ptr<const T>(),
            *rstd = ctx.input(3).ptr<const T>(), *w = hw ? ctx.input(4).ptr<const T>() : nullptr;
    T* dx = ctx.output(0).ptr<T>();
    T* dw = hw ? ctx.output(1).ptr<T>() : nullptr;
    T* db = hb ? ctx.output(hw ? 2 : 1).ptr<T>() : nullptr;
    // Rows are split into blocks; each block accumulates its own dw/db partials.
    int64_t nblocks = std::min<int64_t>(q.rows, 4 * IntraOpPool()->num_threads());
    if (q.rows * q.len < kParallelGrain) nblocks = std::min<int64_t>(nblocks, 1);
    // At least one block's partials: with no rows dw/db are written as zeros (they were left
    // uninitialised).
    std::vector<double> pw((hw || hb) ? std::max<int64_t>(nblocks, 1) * naff * 2 : 0, 0.0);
    ParallelFor(
        nblocks,
        [&](int64_t bb, int64_t be) {
          for (int64_t blk = bb; blk < be; ++blk) {
            double* pdw = pw.empty() ? nullptr : pw.data() + blk * naff * 2;
            double* pdb = pdw ? pdw + naff : nullptr;
            int64_t r0 = q.rows * blk / nblocks, r1 = q.rows * (blk + 1) / nblocks;
            if (q.inner == 1 && q.groups == 1) {  // layer_norm: affine index = j
              for (int64_t r = r0; r < r1; ++r)
                LayerNormGradRow(xs + r * q.len, dy + r * q.len, w, mean[r], rstd[r], q.len,
                                 dx + r * q.len, pdw, pdb);
              continue;
            }
            for (int64_t r = r0; r < r1; ++r) {
              const T *xr = xs + r * q.len, *gr = dy + r * q.len;
              T* dr = dx + r * q.len;
              T m = mean[r], rs = rstd[r];
              double sg = 0, sgx = 0;
              for (int64_t j = 0; j < q.len; ++j) {
                T g = w ? gr[j] * w[q.aff(r, j)] : gr[j];
                T xh = (xr[j] - m) * rs;
                sg += g;
                sgx += g * xh;
                if (pdw) {
                  int64_t ai = q.aff(r, j);
                  pdw[ai] += gr[j] * xh;
                  pdb[ai] += gr[j];
                }
              }
              T mg = static_cast<T>(sg / q.len), mgx = static_cast<T>(sgx / q.len);
              for (int64_t j = 0; j < q.len; ++j) {
                T g = w ? gr[j] * w[q.aff(r, j)] : gr[j];
                dr[j] = rs * (g - mg - (xr[j] - m) * rs * mgx);
              }
            }
          }
        },
        1);
    for (int64_t i = 0; i < naff && !pw.empty(); ++i) {
      double sw = 0, sb = 0;
      for (int64_t blk = 0; blk < nblocks; ++blk) {
        sw += pw[blk * naff * 2 + i];
        sb += pw[blk * naff * 2 + naff + i];
      }
      if (dw) dw[i] = static_cast<T>(sw);
      if (db) db[i] = static_cast<T>(sb);
    }
  });
}

// batch_norm: x viewed as (N, C, S); statistics per channel over N * S.
struct BnGeom {
  int64_t n, c, s;
};
BnGeom BnGeomOf(const Shape& x) {
  BnGeom g{x[0], x[1], 1};
  for (int64_t i = 2; i < x.ndim(); ++i) g.s *= x[i];
  return g;
}

Status BatchNormKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  BnGeom q = BnGeomOf(x.shape);
  auto a = opdefs::ReadAttrs<BatchNormAttrs>(ctx.attrs());
  const bool training = a.training;
  const double eps = a.eps;
  OFL_NORM_FLOAT("batch_norm", x.dtype, {
    using T = scalar_t;
    const T *xs = x.ptr<const T>(), *w = ctx.input(1).ptr<const T>(),
            *b = ctx.input(2).ptr<const T>(), *rm = ctx.input(3).ptr<const T>(),
            *rv = ctx.input(4).ptr<const T>();
    T *y = ctx.output(0).ptr<T>(), *mean = ctx.output(1).ptr<T>(), *invstd = ctx.output(2).ptr<T>(),
      *uvar = ctx.output(3).ptr<T>();
    int64_t cnt = q.n * q.s;
    ParallelFor(
        q.c,
        [&](int64_t cb, int64_t ce) {
          for (int64_t c = cb; c < ce; ++c) {
            double m, v;
            if (training) {
              double s = 0;
              for (int64_t n = 0; n < q.n; ++n) {
                const T* p = xs + (n * q.c + c) * q.s;
                for (int64_t i = 0; i < q.s; ++i) s += p[i];
              }
              m = s / cnt;
              double ss = 0;
              for (int64_t n = 0; n < q.n; ++n) {
                const T* p = xs + (n * q.c + c) * q.s;
                for (int64_t i = 0; i < q.s; ++i) {
                  double d = p[i] - m;
                  ss += d * d;
                }
              }
              v = ss / cnt;
              uvar[c] = static_cast<T>(cnt > 1 ? ss / (cnt - 1) : ss);
            } else {
              m = rm[c];
              v = rv[c];
              uvar[c] = rv[c];
            }
            double is = 1.0 / std::sqrt(v + eps);
            mean[c] = static_cast<T>(m);
            invstd[c] = static_cast<T>(is);
            T sc = static_cast<T>(w[c] * is), sh = static_cast<T>(b[c] - m * w[c] * is);
            for (int64_t n = 0; n < q.n; ++n) {
              const T* p = xs + (n * q.c + c) * q.s;
              T* o = y + (n * q.c + c) * q.s;
              for (int64_t i = 0; i < q.s; ++i) o[i] = p[i] * sc + sh;
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(q.n * q.s, 1)));
  });
}

Status BatchNormGradKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(1);
  BnGeom q = BnGeomOf(x.shape);
  const bool training = opdefs::ReadAttrs<BatchNormAttrs>(ctx.attrs()).training;
  OFL_NORM_FLOAT("batch_norm_grad", x.dtype, {
    using T = scalar_t;
    const T *dy = ctx.input(0).ptr<const T>(), *xs = x.ptr<const T>(),
            *w = ctx.input(2).ptr<const T>(), *mean = ctx.input(3).ptr<const T>(),
            *invstd = ctx.input(4).ptr<const T>();
    T *dx = ctx.output(0).ptr<T>(), *dw = ctx.output(1).ptr<T>(), *db = ctx.output(2).ptr<T>();
    int64_t cnt = q.n * q.s;
    ParallelFor(
        q.c,
        [&](int64_t cb, int64_t ce) {
          for (int64_t c = cb; c < ce; ++c) {
            T m = mean[c], is = invstd[c];
            double sg = 0, sgx = 0;
            for (int64_t n = 0; n < q.n; ++n) {
              const T *g = dy + (n * q.c + c) * q.s, *p = xs + (n * q.c + c) * q.s;
              for (int64_t i = 0; i < q.s; ++i) {
                sg += g[i];
                sgx += g[i] * (p[i] - m) * is;
              }
            }
            dw[c] = static_cast<T>(sgx);
            db[c] = static_cast<T>(sg);
            T k = w[c] * is, mg = training ? static_cast<T>(sg / cnt) : T(0),
              mgx = training ? static_cast<T>(sgx / cnt) : T(0);
            for (int64_t n = 0; n < q.n; ++n) {
              const T *g = dy + (n * q.c + c) * q.s, *p = xs + (n * q.c + c) * q.s;
              T* o = dx + (n * q.c + c) * q.s;
              for (int64_t i = 0; i < q.s; ++i) o[i] = k * (g[i] - mg - (p[i] - m) * is * mgx);
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(q.n * q.s, 1)));
  });
}

// rms_norm(x [, w]) -> (y, rstd): rstd = 1 / sqrt(mean(x^2) + eps) per row of `len`.
Status RmsNormKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const auto a = opdefs::ReadAttrs<RmsNormAttrs>(ctx.attrs());
  const int64_t len = a.len, rows = len > 0 ? x.numel() / len : 0;
  const double eps = a.eps;
  OFL_NORM_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    const T* xs = x.ptr<const T>();
    const T* w = ctx.num_inputs() > 1 ? ctx.input(1).ptr<const T>() : nullptr;
    T *y = ctx.output(0).ptr<T>(), *rstd = ctx.output(1).ptr<T>();
    ParallelFor(
        rows,
        [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const T* __restrict xr = xs + r * len;
            T* __restrict yr = y + r * len;
            double ms = SumD(len, [&](int64_t j) { return xr[j] * xr[j]; }) / len;
            const T rs = static_cast<T>(1.0 / std::sqrt(ms + eps));
            rstd[r] = rs;
            if (w)
              for (int64_t j = 0; j < len; ++j) yr[j] = xr[j] * rs * w[j];
            else
              for (int64_t j = 0; j < len; ++j) yr[j] = xr[j] * rs;
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)));
  });
}

// rms_norm_grad(dy, x, rstd [, w]) -> (dx [, dw]): with g = dy * w and xhat = x * rstd,
// dx = rstd * (g - xhat * mean(g * xhat)); dw = sum over rows of dy * xhat (column-parallel, each
// column summed over the rows in order: deterministic).
Status RmsNormGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &x = ctx.input(1);
  const int64_t len = opdefs::ReadAttrs<RmsNormAttrs>(ctx.attrs()).len;
  const int64_t rows = len > 0 ? x.numel() / len : 0;
  OFL_NORM_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    const T *g = dy.ptr<const T>(), *xs = x.ptr<const T>(), *rstd = ctx.input(2).ptr<const T>();
    const T* w = ctx.num_inputs() > 3 ? ctx.input(3).ptr<const T>() : nullptr;
    T* dx = ctx.output(0).ptr<T>();
    T* dw = w ? ctx.output(1).ptr<T>() : nullptr;
    ParallelFor(
        rows,
        [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const T* __restrict xr = xs + r * len, * __restrict gr = g + r * len;
            T* __restrict o = dx + r * len;
            const T rs = rstd[r];
            double sgx = SumD(len, [&](int64_t j) {
              T gj = w ? gr[j] * w[j] : gr[j];
              return gj * xr[j] * rs;
            });
            const T m = static_cast<T>(sgx / len);
            for (int64_t j = 0; j < len; ++j) {
              T gj = w ? gr[j] * w[j] : gr[j];
              o[j] = rs * (gj - xr[j] * rs * m);
            }
          }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)));
    if (dw)
      ParallelFor(
          len,
          [&](int64_t b, int64_t e) {
            for (int64_t j = b; j < e; ++j) {
              double s = 0;
              for (int64_t r = 0; r < rows; ++r)
                s += static_cast<double>(g[r * len + j] * xs[r * len + j] * rstd[r]);
              dw[j] = static_cast<T>(s);
            }
          },
          std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(rows, 1)));
  });
}

}  // namespace

OFL_REGISTER_KERNEL(layer_norm, kCPU, RowNormKernel);
OFL_REGISTER_KERNEL(rms_norm, kCPU, RmsNormKernel);
OFL_REGISTER_KERNEL(rms_norm_grad, kCPU, RmsNormGradKernel);
OFL_REGISTER_KERNEL(group_norm, kCPU, RowNormKernel);
OFL_REGISTER_KERNEL(layer_norm_grad, kCPU, RowNormGradKernel);
OFL_REGISTER_KERNEL(group_norm_grad, kCPU, RowNormGradKernel);
OFL_REGISTER_KERNEL(batch_norm, kCPU, BatchNormKernel);
OFL_REGISTER_KERNEL(batch_norm_grad, kCPU, BatchNormGradKernel);

}  // namespace kernels
}  // namespace oneflow_like
