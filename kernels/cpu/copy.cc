// CPU kernels of the copy family: contiguous, cast, copy_ (broadcast + cast into a strided
// destination), to_device (cpu -> cpu).
#include <array>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/bf16_simd.h"
#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
// kernels/cpu/complex.cc: the conversions where either side is complex64/complex128.
Status ComplexCastInto(const TensorView& out, const TensorView& in);
namespace {

template <typename TO, typename TI>
inline TO Convert(TI v) {
  // Floating to an integer narrower than 64 bits goes through int64 and wraps (-2.0 -> uint8 254,
  // as PyTorch); a direct conversion of an out-of-range value is undefined behaviour.
  constexpr bool to_narrow_int = std::is_integral_v<TO> && sizeof(TO) < 8;
  constexpr bool from_half = std::is_same_v<TI, float16> || std::is_same_v<TI, bfloat16>;
  if constexpr (std::is_same_v<TO, bool>)
    return static_cast<float>(v) != 0.0f;
  else if constexpr (std::is_same_v<TO, float16> || std::is_same_v<TO, bfloat16>)
    return TO(static_cast<float>(v));
  else if constexpr (from_half && to_narrow_int)
    return static_cast<TO>(static_cast<int64_t>(static_cast<float>(v)));
  else if constexpr (from_half)
    return static_cast<TO>(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<TI> && to_narrow_int)
    return static_cast<TO>(static_cast<int64_t>(v));
  else
    return static_cast<TO>(v);
}

// Conversions where either side is a limited dtype (u16/u32/u64, float8): one load and one
// store function per dtype, composed per element, instead of a kernel per (to, from) pair. A
// loaded value keeps what Convert's rules need: integers exactly (their 64 bits and
// signedness), floating values as double (every float type widens exactly).
struct AnyValue {
  bool is_float;
  bool is_signed;
  uint64_t bits;
  double d;
};
template <typename T>
AnyValue Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::is_integral_v<T>)
    return AnyValue{false, std::is_signed_v<T>, static_cast<uint64_t>(v), 0.0};
  else
    return AnyValue{true, true, 0, static_cast<double>(static_cast<float>(v))};
}
template <>
AnyValue Load<double>(const char* p) {
  double v;
  std::memcpy(&v, p, 8);
  return AnyValue{true, true, 0, v};
}
template <typename T>
void Store(char* p, const AnyValue& a) {
  T r;
  if constexpr (std::is_same_v<T, bool>) {
    r = a.is_float ? a.d != 0.0 : a.bits != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (!a.is_float)
      r = static_cast<T>(a.bits);  // modulo 2^n, as the direct integer conversions
    else if constexpr (sizeof(T) < 8)
      r = static_cast<T>(static_cast<int64_t>(a.d));  // through int64, as Convert
    else if constexpr (std::is_unsigned_v<T>)         // u64: negative values wrap through int64
      r = a.d < 0 ? static_cast<T>(static_cast<int64_t>(a.d)) : static_cast<T>(a.d);
    else
      r = static_cast<T>(a.d);
  } else {
    // float / double directly; the 8- and 16-bit float types round from float, as Convert.
    using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
    W w = a.is_float    ? static_cast<W>(a.d)
          : a.is_signed ? static_cast<W>(static_cast<int64_t>(a.bits))
                        : static_cast<W>(a.bits);
    if constexpr (std::is_same_v<T, W>)
      r = w;
    else
      r = T(w);
  }
  std::memcpy(p, &r, sizeof(T));
}
using LoadFn = AnyValue (*)(const char*);
using StoreFn = void (*)(char*, const AnyValue&);
#define OFL_ANY_SWITCH(dtype, ...)                        \
  do {                                                    \
    bool any_done_ = false;                               \
    OFL_SWITCH_ALL(dtype, any_done_ = true; __VA_ARGS__); \
    if (!any_done_) {                                     \
      OFL_SWITCH_UNSIGNED_WIDE(dtype, __VA_ARGS__);       \
      OFL_SWITCH_FLOAT8(dtype, __VA_ARGS__);              \
    }                                                     \
  } while (0)

Status LimitedCastInto(const TensorView& out, const TensorView& in) {
  LoadFn load = nullptr;
  StoreFn store = nullptr;
  OFL_ANY_SWITCH(in.dtype, load = &Load<scalar_t>);
  OFL_ANY_SWITCH(out.dtype, store = &Store<scalar_t>);
  if (!load || !store)
    return TypeError("[cast] no conversion from %s to %s on cpu", DTypeLongName(in.dtype),
                     DTypeLongName(out.dtype));
  const int64_t osz = DTypeSize(out.dtype), isz = DTypeSize(in.dtype);
  std::array<const DimVector*, 2> st{&out.strides, &in.strides};
  ForEachRow<2>(out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(in.data)},
                {osz, isz},
                [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                  for (int64_t i = 0; i < n; ++i)
                    store(p[0] + i * s[0] * osz, load(p[1] + i * s[1] * isz));
                });
  return Status();
}

// f32 <-> bf16 (autocast's casts) through bf16_simd.h: contiguous operands in parallel chunks,
// others row by row where both rows are unit-stride. Returns false for other layouts.
template <typename TO, typename TI>
bool CastBf16Vectorised(const TensorView& out, const TensorView& in) {
  auto convert = [](const TI* s, TO* d, int64_t n) {
    if constexpr (std::is_same_v<TO, bfloat16>)
      NarrowToBf16(s, d, n);  // AVX-512 where the CPU has it (bf16_simd.cc), else AVX2
    else
      WidenBf16(s, d, n);
  };
  if (out.contiguous() && in.contiguous()) {
    TO* o = out.ptr<TO>();
    const TI* x = in.ptr<const TI>();
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) { convert(x + b, o + b, e - b); });
    return true;
  }
  const int64_t nd = out.shape.ndim();
  if (nd == 0 || out.strides[nd - 1] != 1 || in.strides[nd - 1] != 1 || out.shape[nd - 1] < 16)
    return false;
  std::array<const DimVector*, 2> st{&out.strides, &in.strides};
  ForEachRow<2>(out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(in.data)},
                {sizeof(TO), sizeof(TI)},
                [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                  if (s[0] == 1 && s[1] == 1) {
                    convert(reinterpret_cast<const TI*>(p[1]), reinterpret_cast<TO*>(p[0]), n);
                    return;
                  }
                  TO* o = reinterpret_cast<TO*>(p[0]);
                  const TI* x = reinterpret_cast<const TI*>(p[1]);
                  for (int64_t i = 0; i < n; ++i) o[i * s[0]] = Convert<TO, TI>(x[i * s[1]]);
                });
  return true;
}

// out (any strides) = cast(in broadcast to out's shape).
Status CastInto(const TensorView& out, const TensorView& in0) {
  TensorView in = BroadcastTo(in0, out.shape);
  if (out.dtype == in.dtype && out.contiguous() && in.contiguous()) {
    std::memcpy(out.data, in.data, out.numel() * DTypeSize(out.dtype));
    return Status();
  }
  if (out.dtype == in.dtype && !IsComplex(out.dtype)) {
    // A strided copy (contiguous, copy_): the elements' bits as they are, no conversion (f16/bf16
    // through float would cost a rounding per element and rewrite NaN payloads).
    // Rows unit-stride on both sides (a transposed [B, L, H, D] -> [B, H, L, D] head split):
    // memcpy per row; the element loop cannot know the strides are 1 and stays scalar.
    const int64_t nd = out.shape.ndim(), es = DTypeSize(out.dtype);
    if (nd > 0 && out.strides[nd - 1] == 1 && in.strides[nd - 1] == 1 && out.shape[nd - 1] >= 8) {
      std::array<const DimVector*, 2> st{&out.strides, &in.strides};
      ForEachRow<2>(
          out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(in.data)}, {es, es},
          [es](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
            if (s[0] == 1 && s[1] == 1) {
              std::memmove(p[0], p[1], n * es);
              return;
            }
            for (int64_t i = 0; i < n; ++i)
              std::memmove(p[0] + i * s[0] * es, p[1] + i * s[1] * es, es);
          });
      return Status();
    }
    OFL_SWITCH_SIZE(DTypeSize(out.dtype),
                    UnaryLoop<scalar_t, scalar_t>(out, in, [](scalar_t v) { return v; }));
    return Status();
  }
  if (out.dtype == DType::kBF16 && in.dtype == DType::kF32 &&
      CastBf16Vectorised<bfloat16, float>(out, in))
    return Status();
  if (out.dtype == DType::kF32 && in.dtype == DType::kBF16 &&
      CastBf16Vectorised<float, bfloat16>(out, in))
    return Status();
  if (IsComplex(out.dtype) || IsComplex(in.dtype)) return ComplexCastInto(out, in);
  if (IsLimited(out.dtype) || IsLimited(in.dtype)) return LimitedCastInto(out, in);
  OFL_SWITCH_ALL(out.dtype, {
    using TO = scalar_t;
    OFL_SWITCH_ALL(in.dtype, {
      using TI = scalar_t;
      UnaryLoop<TO, TI>(out, in, [](TI v) { return Convert<TO, TI>(v); });
    });
  });
  return Status();
}

Status ContiguousKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}
Status CastKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}
Status CopyIntoKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}
Status ToDeviceKernel(KernelContext& ctx) {
  return CastInto(ctx.output(0), ctx.input(0));
}

}  // namespace

OFL_REGISTER_KERNEL(contiguous, kCPU, ContiguousKernel);
OFL_REGISTER_KERNEL(cast, kCPU, CastKernel);
OFL_REGISTER_KERNEL(copy_, kCPU, CopyIntoKernel);
OFL_REGISTER_KERNEL(to_device, kCPU, ToDeviceKernel);

}  // namespace kernels
}  // namespace oneflow_like
