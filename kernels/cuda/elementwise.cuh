// Device-side building blocks shared by the .cu files: 16-bit float storage types with the CPU's
// conversion rules, dtype dispatch, offset calculation for strided operands, and grid-stride
// launches (vectorised 16-byte loads when every operand is contiguous and aligned).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/launch.h"

namespace oneflow_like {
namespace cuda {

// Storage-only 16-bit floats; arithmetic goes through float, as on the CPU.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
template <typename T>
struct IsHalfLike : std::false_type {};
template <>
struct IsHalfLike<Half> : std::true_type {};
template <>
struct IsHalfLike<BFloat16> : std::true_type {};

__device__ __forceinline__ float AsFloat(Half h) {
  return __half2float(__ushort_as_half(h.bits));
}
__device__ __forceinline__ float AsFloat(BFloat16 b) {
  return __uint_as_float(uint32_t(b.bits) << 16);
}
template <typename T>
__device__ __forceinline__ float AsFloat(T v) {
  return static_cast<float>(v);
}

template <typename T>
__device__ __forceinline__ T FromFloat(float f);
template <>
__device__ __forceinline__ Half FromFloat<Half>(float f) {
  return Half{__half_as_ushort(__float2half_rn(f))};
}
template <>
__device__ __forceinline__ BFloat16 FromFloat<BFloat16>(float f) {
  uint32_t u =
      __float_as_uint(f);  // same rounding as base/dtype.h: NaN -> 0x7fc0, else nearest even
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{0x7fc0};
  u += 0x7fffu + ((u >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>(u >> 16)};
}

// The CPU's Convert (kernels/cpu/copy.cc): to bool is `float(v) != 0`, 16-bit floats go through
// float, floating to a narrower integer goes through int64 (wraps: -2.0 -> uint8 254, as PyTorch;
// a direct conversion saturates on the device and is undefined in C++).
template <typename TO, typename TI>
__device__ __forceinline__ TO Convert(TI v) {
  constexpr bool to_narrow_int = std::is_integral_v<TO> && sizeof(TO) < 8;
  if constexpr (std::is_same_v<TO, bool>)
    return AsFloat(v) != 0.0f;
  else if constexpr (IsHalfLike<TO>::value)
    return FromFloat<TO>(AsFloat(v));
  else if constexpr (IsHalfLike<TI>::value && to_narrow_int)
    return static_cast<TO>(static_cast<int64_t>(AsFloat(v)));
  else if constexpr (IsHalfLike<TI>::value)
    return static_cast<TO>(AsFloat(v));
  else if constexpr (std::is_floating_point_v<TI> && to_narrow_int)
    return static_cast<TO>(static_cast<int64_t>(v));
  else
    return static_cast<TO>(v);
}

// Dtype sets of the elementwise op tables: numeric, float, integer+bool, numeric+bool, bool.
enum Set { N, F, IB, NB, B };
inline bool InSet(Set k, ScalarType t) {
  bool fl = t == ScalarType::kF32 || t == ScalarType::kF64;
  bool in = t == ScalarType::kU8 || t == ScalarType::kI8 || t == ScalarType::kI16 ||
            t == ScalarType::kI32 || t == ScalarType::kI64;
  switch (k) {
    case N: return fl || in;
    case F: return fl;
    case IB: return in || t == ScalarType::kBool;
    case NB: return fl || in || t == ScalarType::kBool;
    case B: return t == ScalarType::kBool;
  }
  return false;
}

// Host-side dispatch from ScalarType to a C++ type; `scalar_t` is bound in the body.
#define OFL_CU_CASE(E, T, ...) \
  case ScalarType::E: {        \
    using scalar_t = T;        \
    __VA_ARGS__;               \
    break;                     \
  }
// clang-format off
#define OFL_CU_SWITCH_ALL(t, ...)                                                  \
  switch (t) {                                                                     \
    OFL_CU_CASE(kBool, bool, __VA_ARGS__) OFL_CU_CASE(kU8, uint8_t, __VA_ARGS__)   \
    OFL_CU_CASE(kI8, int8_t, __VA_ARGS__) OFL_CU_CASE(kI32, int32_t, __VA_ARGS__)  \
    OFL_CU_CASE(kI64, int64_t, __VA_ARGS__) OFL_CU_CASE(kF16, Half, __VA_ARGS__)   \
    OFL_CU_CASE(kBF16, BFloat16, __VA_ARGS__) OFL_CU_CASE(kF32, float, __VA_ARGS__) \
    OFL_CU_CASE(kF64, double, __VA_ARGS__) OFL_CU_CASE(kI16, int16_t, __VA_ARGS__) \
    default: break;                                                                \
  }
// clang-format on
// The CPU's OFL_SWITCH_NUMERIC set: u8, i8, i16, i32, i64, f32, f64.
// clang-format off
#define OFL_CU_SWITCH_NUMERIC(t, ...)                                              \
  switch (t) {                                                                     \
    OFL_CU_CASE(kU8, uint8_t, __VA_ARGS__) OFL_CU_CASE(kI8, int8_t, __VA_ARGS__)   \
    OFL_CU_CASE(kI32, int32_t, __VA_ARGS__) OFL_CU_CASE(kI64, int64_t, __VA_ARGS__) \
    OFL_CU_CASE(kF32, float, __VA_ARGS__) OFL_CU_CASE(kF64, double, __VA_ARGS__)   \
    OFL_CU_CASE(kI16, int16_t, __VA_ARGS__) default: break;                        \
  }
// clang-format on
// clang-format off
#define OFL_CU_SWITCH_FLOAT(t, ...)                                                \
  switch (t) {                                                                     \
    OFL_CU_CASE(kF32, float, __VA_ARGS__) OFL_CU_CASE(kF64, double, __VA_ARGS__)   \
    default: break;                                                                \
  }
// clang-format on

// Element offsets of N operands for a linear index over a LoopShape (row-major).
template <int N>
struct OffsetCalc {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];
  __device__ __forceinline__ void Get(int64_t i, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d >= ndim) continue;
      int64_t idx = i % sizes[d];
      i /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[k][d];
    }
  }
};

template <int N>
inline OffsetCalc<N> MakeOffsetCalc(const LoopShape& loop, const Operand* const (&ops)[N]) {
  OffsetCalc<N> c{};
  c.ndim = loop.ndim;
  for (int d = 0; d < loop.ndim; ++d) {
    c.sizes[d] = loop.sizes[d];
    for (int k = 0; k < N; ++k) c.strides[k][d] = ops[k]->strides[d];
  }
  return c;
}

constexpr int kThreads = 256;
inline unsigned GridFor(int64_t work) {
  int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > (1 << 16) ? (1 << 16) : blocks));
}
inline bool Aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <typename T, int V>
struct alignas(sizeof(T) * V) VecOf {
  T v[V];
};

// out[i] = f(a[i]) (N = 1) or f(a[i], b[i]) (N = 2) over contiguous operands. With `vec`
// (all pointers 16-byte aligned) the body is done 16 bytes at a time, then a scalar tail.
template <typename TO, typename TI, typename F>
__global__ void ContigUnaryKernel(TO* out, const TI* a, int64_t n, bool vec, F f) {
  constexpr int V = 16 / (sizeof(TO) > sizeof(TI) ? sizeof(TO) : sizeof(TI));
  int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x,
          step = int64_t(gridDim.x) * blockDim.x;
  int64_t head = 0;
  if (vec) {
    int64_t nv = n / V;
    for (int64_t i = tid; i < nv; i += step) {
      VecOf<TI, V> x = reinterpret_cast<const VecOf<TI, V>*>(a)[i];
      VecOf<TO, V> y;
#pragma unroll
      for (int j = 0; j < V; ++j) y.v[j] = f(x.v[j]);
      reinterpret_cast<VecOf<TO, V>*>(out)[i] = y;
    }
    head = nv * V;
  }
  for (int64_t i = head + tid; i < n; i += step) out[i] = f(a[i]);
}

template <typename T, typename F>
__global__ void ContigBinaryKernel(T* out, const T* a, const T* b, int64_t n, bool vec, F f) {
  constexpr int V = 16 / sizeof(T);
  int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x,
          step = int64_t(gridDim.x) * blockDim.x;
  int64_t head = 0;
  if (vec) {
    int64_t nv = n / V;
    for (int64_t i = tid; i < nv; i += step) {
      VecOf<T, V> x = reinterpret_cast<const VecOf<T, V>*>(a)[i];
      VecOf<T, V> y = reinterpret_cast<const VecOf<T, V>*>(b)[i];
      VecOf<T, V> z;
#pragma unroll
      for (int j = 0; j < V; ++j) z.v[j] = f(x.v[j], y.v[j]);
      reinterpret_cast<VecOf<T, V>*>(out)[i] = z;
    }
    head = nv * V;
  }
  for (int64_t i = head + tid; i < n; i += step) out[i] = f(a[i], b[i]);
}

template <typename TO, typename TI, typename F>
__global__ void StridedUnaryKernel(TO* out, const TI* a, int64_t n, OffsetCalc<2> calc, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2];
    calc.Get(i, off);
    out[off[0]] = f(a[off[1]]);
  }
}

template <typename T, typename F>
__global__ void StridedBinaryKernel(T* out, const T* a, const T* b, int64_t n, OffsetCalc<3> calc,
                                    F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    calc.Get(i, off);
    out[off[0]] = f(a[off[1]], b[off[2]]);
  }
}

// Launches out = f(in) over `loop`, picking the contiguous or strided kernel.
template <typename TO, typename TI, typename F>
cudaError_t LaunchUnaryLoop(const LoopShape& loop, const Operand& out, const Operand& in, F f,
                            cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  TO* o = static_cast<TO*>(out.data);
  const TI* a = static_cast<const TI*>(in.data);
  if (out.contiguous && in.contiguous) {
    bool vec = Aligned16(o) && Aligned16(a);
    constexpr int V = 16 / (sizeof(TO) > sizeof(TI) ? sizeof(TO) : sizeof(TI));
    ContigUnaryKernel<TO, TI, F>
        <<<GridFor(vec ? (loop.numel + V - 1) / V : loop.numel), kThreads, 0, s>>>(o, a, loop.numel,
                                                                                   vec, f);
  } else {
    const Operand* ops[2] = {&out, &in};
    StridedUnaryKernel<TO, TI, F><<<GridFor(loop.numel), kThreads, 0, s>>>(
        o, a, loop.numel, MakeOffsetCalc<2>(loop, ops), f);
  }
  return cudaGetLastError();
}

template <typename T, typename F>
cudaError_t LaunchBinaryLoop(const LoopShape& loop, const Operand& out, const Operand& a,
                             const Operand& b, F f, cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  T* o = static_cast<T*>(out.data);
  const T* x = static_cast<const T*>(a.data);
  const T* y = static_cast<const T*>(b.data);
  if (out.contiguous && a.contiguous && b.contiguous) {
    bool vec = Aligned16(o) && Aligned16(x) && Aligned16(y);
    constexpr int V = 16 / sizeof(T);
    ContigBinaryKernel<T, F>
        <<<GridFor(vec ? (loop.numel + V - 1) / V : loop.numel), kThreads, 0, s>>>(
            o, x, y, loop.numel, vec, f);
  } else {
    const Operand* ops[3] = {&out, &a, &b};
    StridedBinaryKernel<T, F><<<GridFor(loop.numel), kThreads, 0, s>>>(
        o, x, y, loop.numel, MakeOffsetCalc<3>(loop, ops), f);
  }
  return cudaGetLastError();
}

// Reduces v over the block with `op` and returns the result to EVERY thread, combining in a
// fixed order (deterministic). blockDim.x must be a multiple of 32, at most 1024.
template <typename T, typename Op>
__device__ __forceinline__ T BlockAllReduce(T v, Op op) {
  __shared__ T partial[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  T r = partial[0];
  for (int w = 1; w < nwarps; ++w) r = op(r, partial[w]);
  __syncthreads();  // partial may be reused by the caller's next reduction
  return r;
}

// ---- additions for the long tail of ops -------------------------------------------------

// Math on T = float or double (float overloads call the f-suffixed functions, as the CPU's
// std:: overloads do).
#define OFL_CU_MATH1(Name, fn)              \
  template <typename T>                     \
  __device__ __forceinline__ T Name(T x) {  \
    if constexpr (std::is_same_v<T, float>) \
      return fn##f(x);                      \
    else                                    \
      return fn(static_cast<double>(x));    \
  }
// clang-format off
OFL_CU_MATH1(Exp, exp)
OFL_CU_MATH1(Log, log)
OFL_CU_MATH1(Log1p, log1p)
OFL_CU_MATH1(Sqrt, sqrt)
OFL_CU_MATH1(Sin, sin)
OFL_CU_MATH1(Cos, cos)
OFL_CU_MATH1(Tanh, tanh)
OFL_CU_MATH1(Erf, erf)
OFL_CU_MATH1(Expm1, expm1)
OFL_CU_MATH1(Floor, floor)
OFL_CU_MATH1(Ceil, ceil)
OFL_CU_MATH1(Rint, rint)
OFL_CU_MATH1(Fabs, fabs)
// clang-format on
#undef OFL_CU_MATH1
template <typename T>
__device__ __forceinline__ T Pow(T x, T y) {
  if constexpr (std::is_same_v<T, float>)
    return powf(x, y);
  else
    return pow(x, y);
}
template <typename T>
__device__ __forceinline__ T Fmod(T x, T y) {
  if constexpr (std::is_same_v<T, float>)
    return fmodf(x, y);
  else
    return fmod(x, y);
}
template <typename T>
__device__ __forceinline__ bool IsNanV(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}

// The CPU's FromDouble (kernels/cpu/strided.h): bool is v != 0, f16/bf16 through float.
template <typename T>
__device__ __forceinline__ T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else if constexpr (IsHalfLike<T>::value)
    return FromFloat<T>(static_cast<float>(v));
  else
    return static_cast<T>(v);
}
// The CPU's AddValues: bool is ||, f16/bf16 add in float.
template <typename T>
__device__ __forceinline__ T AddValues(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else if constexpr (IsHalfLike<T>::value)
    return FromFloat<T>(AsFloat(a) + AsFloat(b));
  else
    return static_cast<T>(a + b);
}

// Same-size dispatch for ops that only move elements (where, gather, copies).
// clang-format off
#define OFL_CU_SWITCH_SIZE(bytes, ...)                          \
  switch (bytes) {                                              \
    case 1: { using scalar_t = uint8_t; __VA_ARGS__; break; }   \
    case 2: { using scalar_t = uint16_t; __VA_ARGS__; break; }  \
    case 4: { using scalar_t = uint32_t; __VA_ARGS__; break; }  \
    case 8: { using scalar_t = uint64_t; __VA_ARGS__; break; }  \
    default: break;                                             \
  }
// clang-format on
// bool, u8, i8, i16, i32, i64 (the CPU's OFL_SWITCH_INTEGRAL_BOOL).
// clang-format off
#define OFL_CU_SWITCH_INT_BOOL(t, ...)                                              \
  switch (t) {                                                                      \
    OFL_CU_CASE(kBool, bool, __VA_ARGS__) OFL_CU_CASE(kU8, uint8_t, __VA_ARGS__)    \
    OFL_CU_CASE(kI8, int8_t, __VA_ARGS__) OFL_CU_CASE(kI32, int32_t, __VA_ARGS__)   \
    OFL_CU_CASE(kI64, int64_t, __VA_ARGS__) OFL_CU_CASE(kI16, int16_t, __VA_ARGS__) \
    default: break;                                                                 \
  }
// clang-format on
// numeric + bool (the CPU's OFL_SWITCH_NUMERIC_BOOL).
// clang-format off
#define OFL_CU_SWITCH_NUMERIC_BOOL(t, ...)                                          \
  switch (t) {                                                                      \
    OFL_CU_CASE(kBool, bool, __VA_ARGS__) OFL_CU_CASE(kU8, uint8_t, __VA_ARGS__)    \
    OFL_CU_CASE(kI8, int8_t, __VA_ARGS__) OFL_CU_CASE(kI32, int32_t, __VA_ARGS__)   \
    OFL_CU_CASE(kI64, int64_t, __VA_ARGS__) OFL_CU_CASE(kF32, float, __VA_ARGS__)   \
    OFL_CU_CASE(kF64, double, __VA_ARGS__) OFL_CU_CASE(kI16, int16_t, __VA_ARGS__)  \
    default: break;                                                                 \
  }
// clang-format on

// out[i] = f(a[i], b[i]) with different input/output types (comparisons): one kernel, the
// offset calculator skipped when every operand is contiguous.
template <typename TO, typename TI, typename F>
__global__ void MixedBinaryKernel(TO* out, const TI* a, const TI* b, int64_t n, bool contig,
                                  OffsetCalc<3> calc, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (contig) {
      out[i] = f(a[i], b[i]);
      continue;
    }
    int64_t off[3];
    calc.Get(i, off);
    out[off[0]] = f(a[off[1]], b[off[2]]);
  }
}
template <typename TO, typename TI, typename F>
cudaError_t LaunchMixedBinary(const LoopShape& loop, const Operand& out, const Operand& a,
                              const Operand& b, F f, cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  const Operand* ops[3] = {&out, &a, &b};
  MixedBinaryKernel<TO, TI, F><<<GridFor(loop.numel), kThreads, 0, s>>>(
      static_cast<TO*>(out.data), static_cast<const TI*>(a.data), static_cast<const TI*>(b.data),
      loop.numel, out.contiguous && a.contiguous && b.contiguous, MakeOffsetCalc<3>(loop, ops), f);
  return cudaGetLastError();
}

template <typename TO, typename TA, typename TB, typename TC, typename F>
__global__ void TernaryKernel(TO* out, const TA* a, const TB* b, const TC* c, int64_t n,
                              bool contig, OffsetCalc<4> calc, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (contig) {
      out[i] = f(a[i], b[i], c[i]);
      continue;
    }
    int64_t off[4];
    calc.Get(i, off);
    out[off[0]] = f(a[off[1]], b[off[2]], c[off[3]]);
  }
}
template <typename TO, typename TA, typename TB, typename TC, typename F>
cudaError_t LaunchTernaryLoop(const LoopShape& loop, const Operand& out, const Operand& a,
                              const Operand& b, const Operand& c, F f, cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  const Operand* ops[4] = {&out, &a, &b, &c};
  TernaryKernel<TO, TA, TB, TC, F><<<GridFor(loop.numel), kThreads, 0, s>>>(
      static_cast<TO*>(out.data), static_cast<const TA*>(a.data), static_cast<const TB*>(b.data),
      static_cast<const TC*>(c.data), loop.numel,
      out.contiguous && a.contiguous && b.contiguous && c.contiguous, MakeOffsetCalc<4>(loop, ops),
      f);
  return cudaGetLastError();
}

// out[off(i)] = f(i) for the i-th element in row-major order of a (possibly strided) output.
template <typename T, typename F>
__global__ void GenerateKernel(T* out, int64_t n, bool contig, OffsetCalc<1> calc, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (contig) {
      out[i] = f(i);
      continue;
    }
    int64_t off[1];
    calc.Get(i, off);
    out[off[0]] = f(i);
  }
}
template <typename T, typename F>
cudaError_t LaunchGenerate(const LoopShape& loop, const Operand& out, F f, cudaStream_t s) {
  if (loop.numel == 0) return cudaSuccess;
  const Operand* ops[1] = {&out};
  GenerateKernel<T, F><<<GridFor(loop.numel), kThreads, 0, s>>>(
      static_cast<T*>(out.data), loop.numel, out.contiguous, MakeOffsetCalc<1>(loop, ops), f);
  return cudaGetLastError();
}

// Index validation (launch.h: CheckIndexRange): *flag holds the smallest bad position, or
// kNoBadIndex. Kernels that write take the flag and do nothing once it is set.
__device__ __forceinline__ bool FlagSet(const unsigned long long* flag) {
  return flag && *flag != kNoBadIndex;
}

}  // namespace cuda
}  // namespace oneflow_like
