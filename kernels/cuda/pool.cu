// Device code of the pooling family (NCHW, or NCDHW for the *3d ops with depth 1 otherwise;
// contiguous; f32/f64). Forward: one thread per output
// element. Backward: one thread per input element gathering the outputs whose window holds it,
// in ascending (oh, ow) order -- the order in which the CPU's scatter adds them, so results are
// the CPU's bit for bit and no atomics are needed.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

// Smallest o >= 0 with o * s >= num (num may be negative).
__device__ __forceinline__ int64_t CeilDivNonNeg(int64_t num, int64_t s) {
  return num <= 0 ? 0 : (num + s - 1) / s;
}

template <typename T>
__global__ void MaxPoolKernel(PoolGeom q, const T* x, T* y, int64_t* idx) {
  int64_t total = q.planes * q.od * q.oh * q.ow;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < total;
       o += int64_t(gridDim.x) * blockDim.x) {
    int64_t ow = o % q.ow, oh = (o / q.ow) % q.oh, od = (o / (q.ow * q.oh)) % q.od,
            pl = o / (q.ow * q.oh * q.od);
    const T* xp = x + pl * q.d * q.h * q.w;
    T best = -INFINITY;
    int64_t bi = -1;
    bool stop = false;
    for (int64_t t = 0; t < q.kd && !stop; ++t) {
      int64_t id = od * q.sd - q.pd + t * q.dd;
      if (id < 0 || id >= q.d) continue;
      for (int64_t i = 0; i < q.kh && !stop; ++i) {
        int64_t ih = oh * q.sh - q.ph + i * q.dh;
        if (ih < 0 || ih >= q.h) continue;
        for (int64_t j = 0; j < q.kw; ++j) {
          int64_t iw = ow * q.sw - q.pw + j * q.dw;
          if (iw < 0 || iw >= q.w) continue;
          int64_t k = (id * q.h + ih) * q.w + iw;
          T v = xp[k];
          if (bi < 0 || v > best ||
              IsNanV(v)) {  // the CPU's test: first max, the first NaN ends the scan
            best = v;
            bi = k;
            if (IsNanV(v)) {
              stop = true;
              break;
            }
          }
        }
      }
    }
    y[o] = best;
    idx[o] = bi;
  }
}

template <typename T>
__global__ void MaxPoolGradKernel(PoolGeom q, const T* dy, const int64_t* idx, T* dx) {
  int64_t total = q.planes * q.d * q.h * q.w;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t iw = e % q.w, ih = (e / q.w) % q.h, id = (e / (q.w * q.h)) % q.d,
            pl = e / (q.w * q.h * q.d), k = (id * q.h + ih) * q.w + iw;
    // Outputs whose window can reach (ih, iw): oh * sh in [ih + ph - (kh - 1) dh, ih + ph].
    int64_t od0 = CeilDivNonNeg(id + q.pd - (q.kd - 1) * q.dd, q.sd), od1 = (id + q.pd) / q.sd;
    int64_t oh0 = CeilDivNonNeg(ih + q.ph - (q.kh - 1) * q.dh, q.sh), oh1 = (ih + q.ph) / q.sh;
    int64_t ow0 = CeilDivNonNeg(iw + q.pw - (q.kw - 1) * q.dw, q.sw), ow1 = (iw + q.pw) / q.sw;
    if (od1 >= q.od) od1 = q.od - 1;
    if (oh1 >= q.oh) oh1 = q.oh - 1;
    if (ow1 >= q.ow) ow1 = q.ow - 1;
    const int64_t* ip = idx + pl * q.od * q.oh * q.ow;
    const T* gp = dy + pl * q.od * q.oh * q.ow;
    T acc = T(0);
    for (int64_t od = od0; od <= od1; ++od)
      for (int64_t oh = oh0; oh <= oh1; ++oh)
        for (int64_t ow = ow0; ow <= ow1; ++ow) {
          int64_t o = (od * q.oh + oh) * q.ow + ow;
          if (ip[o] == k) acc += gp[o];
        }
    dx[e] = acc;
  }
}

// kernels/cpu/pool.cc AvgWindow: the window clipped to the input and its divisor.
struct Window {
  int64_t d0, d1, h0, h1, w0, w1;
  double divisor;
};
__device__ __forceinline__ Window AvgWindow(const PoolGeom& q, int64_t od, int64_t oh, int64_t ow,
                                            bool include_pad, int64_t override_div) {
  int64_t d0 = od * q.sd - q.pd, h0 = oh * q.sh - q.ph, w0 = ow * q.sw - q.pw;
  int64_t d1 = min(d0 + q.kd, q.d + q.pd), h1 = min(h0 + q.kh, q.h + q.ph),
          w1 = min(w0 + q.kw, q.w + q.pw);
  int64_t padded = (d1 - d0) * (h1 - h0) * (w1 - w0);
  d0 = max(d0, int64_t(0));
  h0 = max(h0, int64_t(0));
  w0 = max(w0, int64_t(0));
  d1 = min(d1, q.d);
  h1 = min(h1, q.h);
  w1 = min(w1, q.w);
  double div = override_div > 0 ? double(override_div)
               : include_pad    ? double(padded)
                                : double((d1 - d0) * (h1 - h0) * (w1 - w0));
  return Window{d0, d1, h0, h1, w0, w1, div};
}

template <typename T>
__global__ void AvgPoolKernel(PoolGeom q, bool inc, int64_t dv, const T* x, T* y) {
  int64_t total = q.planes * q.od * q.oh * q.ow;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < total;
       o += int64_t(gridDim.x) * blockDim.x) {
    int64_t ow = o % q.ow, oh = (o / q.ow) % q.oh, od = (o / (q.ow * q.oh)) % q.od,
            pl = o / (q.ow * q.oh * q.od);
    const T* xp = x + pl * q.d * q.h * q.w;
    Window wd = AvgWindow(q, od, oh, ow, inc, dv);
    T s = 0;
    for (int64_t id = wd.d0; id < wd.d1; ++id)
      for (int64_t ih = wd.h0; ih < wd.h1; ++ih)
        for (int64_t iw = wd.w0; iw < wd.w1; ++iw) s += xp[(id * q.h + ih) * q.w + iw];
    y[o] = wd.divisor > 0 ? static_cast<T>(s / wd.divisor) : T(0);
  }
}

template <typename T>
__global__ void AvgPoolGradKernel(PoolGeom q, bool inc, int64_t dv, const T* dy, T* dx) {
  int64_t total = q.planes * q.d * q.h * q.w;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t iw = e % q.w, ih = (e / q.w) % q.h, id = (e / (q.w * q.h)) % q.d,
            pl = e / (q.w * q.h * q.d);
    // Unclipped windows [oh * sh - ph, + kh) holding ih: oh * sh in (ih + ph - kh, ih + ph].
    int64_t od0 = CeilDivNonNeg(id + q.pd - q.kd + 1, q.sd), od1 = (id + q.pd) / q.sd;
    int64_t oh0 = CeilDivNonNeg(ih + q.ph - q.kh + 1, q.sh), oh1 = (ih + q.ph) / q.sh;
    int64_t ow0 = CeilDivNonNeg(iw + q.pw - q.kw + 1, q.sw), ow1 = (iw + q.pw) / q.sw;
    if (od1 >= q.od) od1 = q.od - 1;
    if (oh1 >= q.oh) oh1 = q.oh - 1;
    if (ow1 >= q.ow) ow1 = q.ow - 1;
    const T* gp = dy + pl * q.od * q.oh * q.ow;
    T acc = T(0);
    for (int64_t od = od0; od <= od1; ++od)
      for (int64_t oh = oh0; oh <= oh1; ++oh)
        for (int64_t ow = ow0; ow <= ow1; ++ow) {
          Window wd = AvgWindow(q, od, oh, ow, inc, dv);
          if (wd.divisor <= 0 || id < wd.d0 || id >= wd.d1 || ih < wd.h0 || ih >= wd.h1 ||
              iw < wd.w0 || iw >= wd.w1)
            continue;
          acc += static_cast<T>(gp[(od * q.oh + oh) * q.ow + ow] / wd.divisor);
        }
    dx[e] = acc;
  }
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
__device__ __forceinline__ int64_t AStart(int64_t o, int64_t in, int64_t out) {
  return (o * in) / out;
}
__device__ __forceinline__ int64_t AEnd(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

template <typename T>
__global__ void AdaptiveKernel(PoolGeom q, const T* x, T* y) {
  int64_t total = q.planes * q.od * q.oh * q.ow;
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < total;
       o += int64_t(gridDim.x) * blockDim.x) {
    int64_t j = o % q.ow, i = (o / q.ow) % q.oh, l = (o / (q.ow * q.oh)) % q.od,
            pl = o / (q.ow * q.oh * q.od);
    int64_t d0 = AStart(l, q.d, q.od), d1 = AEnd(l, q.d, q.od);
    int64_t h0 = AStart(i, q.h, q.oh), h1 = AEnd(i, q.h, q.oh), w0 = AStart(j, q.w, q.ow),
            w1 = AEnd(j, q.w, q.ow);
    const T* xp = x + pl * q.d * q.h * q.w;
    T inv = T(1) / static_cast<T>((d1 - d0) * (h1 - h0) * (w1 - w0));
    T s = 0;
    for (int64_t z = d0; z < d1; ++z)
      for (int64_t a = h0; a < h1; ++a)
        for (int64_t c = w0; c < w1; ++c) s += xp[(z * q.h + a) * q.w + c];
    y[o] = s * inv;
  }
}

template <typename T>
__global__ void AdaptiveGradKernel(PoolGeom q, const T* dy, T* dx) {
  int64_t total = q.planes * q.d * q.h * q.w;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t c = e % q.w, a = (e / q.w) % q.h, z = (e / (q.w * q.h)) % q.d,
            pl = e / (q.w * q.h * q.d);
    // Windows holding a: i in [floor(a * oh / h), ceil((a + 1) * oh / h) - 1] (checked below too).
    int64_t l0 = (z * q.od) / q.d, l1 = ((z + 1) * q.od + q.d - 1) / q.d - 1;
    int64_t i0 = (a * q.oh) / q.h, i1 = ((a + 1) * q.oh + q.h - 1) / q.h - 1;
    int64_t j0 = (c * q.ow) / q.w, j1 = ((c + 1) * q.ow + q.w - 1) / q.w - 1;
    if (l1 >= q.od) l1 = q.od - 1;
    if (i1 >= q.oh) i1 = q.oh - 1;
    if (j1 >= q.ow) j1 = q.ow - 1;
    const T* gp = dy + pl * q.od * q.oh * q.ow;
    T acc = T(0);
    for (int64_t l = l0; l <= l1; ++l) {
      int64_t d0 = AStart(l, q.d, q.od), d1 = AEnd(l, q.d, q.od);
      if (z < d0 || z >= d1) continue;
      for (int64_t i = i0; i <= i1; ++i) {
        int64_t h0 = AStart(i, q.h, q.oh), h1 = AEnd(i, q.h, q.oh);
        if (a < h0 || a >= h1) continue;
        for (int64_t j = j0; j <= j1; ++j) {
          int64_t w0 = AStart(j, q.w, q.ow), w1 = AEnd(j, q.w, q.ow);
          if (c < w0 || c >= w1) continue;
          T inv = T(1) / static_cast<T>((d1 - d0) * (h1 - h0) * (w1 - w0));
          acc += gp[(l * q.oh + i) * q.ow + j] * inv;
        }
      }
    }
    dx[e] = acc;
  }
}

}  // namespace

bool NnFloatSupported(ScalarType t) {
  return t == ScalarType::kF32 || t == ScalarType::kF64;
}

cudaError_t LaunchMaxPool(ScalarType t, const PoolGeom& q, const void* x, void* y, int64_t* idx,
                          cudaStream_t s) {
  int64_t total = q.planes * q.od * q.oh * q.ow;
  if (total == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, MaxPoolKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(
                             q, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(y), idx));
  return cudaGetLastError();
}

cudaError_t LaunchMaxPoolGrad(ScalarType t, const PoolGeom& q, const void* dy, const int64_t* idx,
                              void* dx, cudaStream_t s) {
  int64_t total = q.planes * q.d * q.h * q.w;
  if (total == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, MaxPoolGradKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(
                             q, static_cast<const scalar_t*>(dy), idx, static_cast<scalar_t*>(dx)));
  return cudaGetLastError();
}

cudaError_t LaunchAvgPool(ScalarType t, bool grad, const PoolGeom& q, bool inc, int64_t dv,
                          const void* in, void* out, cudaStream_t s) {
  int64_t total = q.planes * (grad ? q.d * q.h * q.w : q.od * q.oh * q.ow);
  if (total == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    const scalar_t* i = static_cast<const scalar_t*>(in);
    scalar_t* o = static_cast<scalar_t*>(out);
    if (grad)
      AvgPoolGradKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(q, inc, dv, i, o);
    else
      AvgPoolKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(q, inc, dv, i, o);
  });
  return cudaGetLastError();
}

cudaError_t LaunchAdaptiveAvgPool(ScalarType t, bool grad, const PoolGeom& q, const void* in,
                                  void* out, cudaStream_t s) {
  int64_t total = q.planes * (grad ? q.d * q.h * q.w : q.od * q.oh * q.ow);
  if (total == 0) return cudaSuccess;
  if (q.od == 0 || q.oh == 0 ||
      q.ow == 0)  // no windows: the gradient is zero (the forward has no outputs)
    return cudaMemsetAsync(out, 0, total * (t == ScalarType::kF64 ? 8 : 4), s);
  OFL_CU_SWITCH_FLOAT(t, {
    const scalar_t* i = static_cast<const scalar_t*>(in);
    scalar_t* o = static_cast<scalar_t*>(out);
    if (grad)
      AdaptiveGradKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(q, i, o);
    else
      AdaptiveKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(q, i, o);
  });
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
