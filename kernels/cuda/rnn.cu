// Device code of the fused recurrent cells (kernels/cpu/rnn.cc's formulas; f32/f64, contiguous):
// one thread per (batch row, hidden unit) reading that unit's gates.
#include "kernels/cuda/elementwise.cuh"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
__device__ __forceinline__ T Sig(T v) {
  return T(1) / (T(1) + exp(-v));
}

#define OFL_RNN_LOOP(n)                                                     \
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < (n); \
       k += int64_t(gridDim.x) * blockDim.x)

template <typename T>
__global__ void LstmCellKernel(int64_t B, int64_t H, const T* g, const T* c, T* h1, T* c1) {
  OFL_RNN_LOOP(B * H) {
    int64_t b = k / H, j = k % H;
    const T* gr = g + b * 4 * H;
    T i = Sig(gr[j]), f = Sig(gr[H + j]), gg = tanh(gr[2 * H + j]), o = Sig(gr[3 * H + j]);
    T cn = f * c[k] + i * gg;
    c1[k] = cn;
    h1[k] = o * tanh(cn);
  }
}

template <typename T>
__global__ void LstmCellGradKernel(int64_t B, int64_t H, const T* dh, const T* dc1, const T* g,
                                   const T* c, const T* c1, T* dg, T* dc) {
  OFL_RNN_LOOP(B * H) {
    int64_t b = k / H, j = k % H;
    const T* gr = g + b * 4 * H;
    T* dgr = dg + b * 4 * H;
    T i = Sig(gr[j]), f = Sig(gr[H + j]), gg = tanh(gr[2 * H + j]), o = Sig(gr[3 * H + j]),
      tc = tanh(c1[k]);
    T dct = dc1[k] + dh[k] * o * (T(1) - tc * tc);
    dgr[j] = dct * gg * i * (T(1) - i);
    dgr[H + j] = dct * c[k] * f * (T(1) - f);
    dgr[2 * H + j] = dct * i * (T(1) - gg * gg);
    dgr[3 * H + j] = dh[k] * tc * o * (T(1) - o);
    dc[k] = dct * f;
  }
}

template <typename T>
__global__ void GruCellKernel(int64_t B, int64_t H, const T* xw, const T* gh, const T* h, T* h1) {
  OFL_RNN_LOOP(B * H) {
    int64_t b = k / H, j = k % H;
    const T *x = xw + b * 3 * H, *hh = gh + b * 3 * H;
    T r = Sig(x[j] + hh[j]), z = Sig(x[H + j] + hh[H + j]),
      n = tanh(x[2 * H + j] + r * hh[2 * H + j]);
    h1[k] = n + z * (h[k] - n);
  }
}

template <typename T>
__global__ void GruCellGradKernel(int64_t B, int64_t H, const T* dh1, const T* xw, const T* gh,
                                  const T* h, T* dxw, T* dgh, T* dh) {
  OFL_RNN_LOOP(B * H) {
    int64_t b = k / H, j = k % H;
    const T *x = xw + b * 3 * H, *hh = gh + b * 3 * H;
    T *dx = dxw + b * 3 * H, *dg = dgh + b * 3 * H;
    T r = Sig(x[j] + hh[j]), z = Sig(x[H + j] + hh[H + j]),
      n = tanh(x[2 * H + j] + r * hh[2 * H + j]);
    T d = dh1[k];
    T dn = d * (T(1) - z) * (T(1) - n * n);
    T dz = d * (h[k] - n) * z * (T(1) - z);
    T dr = dn * hh[2 * H + j] * r * (T(1) - r);
    dx[j] = dg[j] = dr;
    dx[H + j] = dg[H + j] = dz;
    dx[2 * H + j] = dn;
    dg[2 * H + j] = dn * r;
    dh[k] = d * z;
  }
}

}  // namespace

cudaError_t LaunchLstmCell(ScalarType t, bool grad, int64_t B, int64_t H,
                           const std::vector<const void*>& in, const std::vector<void*>& out,
                           cudaStream_t s) {
  if (B * H == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    auto I = [&](int i) { return static_cast<const T*>(in[i]); };
    auto O = [&](int i) { return static_cast<T*>(out[i]); };
    if (grad)
      LstmCellGradKernel<T>
          <<<GridFor(B * H), kThreads, 0, s>>>(B, H, I(0), I(1), I(2), I(3), I(4), O(0), O(1));
    else
      LstmCellKernel<T><<<GridFor(B * H), kThreads, 0, s>>>(B, H, I(0), I(1), O(0), O(1));
  });
  return cudaGetLastError();
}

cudaError_t LaunchGruCell(ScalarType t, bool grad, int64_t B, int64_t H,
                          const std::vector<const void*>& in, const std::vector<void*>& out,
                          cudaStream_t s) {
  if (B * H == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    auto I = [&](int i) { return static_cast<const T*>(in[i]); };
    auto O = [&](int i) { return static_cast<T*>(out[i]); };
    if (grad)
      GruCellGradKernel<T>
          <<<GridFor(B * H), kThreads, 0, s>>>(B, H, I(0), I(1), I(2), I(3), O(0), O(1), O(2));
    else
      GruCellKernel<T><<<GridFor(B * H), kThreads, 0, s>>>(B, H, I(0), I(1), I(2), O(0));
  });
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
