// Device code of the normalization family (f32/f64, contiguous). Statistics accumulate in double
// as on the CPU, through BlockAllReduce's fixed merge tree (deterministic; the CPU sums serially,
// so results agree to rounding, not bit for bit). The elementwise formulas are the CPU's.
//   layer_norm / group_norm: one block per row (mean, then the centred second moment).
//   their grads: one block per row for dx; dw/db per affine index, a thread per index walking
//     the rows in order when inner == 1 (layer_norm: coalesced over the row), else a block.
//   batch_norm (+grad): one block per channel over (n, s).
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr int kNormThreads = 256;
struct SumD {
  __device__ double operator()(double a, double b) const { return a + b; }
};

unsigned BlocksFor(int64_t n) {
  return static_cast<unsigned>(n < (1 << 20) ? (n < 1 ? 1 : n) : (1 << 20));
}

template <typename T>
__global__ void RowNormKernel(RowNormGeom q, double eps, const T* x, const T* w, const T* b, T* y,
                              T* mean, T* rstd) {
  for (int64_t r = blockIdx.x; r < q.rows; r += gridDim.x) {
    const T* xr = x + r * q.len;
    T* yr = y + r * q.len;
    double s = 0;
    for (int64_t j = threadIdx.x; j < q.len; j += blockDim.x) s += static_cast<double>(xr[j]);
    double m = BlockAllReduce(s, SumD()) / q.len;
    double ss = 0;
    for (int64_t j = threadIdx.x; j < q.len; j += blockDim.x) {
      double d = static_cast<double>(xr[j]) - m;
      ss += d * d;
    }
    double v = BlockAllReduce(ss, SumD()) / q.len;
    T mt = static_cast<T>(m), rs = static_cast<T>(1.0 / sqrt(v + eps));
    if (threadIdx.x == 0) {
      mean[r] = mt;
      rstd[r] = rs;
    }
    if (q.inner == 1 && q.groups == 1) {  // layer_norm: affine index = j
      for (int64_t j = threadIdx.x; j < q.len; j += blockDim.x) {
        T o = (xr[j] - mt) * rs;
        if (w) o = o * w[j];
        if (b) o = o + b[j];
        yr[j] = o;
      }
    } else {
      for (int64_t j = threadIdx.x; j < q.len; j += blockDim.x) {
        int64_t ai = (r % q.groups) * q.cpg + j / q.inner;
        T sc = w ? rs * w[ai] : rs, sh = (b ? b[ai] : T(0)) - mt * sc;
        yr[j] = xr[j] * sc + sh;
      }
    }
  }
}

template <typename T>
__device__ __forceinline__ int64_t AffOf(const RowNormGeom& q, int64_t r, int64_t j) {
  return (r % q.groups) * q.cpg + j / q.inner;
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w (products in T, sums in double).
template <typename T>
__global__ void RowNormGradKernel(RowNormGeom q, const T* dy, const T* x, const T* mean,
                                  const T* rstd, const T* w, T* dx) {
  for (int64_t r = blockIdx.x; r < q.rows; r += gridDim.x) {
    const T *xr = x + r * q.len, *gr = dy + r * q.len;
    T* dr = dx + r * q.len;
    T m = mean[r], rs = rstd[r];
    double sg = 0, sgx = 0;
    for (int64_t j = threadIdx.x; j < q.len; j += blockDim.x) {
      T g = w ? gr[j] * w[AffOf<T>(q, r, j)] : gr[j];
      T xh = (xr[j] - m) * rs;
      sg += static_cast<double>(g);
      sgx += static_cast<double>(g * xh);
    }
    sg = BlockAllReduce(sg, SumD());
    sgx = BlockAllReduce(sgx, SumD());
    T mg = static_cast<T>(sg / q.len), mgx = static_cast<T>(sgx / q.len);
    for (int64_t j = threadIdx.x; j < q.len; j += blockDim.x) {
      T g = w ? gr[j] * w[AffOf<T>(q, r, j)] : gr[j];
      dr[j] = rs * (g - mg - (xr[j] - m) * rs * mgx);
    }
  }
}

// Affine index ai = grp * cpg + c covers rows k * groups + grp and columns c * inner + i.
template <typename T>
__device__ __forceinline__ void AffineTerms(const RowNormGeom& q, int64_t ai, int64_t t,
                                            const T* dy, const T* x, const T* mean, const T* rstd,
                                            double* pw, double* pb) {
  int64_t grp = ai / q.cpg, c = ai % q.cpg, k = t / q.inner, i = t % q.inner;
  int64_t r = k * q.groups + grp, p = r * q.len + c * q.inner + i;
  T xh = (x[p] - mean[r]) * rstd[r];
  *pw += static_cast<double>(dy[p] * xh);
  *pb += static_cast<double>(dy[p]);
}

template <typename T>
__global__ void AffineGradBlocksKernel(RowNormGeom q, const T* dy, const T* x, const T* mean,
                                       const T* rstd, T* dw, T* db) {
  int64_t naff = q.groups * q.cpg, per = (q.rows / q.groups) * q.inner;
  for (int64_t ai = blockIdx.x; ai < naff; ai += gridDim.x) {
    double sw = 0, sb = 0;
    for (int64_t t = threadIdx.x; t < per; t += blockDim.x)
      AffineTerms(q, ai, t, dy, x, mean, rstd, &sw, &sb);
    sw = BlockAllReduce(sw, SumD());
    sb = BlockAllReduce(sb, SumD());
    if (threadIdx.x == 0) {
      if (dw) dw[ai] = static_cast<T>(sw);
      if (db) db[ai] = static_cast<T>(sb);
    }
  }
}

template <typename T>
__global__ void BatchNormKernel(int64_t n, int64_t c, int64_t s, bool training, double eps,
                                const T* x, const T* w, const T* b, const T* rm, const T* rv, T* y,
                                T* mean, T* invstd, T* uvar) {
  int64_t cnt = n * s;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    double m, v;
    if (training) {
      double sum = 0;
      for (int64_t t = threadIdx.x; t < cnt; t += blockDim.x)
        sum += static_cast<double>(x[((t / s) * c + ch) * s + t % s]);
      m = BlockAllReduce(sum, SumD()) / cnt;
      double ss = 0;
      for (int64_t t = threadIdx.x; t < cnt; t += blockDim.x) {
        double d = static_cast<double>(x[((t / s) * c + ch) * s + t % s]) - m;
        ss += d * d;
      }
      ss = BlockAllReduce(ss, SumD());
      v = ss / cnt;
      if (threadIdx.x == 0) uvar[ch] = static_cast<T>(cnt > 1 ? ss / (cnt - 1) : ss);
    } else {
      m = rm[ch];
      v = rv[ch];
      if (threadIdx.x == 0) uvar[ch] = rv[ch];
    }
    double is = 1.0 / sqrt(v + eps);
    if (threadIdx.x == 0) {
      mean[ch] = static_cast<T>(m);
      invstd[ch] = static_cast<T>(is);
    }
    T sc = static_cast<T>(w[ch] * is), sh = static_cast<T>(b[ch] - m * w[ch] * is);
    for (int64_t t = threadIdx.x; t < cnt; t += blockDim.x) {
      int64_t p = ((t / s) * c + ch) * s + t % s;
      y[p] = x[p] * sc + sh;
    }
  }
}

template <typename T>
__global__ void BatchNormGradKernel(int64_t n, int64_t c, int64_t s, bool training, const T* dy,
                                    const T* x, const T* w, const T* mean, const T* invstd, T* dx,
                                    T* dw, T* db) {
  int64_t cnt = n * s;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    T m = mean[ch], is = invstd[ch];
    double sg = 0, sgx = 0;
    for (int64_t t = threadIdx.x; t < cnt; t += blockDim.x) {
      int64_t p = ((t / s) * c + ch) * s + t % s;
      sg += static_cast<double>(dy[p]);
      sgx += static_cast<double>(dy[p] * (x[p] - m) * is);
    }
    sg = BlockAllReduce(sg, SumD());
    sgx = BlockAllReduce(sgx, SumD());
    if (threadIdx.x == 0) {
      dw[ch] = static_cast<T>(sgx);
      db[ch] = static_cast<T>(sg);
    }
    T k = w[ch] * is, mg = training ? static_cast<T>(sg / cnt) : T(0),
      mgx = training ? static_cast<T>(sgx / cnt) : T(0);
    for (int64_t t = threadIdx.x; t < cnt; t += blockDim.x) {
      int64_t p = ((t / s) * c + ch) * s + t % s;
      dx[p] = k * (dy[p] - mg - (x[p] - m) * is * mgx);
    }
  }
}

// rms_norm: one block per row; rstd = 1 / sqrt(mean(x^2) + eps), y = x * rstd (* w).
template <typename T>
__global__ void RmsNormKernel(int64_t rows, int64_t len, double eps, const T* x, const T* w, T* y,
                              T* rstd) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    double ss = 0;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
      ss += static_cast<double>(xr[j] * xr[j]);
    T rs = static_cast<T>(1.0 / sqrt(BlockAllReduce(ss, SumD()) / len + eps));
    if (threadIdx.x == 0) rstd[r] = rs;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
      yr[j] = w ? xr[j] * rs * w[j] : xr[j] * rs;
  }
}

// dx = rstd * (g - xhat * mean(g * xhat)), g = dy * w, xhat = x * rstd (the CPU's formula).
template <typename T>
__global__ void RmsNormGradKernel(int64_t rows, int64_t len, const T* dy, const T* x, const T* rstd,
                                  const T* w, T* dx) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *xr = x + r * len, *gr = dy + r * len;
    T* o = dx + r * len;
    T rs = rstd[r];
    double sgx = 0;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
      T g = w ? gr[j] * w[j] : gr[j];
      sgx += static_cast<double>(g * xr[j] * rs);
    }
    T m = static_cast<T>(BlockAllReduce(sgx, SumD()) / len);
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
      T g = w ? gr[j] * w[j] : gr[j];
      o[j] = rs * (g - xr[j] * rs * m);
    }
  }
}

// dw[j] = sum over rows of dy * x * rstd: a thread per column, rows in order (coalesced).
template <typename T>
__global__ void RmsNormWeightGradKernel(int64_t rows, int64_t len, const T* dy, const T* x,
                                        const T* rstd, T* dw) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < len;
       j += int64_t(gridDim.x) * blockDim.x) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r)
      s += static_cast<double>(dy[r * len + j] * x[r * len + j] * rstd[r]);
    dw[j] = static_cast<T>(s);
  }
}

}  // namespace

cudaError_t LaunchRowNorm(ScalarType t, const RowNormGeom& q, double eps, const void* x,
                          const void* w, const void* b, void* y, void* mean, void* rstd,
                          cudaStream_t s) {
  if (q.rows == 0 || q.len == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    RowNormKernel<T><<<BlocksFor(q.rows), kNormThreads, 0, s>>>(
        q, eps, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b),
        static_cast<T*>(y), static_cast<T*>(mean), static_cast<T*>(rstd));
  });
  return cudaGetLastError();
}

cudaError_t LaunchRowNormGrad(ScalarType t, const RowNormGeom& q, const void* dy, const void* x,
                              const void* mean, const void* rstd, const void* w, void* dx, void* dw,
                              void* db, cudaStream_t s) {
  int64_t naff = q.groups * q.cpg;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    const T *g = static_cast<const T*>(dy), *xs = static_cast<const T*>(x),
            *m = static_cast<const T*>(mean), *rs = static_cast<const T*>(rstd);
    if (q.rows > 0 && q.len > 0)
      RowNormGradKernel<T><<<BlocksFor(q.rows), kNormThreads, 0, s>>>(
          q, g, xs, m, rs, static_cast<const T*>(w), static_cast<T*>(dx));
    // A block per affine index, its threads over the rows, one fixed-order reduction. (A thread
    // per column walking every row serially, used for inner == 1 before, took 627 us for a
    // 2048 x 256 layer_norm on the H200.)
    if ((dw || db) && naff > 0)
      AffineGradBlocksKernel<T><<<BlocksFor(naff), kNormThreads, 0, s>>>(
          q, g, xs, m, rs, static_cast<T*>(dw), static_cast<T*>(db));
  });
  return cudaGetLastError();
}

cudaError_t LaunchBatchNorm(ScalarType t, int64_t n, int64_t c, int64_t sp, bool training,
                            double eps, const void* x, const void* w, const void* b, const void* rm,
                            const void* rv, void* y, void* mean, void* invstd, void* uvar,
                            cudaStream_t s) {
  if (c == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    BatchNormKernel<T><<<BlocksFor(c), kNormThreads, 0, s>>>(
        n, c, sp, training, eps, static_cast<const T*>(x), static_cast<const T*>(w),
        static_cast<const T*>(b), static_cast<const T*>(rm), static_cast<const T*>(rv),
        static_cast<T*>(y), static_cast<T*>(mean), static_cast<T*>(invstd), static_cast<T*>(uvar));
  });
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormGrad(ScalarType t, int64_t n, int64_t c, int64_t sp, bool training,
                                const void* dy, const void* x, const void* w, const void* mean,
                                const void* invstd, void* dx, void* dw, void* db, cudaStream_t s) {
  if (c == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    BatchNormGradKernel<T><<<BlocksFor(c), kNormThreads, 0, s>>>(
        n, c, sp, training, static_cast<const T*>(dy), static_cast<const T*>(x),
        static_cast<const T*>(w), static_cast<const T*>(mean), static_cast<const T*>(invstd),
        static_cast<T*>(dx), static_cast<T*>(dw), static_cast<T*>(db));
  });
  return cudaGetLastError();
}

cudaError_t LaunchRmsNorm(ScalarType t, int64_t rows, int64_t len, double eps, const void* x,
                          const void* w, void* y, void* rstd, cudaStream_t s) {
  if (rows == 0 || len == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    RmsNormKernel<T><<<BlocksFor(rows), kNormThreads, 0, s>>>(
        rows, len, eps, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<T*>(y),
        static_cast<T*>(rstd));
  });
  return cudaGetLastError();
}

cudaError_t LaunchRmsNormGrad(ScalarType t, int64_t rows, int64_t len, const void* dy,
                              const void* x, const void* rstd, const void* w, void* dx, void* dw,
                              cudaStream_t s) {
  if (len == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    const T *g = static_cast<const T*>(dy), *xs = static_cast<const T*>(x),
            *rs = static_cast<const T*>(rstd);
    if (rows > 0)
      RmsNormGradKernel<T><<<BlocksFor(rows), kNormThreads, 0, s>>>(
          rows, len, g, xs, rs, static_cast<const T*>(w), static_cast<T*>(dx));
    if (dw)
      RmsNormWeightGradKernel<T>
          <<<GridFor(len), kThreads, 0, s>>>(rows, len, g, xs, rs, static_cast<T*>(dw));
  });
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
