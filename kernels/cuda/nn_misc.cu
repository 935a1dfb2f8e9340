// Device code of the NN miscellany (f32/f64): embedding (+grad), dropout, attention bias.
// embedding_grad is deterministic without float atomics: a stable radix sort (CUB) of the
// indices with their positions groups each weight row's positions in ascending order; the block
// that owns a row's first sorted position adds dy's rows in that order, which is the CPU's order,
// so the result is the CPU's bit for bit.
#include <cub/device/device_radix_sort.cuh>

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/rng.h"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
__global__ void EmbeddingKernel(int64_t n, int64_t dim, const int64_t* idx, const T* w, T* out,
                                const unsigned long long* flag) {
  if (FlagSet(flag)) return;
  int64_t total = n * dim;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x)
    out[e] = w[idx[e / dim] * dim + e % dim];
}

template <typename T>
__global__ void ZeroKernel(T* p, int64_t n, const unsigned long long* flag) {
  if (FlagSet(flag)) return;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = T(0);
}

__global__ void IotaKernel(int64_t* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = i;
}

// keys: sorted row indices; pos: their positions in the input (ascending within a row).
template <typename T>
__global__ void EmbeddingGradRowsKernel(int64_t n, int64_t dim, int64_t pad, const int64_t* keys,
                                        const int64_t* pos, const T* dy, T* dw,
                                        const unsigned long long* flag) {
  if (FlagSet(flag)) return;
  for (int64_t k = blockIdx.x; k < n; k += gridDim.x) {
    int64_t row = keys[k];
    if ((k > 0 && keys[k - 1] == row) || row == pad) continue;  // not the first position of its row
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      T acc = T(0);
      for (int64_t m = k; m < n && keys[m] == row; ++m) acc += dy[pos[m] * dim + j];
      dw[row * dim + j] = acc;
    }
  }
}

template <typename T>
__global__ void DropoutKernel(int64_t n, double p, uint64_t seed, T scale, const T* x, T* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = RngUniform(seed, static_cast<uint64_t>(i)) >= p ? x[i] * scale : T(0);
}

template <typename T>
__global__ void AttnBiasKernel(int64_t numel, int64_t L, int64_t S, bool causal, bool mask_is_bool,
                               T* out, const void* mask, OffsetCalc<1> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t col = i % S, row = (i / S) % L;
    T v = causal && col > row ? T(-INFINITY) : T(0);  // causal: top-left aligned (tril)
    if (mask) {
      int64_t off[1];
      calc.Get(i, off);
      if (mask_is_bool) {
        if (!static_cast<const bool*>(mask)[off[0]]) v = T(-INFINITY);
      } else {
        v += static_cast<const T*>(mask)[off[0]];
      }
    }
    out[i] = v;
  }
}

// Bits needed for keys in [0, rows).
int KeyBits(int64_t rows) {
  int b = 1;
  while (b < 63 && (int64_t(1) << b) < rows) ++b;
  return b;
}
size_t Align256(size_t b) {
  return (b + 255) & ~size_t(255);
}
size_t SortTempBytes(int64_t n, int64_t rows) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
      static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), n, 0, KeyBits(rows));
  return bytes;
}

}  // namespace

cudaError_t LaunchEmbedding(ScalarType t, int64_t n, int64_t dim, const int64_t* idx, const void* w,
                            void* out, const unsigned long long* flag, cudaStream_t s) {
  if (n * dim == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(
      t, EmbeddingKernel<scalar_t><<<GridFor(n * dim), kThreads, 0, s>>>(
             n, dim, idx, static_cast<const scalar_t*>(w), static_cast<scalar_t*>(out), flag));
  return cudaGetLastError();
}

size_t EmbeddingGradScratchBytes(int64_t n, int64_t rows) {
  if (n <= 0) return 0;
  return 3 * Align256(sizeof(int64_t) * n) + Align256(SortTempBytes(n, rows));
}

cudaError_t LaunchEmbeddingGrad(ScalarType t, int64_t n, int64_t rows, int64_t dim, int64_t pad,
                                const int64_t* idx, const void* dy, void* dw,
                                const unsigned long long* flag, void* scratch, size_t scratch_bytes,
                                cudaStream_t s) {
  if (rows * dim == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, ZeroKernel<scalar_t><<<GridFor(rows * dim), kThreads, 0, s>>>(
                             static_cast<scalar_t*>(dw), rows * dim, flag));
  if (n == 0) return cudaGetLastError();
  char* p = static_cast<char*>(scratch);
  size_t a = Align256(sizeof(int64_t) * n);
  int64_t *keys = reinterpret_cast<int64_t*>(p), *pos_in = reinterpret_cast<int64_t*>(p + a),
          *pos = reinterpret_cast<int64_t*>(p + 2 * a);
  size_t temp = scratch_bytes - 3 * a;
  IotaKernel<<<GridFor(n), kThreads, 0, s>>>(pos_in, n);
  cudaError_t e = cub::DeviceRadixSort::SortPairs(p + 3 * a, temp, idx, keys, pos_in, pos, n, 0,
                                                  KeyBits(rows), s);
  if (e != cudaSuccess) return e;
  unsigned blocks = static_cast<unsigned>(n < (1 << 20) ? n : (1 << 20));
  int threads = dim >= 256 ? 256 : static_cast<int>((dim + 31) / 32 * 32);
  OFL_CU_SWITCH_FLOAT(t, EmbeddingGradRowsKernel<scalar_t><<<blocks, threads, 0, s>>>(
                             n, dim, pad, keys, pos, static_cast<const scalar_t*>(dy),
                             static_cast<scalar_t*>(dw), flag));
  return cudaGetLastError();
}

cudaError_t LaunchDropout(ScalarType t, int64_t n, double p, uint64_t seed, const void* x,
                          void* out, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    using T = scalar_t;
    T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
    DropoutKernel<T><<<GridFor(n), kThreads, 0, s>>>(n, p, seed, scale, static_cast<const T*>(x),
                                                     static_cast<T*>(out));
  });
  return cudaGetLastError();
}

cudaError_t LaunchAttnBias(ScalarType t, int64_t L, int64_t S, bool causal, bool mask_is_bool,
                           const LoopShape& loop, const Operand& out, const Operand* mask,
                           cudaStream_t s) {
  if (loop.numel == 0 || L == 0 || S == 0) return cudaSuccess;
  OffsetCalc<1> calc{};
  if (mask) {
    const Operand* ops[1] = {mask};
    calc = MakeOffsetCalc<1>(loop, ops);
  }
  OFL_CU_SWITCH_FLOAT(t, AttnBiasKernel<scalar_t><<<GridFor(loop.numel), kThreads, 0, s>>>(
                             loop.numel, L, S, causal, mask_is_bool,
                             static_cast<scalar_t*>(out.data), mask ? mask->data : nullptr, calc));
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
