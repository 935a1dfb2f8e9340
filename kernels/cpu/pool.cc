// CPU kernels of the pooling family (NCHW; the *3d ops NCDHW: the same code with a depth
// dimension, 1 for 2-d), parallel over (n, c) planes.
#include <algorithm>
#include <cmath>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/cpu/loops.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/pool.h"

namespace oneflow_like {
namespace kernels {
namespace {

// Depth d (output od; window kd, stride sd, padding pd, dilation dd) is 1 for the 2-d ops.
struct PoolGeom {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t d = 1, od = 1, kd = 1, sd = 1, pd = 0, dd = 1;
  int64_t in_plane() const { return d * h * w; }
  int64_t out_plane() const { return od * oh * ow; }
};
// x, y: [N, C, H, W] or [N, C, D, H, W]: the planes and their sizes (all an adaptive pool needs).
PoolGeom PlaneGeom(const Shape& x, const Shape& y) {
  int o = x.ndim() == 5 ? 1 : 0;
  PoolGeom q{x[0] * x[1], x[2 + o], x[3 + o], y[2 + o], y[3 + o], 1, 1, 1, 1, 0, 0, 1, 1};
  if (o) q.d = x[2], q.od = y[2];
  return q;
}
// And the windows: PoolAttrs (the backward ops' PoolGradAttrs read as PoolAttrs), one value per
// spatial dim.
PoolGeom GeomOf(const opdefs::PoolAttrs& a, const Shape& x, const Shape& y) {
  PoolGeom q = PlaneGeom(x, y);
  int o = x.ndim() == 5 ? 1 : 0;
  const auto &k = a.kernel, &s = a.stride, &p = a.padding, &d = a.dilation;
  q.kh = k[o], q.kw = k[1 + o], q.sh = s[o], q.sw = s[1 + o], q.ph = p[o], q.pw = p[1 + o];
  q.dh = d[o], q.dw = d[1 + o];
  if (o) q.kd = k[0], q.sd = s[0], q.pd = p[0], q.dd = d[0];
  return q;
}
// A 2-d pool whose windows all lie inside the input (no padding, the usual case): the fast
// paths without bounds checks per tap.
bool Interior(const PoolGeom& q) {
  return q.d == 1 && q.kd == 1 && q.ph == 0 && q.pw == 0 &&
         (q.oh - 1) * q.sh + (q.kh - 1) * q.dh < q.h && (q.ow - 1) * q.sw + (q.kw - 1) * q.dw < q.w;
}
int64_t PlaneGrain(const PoolGeom& q) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(q.in_plane(), 1));
}

#if defined(__AVX2__)
// Eight 2x2/2 windows of rows r0, r1 (outputs ow0 .. ow0 + 7 of a row whose input starts at `base`
// in the plane), with the scalar path's rules: taps in the order (0,0) (0,1) (1,0) (1,1), a later
// tap wins only if greater, or if it is NaN and the running maximum is not (the first NaN wins).
inline void MaxPool2x2x8(const float* r0, const float* r1, float* o, int64_t* idx, int64_t ow0,
                         int64_t base, int64_t w) {
  auto deinterleave = [](const float* p, __m256& even, __m256& odd) {
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    auto order = [](__m256 v) {  // (a0 a2 b0 b2 | a4 a6 b4 b6) -> (a0 a2 a4 a6 b0 b2 b4 b6)
      return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
    };
    even = order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    odd = order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  };
  __m256 t00, t01, t10, t11;
  deinterleave(r0 + 2 * ow0, t00, t01);
  deinterleave(r1 + 2 * ow0, t10, t11);
  __m256 m = t00, off = _mm256_setzero_ps();  // off: the winning tap's offset from the window
                                              // corner (int32 bits)
  auto take = [&](__m256 v, int64_t tap_off) {
    __m256 c = _mm256_or_ps(
        _mm256_cmp_ps(v, m, _CMP_GT_OQ),
        _mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), _mm256_cmp_ps(m, m, _CMP_ORD_Q)));
    m = _mm256_blendv_ps(m, v, c);
    off = _mm256_blendv_ps(
        off, _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(tap_off))), c);
  };
  take(t01, 1);
  take(t10, w);
  take(t11, w + 1);
  _mm256_storeu_ps(o + ow0, m);
  __m256i offi = _mm256_castps_si256(off);
  __m256i k0 = _mm256_add_epi64(_mm256_set1_epi64x(base + 2 * ow0), _mm256_setr_epi64x(0, 2, 4, 6));
  __m256i k1 = _mm256_add_epi64(k0, _mm256_set1_epi64x(8));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + ow0),
                      _mm256_add_epi64(k0, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(offi))));
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(idx + ow0 + 4),
      _mm256_add_epi64(k1, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(offi, 1))));
}

// A whole plane of 2x2/2 windows, eight at a time (a last, overlapping step covers the rest).
inline bool MaxPool2x2PlaneSimd(const float* xp, float* op, int64_t* ip, int64_t oh_n, int64_t ow_n,
                                int64_t w) {
  if (ow_n < 8) return false;
  for (int64_t oh = 0; oh < oh_n; ++oh) {
    const float* r0 = xp + 2 * oh * w;
    for (int64_t ow = 0; ow < ow_n; ow += 8)
      MaxPool2x2x8(r0, r0 + w, op + oh * ow_n, ip + oh * ow_n, std::min(ow, ow_n - 8), 2 * oh * w,
                   w);
  }
  return true;
}
#endif
// No vector path for other dtypes (or without AVX2): the caller's scalar loop runs.
template <typename T>
inline bool MaxPool2x2PlaneSimd(const T*, T*, int64_t*, int64_t, int64_t, int64_t) {
  return false;
}

#define OFL_POOL_FLOAT(op, dtype, ...)                                                   \
  bool done = false;                                                                     \
  OFL_SWITCH_FLOAT(dtype, {                                                              \
    __VA_ARGS__;                                                                         \
    done = true;                                                                         \
  });                                                                                    \
  if (!done) return TypeError("[%s] not supported for %s on cpu", op, DTypeName(dtype)); \
  return Status();

Status MaxPoolKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(ctx.attrs());
  PoolGeom q = GeomOf(a, x.shape, ctx.output(0).shape);
  OFL_POOL_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    const T* in = x.ptr<const T>();
    T* out = ctx.output(0).ptr<T>();
    int64_t* idx = ctx.output(1).ptr<int64_t>();
    const bool interior = Interior(q);
    ParallelFor(
        q.planes,
        [&](int64_t b, int64_t e) {
          for (int64_t pl = b; pl < e; ++pl) {
            const T* xp = in + pl * q.in_plane();
            if (interior) {
              // Geometry in locals: stores through the int64 index pointer could otherwise alias
              // the (int64) fields of `q` and force a reload of every one after each store.
              const int64_t OH = q.oh, OW = q.ow, W = q.w, SH = q.sh, SW = q.sw, KH = q.kh,
                            KW = q.kw;
              const int64_t DHW = q.dh * q.w, DW = q.dw;
              T* op = out + pl * OH * OW;
              int64_t* ip = idx + pl * OH * OW;
              if (KH == 2 && KW == 2 && SH == 2 && SW == 2 && DHW == W && DW == 1) {
                if (MaxPool2x2PlaneSimd(xp, op, ip, OH, OW, W)) continue;
                // The common 2x2/2 window, branch-free: the first maximum wins, a NaN wins.
                auto take = [](T v, int64_t k, T& m, int64_t& mi) {
                  bool c = (v > m) | ((v != v) & (m == m));
                  m = c ? v : m;
                  mi = c ? k : mi;
                };
                for (int64_t oh = 0; oh < OH; ++oh) {
                  const T* r0 = xp + 2 * oh * W;
                  const T* r1 = r0 + W;
                  for (int64_t ow = 0; ow < OW; ++ow) {
                    int64_t k = 2 * oh * W + 2 * ow;
                    T m = r0[2 * ow];
                    int64_t mi = k;
                    take(r0[2 * ow + 1], k + 1, m, mi);
                    take(r1[2 * ow], k + W, m, mi);
                    take(r1[2 * ow + 1], k + W + 1, m, mi);
                    op[oh * OW + ow] = m;
                    ip[oh * OW + ow] = mi;
                  }
                }
                continue;
              }
              for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow) {
                  int64_t base = oh * SH * W + ow * SW, bi = base;
                  T best = xp[base];
                  bool nan = best != best;
                  for (int64_t i = 0; i < KH && !nan; ++i)
                    for (int64_t j = 0; j < KW; ++j) {
                      int64_t k = base + i * DHW + j * DW;
                      T v = xp[k];
                      if (v > best || v != v) {
                        best = v;
                        bi = k;
                        if (v != v) {
                          nan = true;
                          break;
                        }
                      }
                    }
                  op[oh * OW + ow] = best;
                  ip[oh * OW + ow] = bi;
                }
              continue;
            }
            for (int64_t od = 0; od < q.od; ++od)
              for (int64_t oh = 0; oh < q.oh; ++oh)
                for (int64_t ow = 0; ow < q.ow; ++ow) {
                  T best = -std::numeric_limits<T>::infinity();
                  int64_t bi = -1;
                  for (int64_t t = 0; t < q.kd; ++t) {
                    int64_t id = od * q.sd - q.pd + t * q.dd;
                    if (id < 0 || id >= q.d) continue;
                    for (int64_t i = 0; i < q.kh; ++i) {
                      int64_t ih = oh * q.sh - q.ph + i * q.dh;
                      if (ih < 0 || ih >= q.h) continue;
                      for (int64_t j = 0; j < q.kw; ++j) {
                        int64_t iw = ow * q.sw - q.pw + j * q.dw;
                        if (iw < 0 || iw >= q.w) continue;
                        int64_t k = (id * q.h + ih) * q.w + iw;
                        T v = xp[k];
                        if (bi < 0 || v > best || std::isnan(v)) {
                          best = v;
                          bi = k;
                          if (std::isnan(v)) goto found;
                        }
                      }
                    }
                  }
                found:
                  int64_t o = pl * q.out_plane() + (od * q.oh + oh) * q.ow + ow;
                  out[o] = best;
                  idx[o] = bi;
                }
          }
        },
        PlaneGrain(q));
  });
}

Status MaxPoolGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &ix = ctx.input(1), &dx = ctx.output(0);
  // Indices are flat within a plane, so any spatial rank works the same.
  int64_t planes = dx.shape[0] * dx.shape[1], hw = 1, ohw = 1;
  for (int64_t i = 2; i < dx.shape.ndim(); ++i) hw *= dx.shape[i], ohw *= dy.shape[i];
  OFL_POOL_FLOAT(ctx.op(), dy.dtype, {
    using T = scalar_t;
    const T* g = dy.ptr<const T>();
    const int64_t* idx = ix.ptr<const int64_t>();
    T* o = dx.ptr<T>();
    ParallelFor(
        planes,
        [&](int64_t b, int64_t e) {
          std::fill(o + b * hw, o + e * hw, T(0));
          for (int64_t pl = b; pl < e; ++pl)
            for (int64_t i = 0; i < ohw; ++i) {
              int64_t k = idx[pl * ohw + i];
              if (k >= 0) o[pl * hw + k] += g[pl * ohw + i];
            }
        },
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(hw, 1)));
  });
}

// The window of output (od, oh, ow) clipped to the input, and its divisor (PyTorch's rules).
struct Window {
  int64_t d0, d1, h0, h1, w0, w1;
  double divisor;
};
inline Window AvgWindow(const PoolGeom& q, int64_t od, int64_t oh, int64_t ow, bool include_pad,
                        int64_t override_div) {
  int64_t d0 = od * q.sd - q.pd, h0 = oh * q.sh - q.ph, w0 = ow * q.sw - q.pw;
  int64_t d1 = std::min(d0 + q.kd, q.d + q.pd), h1 = std::min(h0 + q.kh, q.h + q.ph),
          w1 = std::min(w0 + q.kw, q.w + q.pw);
  int64_t padded = (d1 - d0) * (h1 - h0) * (w1 - w0);
  d0 = std::max<int64_t>(d0, 0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  d1 = std::min(d1, q.d);
  h1 = std::min(h1, q.h);
  w1 = std::min(w1, q.w);
  double div = override_div > 0 ? override_div
               : include_pad    ? padded
                                : (d1 - d0) * (h1 - h0) * (w1 - w0);
  return Window{d0, d1, h0, h1, w0, w1, div};
}

Status AvgPoolKernel(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(ctx.attrs());
  PoolGeom q = GeomOf(a, x.shape, ctx.output(0).shape);
  const bool inc = a.count_include_pad;
  const int64_t dv = a.divisor_override;
  OFL_POOL_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    const T* in = x.ptr<const T>();
    T* out = ctx.output(0).ptr<T>();
    ParallelFor(
        q.planes,
        [&](int64_t b, int64_t e) {
          for (int64_t pl = b; pl < e; ++pl) {
            const T* xp = in + pl * q.in_plane();
            T* yp = out + pl * q.out_plane();
            for (int64_t od = 0; od < q.od; ++od)
              for (int64_t oh = 0; oh < q.oh; ++oh)
                for (int64_t ow = 0; ow < q.ow; ++ow) {
                  Window wd = AvgWindow(q, od, oh, ow, inc, dv);
                  T s = 0;
                  for (int64_t id = wd.d0; id < wd.d1; ++id)
                    for (int64_t ih = wd.h0; ih < wd.h1; ++ih)
                      for (int64_t iw = wd.w0; iw < wd.w1; ++iw)
                        s += xp[(id * q.h + ih) * q.w + iw];
                  yp[(od * q.oh + oh) * q.ow + ow] =
                      wd.divisor > 0 ? static_cast<T>(s / wd.divisor) : T(0);
                }
          }
        },
        PlaneGrain(q));
  });
}

Status AvgPoolGradKernel(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &dx = ctx.output(0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(ctx.attrs());
  PoolGeom q = GeomOf(a, dx.shape, dy.shape);
  const bool inc = a.count_include_pad;
  const int64_t dv = a.divisor_override;
  OFL_POOL_FLOAT(ctx.op(), dy.dtype, {
    using T = scalar_t;
    const T* g = dy.ptr<const T>();
    T* o = dx.ptr<T>();
    ParallelFor(
        q.planes,
        [&](int64_t b, int64_t e) {
          std::fill(o + b * q.in_plane(), o + e * q.in_plane(), T(0));
          for (int64_t pl = b; pl < e; ++pl) {
            T* xp = o + pl * q.in_plane();
            const T* gp = g + pl * q.out_plane();
            for (int64_t od = 0; od < q.od; ++od)
              for (int64_t oh = 0; oh < q.oh; ++oh)
                for (int64_t ow = 0; ow < q.ow; ++ow) {
                  Window wd = AvgWindow(q, od, oh, ow, inc, dv);
                  if (wd.divisor <= 0) continue;
                  T v = static_cast<T>(gp[(od * q.oh + oh) * q.ow + ow] / wd.divisor);
                  for (int64_t id = wd.d0; id < wd.d1; ++id)
                    for (int64_t ih = wd.h0; ih < wd.h1; ++ih)
                      for (int64_t iw = wd.w0; iw < wd.w1; ++iw)
                        xp[(id * q.h + ih) * q.w + iw] += v;
                }
          }
        },
        PlaneGrain(q));
  });
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
inline int64_t AStart(int64_t o, int64_t in, int64_t out) {
  return (o * in) / out;
}
inline int64_t AEnd(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

// adaptive_avg_pool2d/3d (+grad); the 2-d ops have depth 1.
template <bool kGrad>
Status AdaptiveKernel(KernelContext& ctx) {
  const TensorView &x = kGrad ? ctx.output(0) : ctx.input(0),
                   &y = kGrad ? ctx.input(0) : ctx.output(0);
  PoolGeom q = PlaneGeom(x.shape, y.shape);
  OFL_POOL_FLOAT(ctx.op(), x.dtype, {
    using T = scalar_t;
    T* xs = static_cast<T*>(x.data);
    T* ys = static_cast<T*>(y.data);
    ParallelFor(
        q.planes,
        [&](int64_t b, int64_t e) {
          if (kGrad) std::fill(xs + b * q.in_plane(), xs + e * q.in_plane(), T(0));
          for (int64_t pl = b; pl < e; ++pl) {
            T* xp = xs + pl * q.in_plane();
            T* yp = ys + pl * q.out_plane();
            for (int64_t l = 0; l < q.od; ++l) {
              int64_t d0 = AStart(l, q.d, q.od), d1 = AEnd(l, q.d, q.od);
              for (int64_t i = 0; i < q.oh; ++i) {
                int64_t h0 = AStart(i, q.h, q.oh), h1 = AEnd(i, q.h, q.oh);
                for (int64_t j = 0; j < q.ow; ++j) {
                  int64_t w0 = AStart(j, q.w, q.ow), w1 = AEnd(j, q.w, q.ow);
                  T inv = T(1) / static_cast<T>((d1 - d0) * (h1 - h0) * (w1 - w0));
                  T& yv = yp[(l * q.oh + i) * q.ow + j];
                  T s = 0, v = kGrad ? yv * inv : T(0);
                  for (int64_t z = d0; z < d1; ++z)
                    for (int64_t a = h0; a < h1; ++a)
                      for (int64_t c = w0; c < w1; ++c) {
                        T& xv = xp[(z * q.h + a) * q.w + c];
                        if (kGrad)
                          xv += v;
                        else
                          s += xv;
                      }
                  if (!kGrad) yv = s * inv;
                }
              }
            }
          }
        },
        PlaneGrain(q));
  });
}

}  // namespace

OFL_REGISTER_KERNEL(max_pool2d, kCPU, MaxPoolKernel);
OFL_REGISTER_KERNEL(max_pool2d_grad, kCPU, MaxPoolGradKernel);
OFL_REGISTER_KERNEL(avg_pool2d, kCPU, AvgPoolKernel);
OFL_REGISTER_KERNEL(avg_pool2d_grad, kCPU, AvgPoolGradKernel);
OFL_REGISTER_KERNEL(adaptive_avg_pool2d, kCPU, AdaptiveKernel<false>);
OFL_REGISTER_KERNEL(adaptive_avg_pool2d_grad, kCPU, AdaptiveKernel<true>);
OFL_REGISTER_KERNEL(max_pool3d, kCPU, MaxPoolKernel);
OFL_REGISTER_KERNEL(max_pool3d_grad, kCPU, MaxPoolGradKernel);
OFL_REGISTER_KERNEL(avg_pool3d, kCPU, AvgPoolKernel);
OFL_REGISTER_KERNEL(avg_pool3d_grad, kCPU, AvgPoolGradKernel);
OFL_REGISTER_KERNEL(adaptive_avg_pool3d, kCPU, AdaptiveKernel<false>);
OFL_REGISTER_KERNEL(adaptive_avg_pool3d_grad, kCPU, AdaptiveKernel<true>);

}  // namespace kernels
}  // namespace oneflow_like
