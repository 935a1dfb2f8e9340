// Device code of the loss family (f32/f64). nll_loss: targets are checked on the device first
// (one block: the smallest bad position via atomicMin, which is order-independent, and the
// weight sum of kept targets through a fixed-order block reduction); every later kernel reads
// the flag and writes nothing once it is set, and never reads logp at a bad target.
// Reductions (mean/sum) run in one block in double: deterministic, equal to the CPU's serial
// sums up to rounding. BCE-with-logits is elementwise with the CPU's formulas.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr int kLossThreads = 512;
struct SumD {
  __device__ double operator()(double a, double b) const { return a + b; }
};

template <typename T>
__device__ __forceinline__ double WeightOf(const T* w, int64_t c) {
  return w ? static_cast<double>(w[c]) : 1.0;
}

template <typename T>
__global__ void NllCheckKernel(NllGeom g, const int64_t* t, const T* w, unsigned long long* flag,
                               double* den) {
  int64_t count = g.n * g.r;
  double s = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    int64_t v = t[i];
    if (v == g.ignore) continue;
    if (v < 0 || v >= g.c)
      atomicMin(flag, static_cast<unsigned long long>(i));
    else
      s += WeightOf(w, v);
  }
  s = BlockAllReduce(s, SumD());
  if (threadIdx.x == 0) *den = s;
}

// Per target: nll[i] = -w[t] logp[n, t, r] and smooth[i] = -sum_c w[c] logp[n, c, r] (0 when
// ignored).
template <typename T>
__global__ void NllTermsKernel(NllGeom g, const T* lp, const int64_t* t, const T* w,
                               const unsigned long long* flag, double* nll, double* smooth,
                               T* out_none, double k) {
  if (FlagSet(flag)) return;
  int64_t count = g.n * g.r;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t v = t[i];
    double a = 0, sm = 0;
    if (v != g.ignore && v >= 0 && v < g.c) {
      const T* row = lp + (i / g.r) * g.c * g.r + i % g.r;
      a = -WeightOf(w, v) * row[v * g.r];
      if (g.eps > 0)
        for (int64_t c = 0; c < g.c; ++c) sm -= WeightOf(w, c) * row[c * g.r];
    }
    if (out_none) {
      out_none[i] = static_cast<T>((1 - g.eps) * a + (g.eps > 0 ? k * sm : 0));
    } else {
      nll[i] = a;
      smooth[i] = sm;
    }
  }
}

template <typename T>
__global__ void NllReduceKernel(NllGeom g, const double* nll, const double* smooth,
                                const unsigned long long* flag, const double* den, double k,
                                T* out) {
  if (FlagSet(flag)) return;
  int64_t count = g.n * g.r;
  double sn = 0, ss = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    sn += nll[i];
    ss += smooth[i];
  }
  sn = BlockAllReduce(sn, SumD());
  ss = BlockAllReduce(ss, SumD());
  if (threadIdx.x == 0) {
    if (g.reduction == 1) {
      sn /= *den;
      ss /= *den;
    }
    out[0] = static_cast<T>((1 - g.eps) * sn + k * ss);
  }
}

// dlogp[n, c, r] = -g_i ((1 - eps) w[t] [c == t] / D1 + eps / C * w[c] / D2), one thread per
// element.
template <typename T>
__global__ void NllGradKernel(NllGeom g, const T* dy, const int64_t* t, const T* w,
                              const unsigned long long* flag, const double* den, double k, T* dx) {
  if (FlagSet(flag)) return;
  int64_t total = g.n * g.c * g.r;
  double d1 = g.reduction == 1 ? *den : 1.0, d2 = d1;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e % g.r, c = (e / g.r) % g.c, n = e / (g.r * g.c), i = n * g.r + r, v = t[i];
    T o = T(0);
    if (v != g.ignore && v >= 0 && v < g.c) {
      double gi = g.reduction == 0 ? static_cast<double>(dy[i]) : static_cast<double>(dy[0]);
      if (g.eps > 0) o = static_cast<T>(-gi * k * WeightOf(w, c) / d2);
      if (c == v) o += static_cast<T>(-gi * (1 - g.eps) * WeightOf(w, v) / d1);
    }
    dx[e] = o;
  }
}

template <typename T>
__device__ __forceinline__ T SoftplusNeg(T x) {  // log(1 + e^-x)
  return max(-x, T(0)) + Log1p(Exp(-Fabs(x)));
}

template <typename T>
__global__ void BceKernel(int64_t n, const T* x, const T* y, const T* pw, T* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    T lw = pw ? T(1) + (pw[i] - T(1)) * y[i] : T(1);
    out[i] = (T(1) - y[i]) * x[i] + lw * SoftplusNeg(x[i]);
  }
}

template <typename T>
__global__ void BceGradKernel(int64_t n, const T* g, const T* x, const T* y, const T* pw, T* dx,
                              T* dt, T* dpw) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    T p = pw ? pw[i] : T(1), lw = T(1) + (p - T(1)) * y[i], sp = SoftplusNeg(x[i]);
    T sig_neg = T(1) / (T(1) + Exp(x[i]));
    dx[i] = g[i] * ((T(1) - y[i]) - lw * sig_neg);
    dt[i] = g[i] * (-x[i] + (p - T(1)) * sp);
    if (dpw) dpw[i] = g[i] * y[i] * sp;
  }
}

}  // namespace

size_t NllScratchBytes(int64_t count) {
  return 2 * sizeof(double) * static_cast<size_t>(count > 0 ? count : 0);
}

cudaError_t LaunchNllCheck(ScalarType t, const NllGeom& g, const int64_t* target, const void* w,
                           unsigned long long* flag, double* den, cudaStream_t s) {
  OFL_CU_SWITCH_FLOAT(t, NllCheckKernel<scalar_t><<<1, kLossThreads, 0, s>>>(
                             g, target, static_cast<const scalar_t*>(w), flag, den));
  return cudaGetLastError();
}

cudaError_t LaunchNllLoss(ScalarType t, const NllGeom& g, const void* logp, const int64_t* target,
                          const void* w, const unsigned long long* flag, const double* den,
                          void* scratch, void* out, cudaStream_t s) {
  int64_t count = g.n * g.r;
  double k = g.eps / static_cast<double>(g.c);
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    double* nll = static_cast<double*>(scratch);
    double* smooth = nll ? nll + count : nullptr;
    if (g.reduction == 0) {
      if (count > 0)
        NllTermsKernel<T><<<GridFor(count), kThreads, 0, s>>>(
            g, static_cast<const T*>(logp), target, static_cast<const T*>(w), flag, nullptr,
            nullptr, static_cast<T*>(out), k);
    } else {
      if (count > 0)
        NllTermsKernel<T><<<GridFor(count), kThreads, 0, s>>>(g, static_cast<const T*>(logp),
                                                              target, static_cast<const T*>(w),
                                                              flag, nll, smooth, nullptr, k);
      NllReduceKernel<T>
          <<<1, kLossThreads, 0, s>>>(g, nll, smooth, flag, den, k, static_cast<T*>(out));
    }
  });
  return cudaGetLastError();
}

cudaError_t LaunchNllLossGrad(ScalarType t, const NllGeom& g, const void* dy, const int64_t* target,
                              const void* w, const unsigned long long* flag, const double* den,
                              void* dx, cudaStream_t s) {
  int64_t total = g.n * g.c * g.r;
  if (total == 0) return cudaSuccess;
  double k = g.eps / static_cast<double>(g.c);
  OFL_CU_SWITCH_FLOAT(
      t, NllGradKernel<scalar_t><<<GridFor(total), kThreads, 0, s>>>(
             g, static_cast<const scalar_t*>(dy), target, static_cast<const scalar_t*>(w), flag,
             den, k, static_cast<scalar_t*>(dx)));
  return cudaGetLastError();
}

cudaError_t LaunchBce(ScalarType t, int64_t n, const void* x, const void* y, const void* pw,
                      void* out, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    BceKernel<T><<<GridFor(n), kThreads, 0, s>>>(n, static_cast<const T*>(x),
                                                 static_cast<const T*>(y),
                                                 static_cast<const T*>(pw), static_cast<T*>(out));
  });
  return cudaGetLastError();
}

cudaError_t LaunchBceGrad(ScalarType t, int64_t n, const void* g, const void* x, const void* y,
                          const void* pw, void* dx, void* dt, void* dpw, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    BceGradKernel<T><<<GridFor(n), kThreads, 0, s>>>(
        n, static_cast<const T*>(g), static_cast<const T*>(x), static_cast<const T*>(y),
        static_cast<const T*>(pw), static_cast<T*>(dx), static_cast<T*>(dt), static_cast<T*>(dpw));
  });
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
