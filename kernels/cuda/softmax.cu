// Device code of the softmax family. Rows (inner == 1): one block per row, max and sum by
// deterministic block reductions, one read pass for each and one write pass. Columns
// (inner > 1): one thread per (outer, inner) column walking d.
#include <cfloat>

#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

constexpr int kRowThreads = 256;

struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

__device__ __forceinline__ float Exp(float x) {
  return expf(x);
}
__device__ __forceinline__ double Exp(double x) {
  return exp(x);
}
__device__ __forceinline__ float Log(float x) {
  return logf(x);
}
__device__ __forceinline__ double Log(double x) {
  return log(x);
}
template <typename T>
__device__ __forceinline__ T Lowest() {
  return -INFINITY;
}

template <typename T, bool kLog>
__global__ void SoftmaxRowsKernel(const T* x, T* y, int64_t outer, int64_t d) {
  for (int64_t r = blockIdx.x; r < outer; r += gridDim.x) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    T m = Lowest<T>();
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) m = MaxOp()(m, xr[j]);
    m = BlockAllReduce(m, MaxOp());
    T s = 0;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += Exp(xr[j] - m);
    s = BlockAllReduce(s, SumOp());
    if (kLog) {
      T ls = Log(s);
      for (int64_t j = threadIdx.x; j < d; j += blockDim.x) yr[j] = xr[j] - m - ls;
    } else {
      T inv = T(1) / s;
      for (int64_t j = threadIdx.x; j < d; j += blockDim.x) yr[j] = Exp(xr[j] - m) * inv;
    }
  }
}

template <typename T, bool kLog>
__global__ void SoftmaxColsKernel(const T* x, T* y, int64_t outer, int64_t d, int64_t inner) {
  int64_t cols = outer * inner;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < cols;
       c += int64_t(gridDim.x) * blockDim.x) {
    int64_t o = c / inner, i = c % inner, base = o * d * inner + i;
    T m = Lowest<T>();
    for (int64_t k = 0; k < d; ++k) m = MaxOp()(m, x[base + k * inner]);
    T s = 0;
    for (int64_t k = 0; k < d; ++k) s += Exp(x[base + k * inner] - m);
    if (kLog) {
      T ls = Log(s);
      for (int64_t k = 0; k < d; ++k) y[base + k * inner] = x[base + k * inner] - m - ls;
    } else {
      T inv = T(1) / s;
      for (int64_t k = 0; k < d; ++k) y[base + k * inner] = Exp(x[base + k * inner] - m) * inv;
    }
  }
}

template <typename T, bool kLog>
__global__ void SoftmaxGradRowsKernel(const T* dy, const T* y, T* dx, int64_t outer, int64_t d) {
  for (int64_t r = blockIdx.x; r < outer; r += gridDim.x) {
    const T *g = dy + r * d, *yr = y + r * d;
    T* o = dx + r * d;
    T s = 0;
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) s += kLog ? g[j] : g[j] * yr[j];
    s = BlockAllReduce(s, SumOp());
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      o[j] = kLog ? g[j] - Exp(yr[j]) * s : yr[j] * (g[j] - s);
  }
}

template <typename T, bool kLog>
__global__ void SoftmaxGradColsKernel(const T* dy, const T* y, T* dx, int64_t outer, int64_t d,
                                      int64_t inner) {
  int64_t cols = outer * inner;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < cols;
       c += int64_t(gridDim.x) * blockDim.x) {
    int64_t o = c / inner, i = c % inner, base = o * d * inner + i;
    T s = 0;
    for (int64_t k = 0; k < d; ++k) {
      int64_t p = base + k * inner;
      s += kLog ? dy[p] : dy[p] * y[p];
    }
    for (int64_t k = 0; k < d; ++k) {
      int64_t p = base + k * inner;
      dx[p] = kLog ? dy[p] - Exp(y[p]) * s : y[p] * (dy[p] - s);
    }
  }
}

unsigned RowGrid(int64_t outer) {
  return static_cast<unsigned>(outer < (1 << 20) ? outer : (1 << 20));
}

template <typename T, bool kLog>
void Forward(int64_t outer, int64_t d, int64_t inner, const T* x, T* y, cudaStream_t s) {
  if (inner == 1)
    SoftmaxRowsKernel<T, kLog><<<RowGrid(outer), kRowThreads, 0, s>>>(x, y, outer, d);
  else
    SoftmaxColsKernel<T, kLog><<<GridFor(outer * inner), kThreads, 0, s>>>(x, y, outer, d, inner);
}

template <typename T, bool kLog>
void Backward(int64_t outer, int64_t d, int64_t inner, const T* dy, const T* y, T* dx,
              cudaStream_t s) {
  if (inner == 1)
    SoftmaxGradRowsKernel<T, kLog><<<RowGrid(outer), kRowThreads, 0, s>>>(dy, y, dx, outer, d);
  else
    SoftmaxGradColsKernel<T, kLog>
        <<<GridFor(outer * inner), kThreads, 0, s>>>(dy, y, dx, outer, d, inner);
}

}  // namespace

bool SoftmaxSupported(ScalarType t) {
  return t == ScalarType::kF32 || t == ScalarType::kF64;
}

cudaError_t LaunchSoftmax(ScalarType t, bool log, int64_t outer, int64_t d, int64_t inner,
                          const void* x, void* y, cudaStream_t stream) {
  if (outer * d * inner == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    const scalar_t* xp = static_cast<const scalar_t*>(x);
    scalar_t* yp = static_cast<scalar_t*>(y);
    if (log)
      Forward<scalar_t, true>(outer, d, inner, xp, yp, stream);
    else
      Forward<scalar_t, false>(outer, d, inner, xp, yp, stream);
  });
  return cudaGetLastError();
}

cudaError_t LaunchSoftmaxGrad(ScalarType t, bool log, int64_t outer, int64_t d, int64_t inner,
                              const void* dy, const void* y, void* dx, cudaStream_t stream) {
  if (outer * d * inner == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    const scalar_t* g = static_cast<const scalar_t*>(dy);
    const scalar_t* yp = static_cast<const scalar_t*>(y);
    scalar_t* o = static_cast<scalar_t*>(dx);
    if (log)
      Backward<scalar_t, true>(outer, d, inner, g, yp, o, stream);
    else
      Backward<scalar_t, false>(outer, d, inner, g, yp, o, stream);
  });
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
