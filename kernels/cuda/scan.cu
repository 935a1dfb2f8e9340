// Device code of the scan and ordering family (kernels/cuda/scan_launch.h). The scans run one
// thread per line with the CPU's arithmetic (floats accumulated in double, integers in int64; the
// recurrences are kernels/scan_lines.h's, which kernels/cpu/scan.cc runs too), so results match;
// the orderings run a stable CUB segmented sort of 64-bit order keys with the positions as values.
#include <cub/device/device_segmented_sort.cuh>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/scan_launch.h"
#include "kernels/scan_lines.h"

namespace oneflow_like {
namespace cuda {
namespace {

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

__device__ __forceinline__ int64_t LineBase(const ScanLines& L, int64_t l) {
  return (l / L.inner) * L.n * L.inner + l % L.inner;
}

#define OFL_GRID_STRIDE(i, total)                                               \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (total); \
       i += int64_t(blockDim.x) * gridDim.x)

template <typename T, bool kProd>
__global__ void CumScanKernel(ScanLines L, bool reverse, const T* x, T* out) {
  OFL_GRID_STRIDE(l, L.count()) {
    int64_t base = LineBase(L, l);
    Acc<T> acc = kProd ? 1 : 0;
    for (int64_t s = 0; s < L.n; ++s) {
      int64_t p = base + (reverse ? L.n - 1 - s : s) * L.inner;
      if constexpr (kProd)
        acc *= static_cast<Acc<T>>(x[p]);
      else
        acc += static_cast<Acc<T>>(x[p]);
      out[p] = static_cast<T>(acc);
    }
  }
}

// The line recurrences are kernels/scan_lines.h's, the CPU's own.
template <typename T>
__global__ void LogCumSumExpKernel(ScanLines L, const T* x, T* out) {
  OFL_GRID_STRIDE(l, L.count()) {
    scan_lines::LogCumSumExp(x, out, LineBase(L, l), L.inner, L.n);
  }
}

template <typename T, bool kLogCumSumExp>
__global__ void ScanGradKernel(ScanLines L, const T* xv, const T* ov, const T* gv, T* d) {
  OFL_GRID_STRIDE(l, L.count()) {
    if constexpr (kLogCumSumExp)
      scan_lines::LogCumSumExpGrad(xv, ov, gv, d, LineBase(L, l), L.inner, L.n);
    else
      scan_lines::CumprodGrad(xv, ov, gv, d, LineBase(L, l), L.inner, L.n);
  }
}

template <typename T, bool kMax>
__global__ void CumExtremeKernel(ScanLines L, const T* xv, T* o, int64_t* iv) {
  OFL_GRID_STRIDE(l, L.count()) {
    scan_lines::CumExtreme<kMax>(xv, o, iv, LineBase(L, l), L.inner, L.n);
  }
}

// ---- orderings ----------------------------------------------------------------------------

constexpr uint64_t kNanKey = ~uint64_t(0);

// An unsigned key whose order is the ascending order of the values: NaN above everything (and
// only NaN maps to kNanKey among floating types), -0 == +0.
template <typename T>
__device__ __forceinline__ uint64_t OrderKey(T v) {
  if constexpr (std::is_same_v<T, float>) {
    if (v != v) return kNanKey;
    uint32_t u = __float_as_uint(v == 0.0f ? 0.0f : v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  } else if constexpr (std::is_same_v<T, double>) {
    if (v != v) return kNanKey;
    uint64_t u = static_cast<uint64_t>(__double_as_longlong(v == 0.0 ? 0.0 : v));
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ 0x8000000000000000ull;
  } else {
    return static_cast<uint64_t>(v);
  }
}

template <typename T>
__global__ void KeysKernel(ScanLines L, bool desc, const T* x, uint64_t* keys, int64_t* pos) {
  OFL_GRID_STRIDE(e, L.count() * L.n) {
    int64_t l = e / L.n, j = e % L.n;
    uint64_t k = OrderKey(x[LineBase(L, l) + j * L.inner]);
    keys[e] = desc ? ~k : k;
    pos[e] = j;
  }
}

__global__ void OffsetsKernel(int64_t count, int64_t n, int64_t* off) {
  OFL_GRID_STRIDE(l, count + 1) off[l] = l * n;
}

template <typename T>
__global__ void GatherFirstKernel(ScanLines L, int64_t k, const T* x, const int64_t* sorted_pos,
                                  T* out, int64_t* idx) {
  OFL_GRID_STRIDE(e, L.count() * k) {
    int64_t l = e / k, j = e % k;
    int64_t i = sorted_pos[l * L.n + j];
    int64_t o = (l / L.inner) * k * L.inner + l % L.inner + j * L.inner;
    out[o] = x[LineBase(L, l) + i * L.inner];
    idx[o] = i;
  }
}

template <typename T>
__global__ void MedianPickKernel(ScanLines L, const T* x, const uint64_t* sorted_keys,
                                 const int64_t* sorted_pos, T* out, int64_t* idx) {
  OFL_GRID_STRIDE(l, L.count()) {
    int64_t m = L.n;  // non-NaN values: NaN keys sort last
    if constexpr (std::is_floating_point_v<T>)
      while (m > 0 && sorted_keys[l * L.n + m - 1] == kNanKey) --m;
    int64_t pick = m == 0 ? 0 : sorted_pos[l * L.n + (m - 1) / 2];
    out[l] = x[LineBase(L, l) + pick * L.inner];
    idx[l] = pick;
  }
}

// Scratch layout: keys in/out, positions in/out, offsets, then CUB's own storage.
struct OrderScratch {
  uint64_t *keys_in, *keys_out;
  int64_t *pos_in, *pos_out, *offsets;
  void* cub;
  size_t cub_bytes;
};

size_t Align256(size_t b) {
  return (b + 255) & ~size_t(255);
}

size_t CubBytes(const ScanLines& L) {
  size_t bytes = 0;
  cub::DeviceSegmentedSort::StableSortPairs(
      nullptr, bytes, static_cast<const uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
      static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), L.count() * L.n,
      L.count(), static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr));
  return bytes;
}

// `temp` holds OrderTempBytes(L) (temp_bytes): CUB gets what follows the buffers.
OrderScratch Carve(const ScanLines& L, void* temp, size_t temp_bytes) {
  size_t items = static_cast<size_t>(L.count() * L.n);
  char* p = static_cast<char*>(temp);
  OrderScratch s;
  s.keys_in = reinterpret_cast<uint64_t*>(p);
  p += Align256(items * 8);
  s.keys_out = reinterpret_cast<uint64_t*>(p);
  p += Align256(items * 8);
  s.pos_in = reinterpret_cast<int64_t*>(p);
  p += Align256(items * 8);
  s.pos_out = reinterpret_cast<int64_t*>(p);
  p += Align256(items * 8);
  s.offsets = reinterpret_cast<int64_t*>(p);
  p += Align256((L.count() + 1) * 8);
  s.cub = p;
  s.cub_bytes = temp_bytes - static_cast<size_t>(p - static_cast<char*>(temp));
  return s;
}

template <typename T>
cudaError_t SortLines(const ScanLines& L, bool desc, const T* x, const OrderScratch& s,
                      cudaStream_t stream) {
  int64_t items = L.count() * L.n;
  KeysKernel<T><<<GridFor(items), kThreads, 0, stream>>>(L, desc, x, s.keys_in, s.pos_in);
  OffsetsKernel<<<GridFor(L.count() + 1), kThreads, 0, stream>>>(L.count(), L.n, s.offsets);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  size_t bytes = s.cub_bytes;
  return cub::DeviceSegmentedSort::StableSortPairs(s.cub, bytes, s.keys_in, s.keys_out, s.pos_in,
                                                   s.pos_out, items, L.count(), s.offsets,
                                                   s.offsets + 1, stream);
}

}  // namespace

bool ScanNumeric(ScalarType t) {
  return t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI16 ||
         t == ScalarType::kI32 || t == ScalarType::kI64 || t == ScalarType::kF32 ||
         t == ScalarType::kF64;
}
bool ScanFloat(ScalarType t) {
  return t == ScalarType::kF32 || t == ScalarType::kF64;
}
bool ScanNumericBool(ScalarType t) {
  return ScanNumeric(t) || t == ScalarType::kBool;
}

cudaError_t LaunchCumScan(ScalarType t, bool prod, bool reverse, const ScanLines& L, const void* x,
                          void* out, cudaStream_t s) {
  if (L.count() == 0 || L.n == 0) return cudaSuccess;
  OFL_CU_SWITCH_NUMERIC(t, {
    auto xi = static_cast<const scalar_t*>(x);
    auto o = static_cast<scalar_t*>(out);
    if (prod)
      CumScanKernel<scalar_t, true><<<GridFor(L.count()), kThreads, 0, s>>>(L, reverse, xi, o);
    else
      CumScanKernel<scalar_t, false><<<GridFor(L.count()), kThreads, 0, s>>>(L, reverse, xi, o);
  });
  return cudaGetLastError();
}

cudaError_t LaunchLogCumSumExp(ScalarType t, const ScanLines& L, const void* x, void* out,
                               cudaStream_t s) {
  if (L.count() == 0 || L.n == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, LogCumSumExpKernel<scalar_t><<<GridFor(L.count()), kThreads, 0, s>>>(
                             L, static_cast<const scalar_t*>(x), static_cast<scalar_t*>(out)));
  return cudaGetLastError();
}

cudaError_t LaunchScanGrad(ScalarType t, bool logcumsumexp, const ScanLines& L, const void* x,
                           const void* out, const void* g, void* dx, cudaStream_t s) {
  if (L.count() == 0 || L.n == 0) return cudaSuccess;
  OFL_CU_SWITCH_FLOAT(t, {
    auto xi = static_cast<const scalar_t*>(x);
    auto oi = static_cast<const scalar_t*>(out);
    auto gi = static_cast<const scalar_t*>(g);
    auto d = static_cast<scalar_t*>(dx);
    if (logcumsumexp)
      ScanGradKernel<scalar_t, true><<<GridFor(L.count()), kThreads, 0, s>>>(L, xi, oi, gi, d);
    else
      ScanGradKernel<scalar_t, false><<<GridFor(L.count()), kThreads, 0, s>>>(L, xi, oi, gi, d);
  });
  return cudaGetLastError();
}

cudaError_t LaunchCumExtreme(ScalarType t, bool max, const ScanLines& L, const void* x, void* out,
                             int64_t* idx, cudaStream_t s) {
  if (L.count() == 0 || L.n == 0) return cudaSuccess;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, {
    auto xi = static_cast<const scalar_t*>(x);
    auto o = static_cast<scalar_t*>(out);
    if (max)
      CumExtremeKernel<scalar_t, true><<<GridFor(L.count()), kThreads, 0, s>>>(L, xi, o, idx);
    else
      CumExtremeKernel<scalar_t, false><<<GridFor(L.count()), kThreads, 0, s>>>(L, xi, o, idx);
  });
  return cudaGetLastError();
}

size_t OrderTempBytes(const ScanLines& L) {
  size_t items = static_cast<size_t>(L.count() * L.n);
  return 4 * Align256(items * 8) + Align256((L.count() + 1) * 8) + CubBytes(L);
}

cudaError_t LaunchOrder(ScalarType t, bool descending, const ScanLines& L, int64_t k, const void* x,
                        void* out, int64_t* idx, void* temp, size_t temp_bytes, cudaStream_t s) {
  if (L.count() == 0 || k == 0) return cudaSuccess;
  if (temp_bytes < OrderTempBytes(L)) return cudaErrorInvalidValue;
  OrderScratch sc = Carve(L, temp, temp_bytes);
  cudaError_t e = cudaSuccess;
  OFL_CU_SWITCH_NUMERIC_BOOL(t, {
    auto xi = static_cast<const scalar_t*>(x);
    e = SortLines(L, descending, xi, sc, s);
    if (e == cudaSuccess)
      GatherFirstKernel<scalar_t><<<GridFor(L.count() * k), kThreads, 0, s>>>(
          L, k, xi, sc.pos_out, static_cast<scalar_t*>(out), idx);
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

cudaError_t LaunchNanMedian(ScalarType t, const ScanLines& L, const void* x, void* out,
                            int64_t* idx, void* temp, size_t temp_bytes, cudaStream_t s) {
  if (L.count() == 0 || L.n == 0) return cudaSuccess;
  if (temp_bytes < OrderTempBytes(L)) return cudaErrorInvalidValue;
  OrderScratch sc = Carve(L, temp, temp_bytes);
  cudaError_t e = cudaSuccess;
  OFL_CU_SWITCH_NUMERIC(t, {
    auto xi = static_cast<const scalar_t*>(x);
    e = SortLines(L, false, xi, sc, s);
    if (e == cudaSuccess)
      MedianPickKernel<scalar_t><<<GridFor(L.count()), kThreads, 0, s>>>(
          L, xi, sc.keys_out, sc.pos_out, static_cast<scalar_t*>(out), idx);
  });
  return e != cudaSuccess ? e : cudaGetLastError();
}

}  // namespace cuda
}  // namespace oneflow_like
