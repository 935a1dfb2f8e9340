// DType: the element types, their sizes and names, and NumPy-style type promotion.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>

#include "oneflow_like/base/status.h"

namespace oneflow_like {

enum class DType : int8_t {
  kBool = 0,
  kU8,
  kI8,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  // Appended after kF64 so every earlier value (written into .oflx artifacts and checkpoints)
  // keeps its number. Interleaved (re, im) pairs of f32 / f64, as std::complex.
  kC64,
  kC128,
  // Appended after the complex ones, for the same reason. kI16 has the full integer kernel set;
  // the unsigned 16-64 bit and float8 types have torch 2.x's "limited support" (creation,
  // copies and casts, views, save/load, numpy interop; the unsigned ones also comparisons,
  // bitwise ops and min/max): every other op refuses them by name (LimitedNotImplemented).
  kI16,
  kU16,
  kU32,
  kU64,
  kF8E4M3FN,    // 1-4-3, bias 7, no infinities, NaN = S.1111.111 (torch.float8_e4m3fn)
  kF8E5M2,      // 1-5-2, bias 15, IEEE-like (torch.float8_e5m2)
  kF8E4M3FNUZ,  // 1-4-3, bias 8, no infinities or -0, NaN = 0x80
  kF8E5M2FNUZ,  // 1-5-2, bias 16, no infinities or -0, NaN = 0x80
};
constexpr int kNumDTypes = 19;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// IEEE half and bfloat16 storage types; arithmetic goes through float.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f);
  operator float() const;
};
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = 0x7fc0;
      return;
    }                                 // NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    bits = static_cast<uint16_t>(u >> 16);
  }
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// float8 storage types (torch's c10 Float8_*): conversions from float round to nearest even;
// out of range gives NaN for e4m3fn and the fnuz types (no saturation, as torch's casts) and
// infinity for e5m2. Arithmetic goes through float.
#define OFL_DECLARE_FLOAT8(Name) \
  struct Name {                  \
    uint8_t bits = 0;            \
    Name() = default;            \
    explicit Name(float f);      \
    operator float() const;      \
  };
OFL_DECLARE_FLOAT8(float8_e4m3fn)
OFL_DECLARE_FLOAT8(float8_e5m2)
OFL_DECLARE_FLOAT8(float8_e4m3fnuz)
OFL_DECLARE_FLOAT8(float8_e5m2fnuz)
#undef OFL_DECLARE_FLOAT8

int64_t DTypeSize(DType t);
const char* DTypeName(DType t);      // "f32", "i64", ...
const char* DTypeLongName(DType t);  // "float32", "int64", ... (the Python names)
StatusOr<DType> DTypeFromName(const std::string& name);  // accepts both spellings
bool IsFloating(DType t);
bool IsIntegral(DType t);  // bool excluded
bool IsComplex(DType t);   // c64, c128 (not floating: torch's is_floating_point is False for them)
bool IsFloat8(DType t);    // the four float8 types (IsFloating is true for them, as in torch)
bool IsUnsignedWide(DType t);  // u16, u32, u64 (torch's "barebones" unsigned types)
// torch 2.x's limited-support dtypes: u16/u32/u64 and the float8 types. Only the ops on an
// allow-list reach kernels with them (framework/op.cc); the rest raise LimitedNotImplemented.
bool IsLimited(DType t);
bool IsSigned(DType t);  // torch's dtype.is_signed
// c10's ScalarType name as torch's errors spell it: "UInt16", "Float8_e4m3fn", "Short", ...
const char* DTypeTorchName(DType t);
// "[<op>] <op> not implemented for 'UInt16'" (torch's wording), a TypeError.
Status LimitedNotImplemented(const char* op, DType t);
// PromoteTypes with torch 2.x's refusals: float8 with any other dtype, and u16/u32/u64 with
// any non-floating other dtype, raise "[<op>] promotion for ... is not supported".
StatusOr<DType> PromoteTypesChecked(const char* op, DType a, DType b);
// torch's complex counterpart of a dtype: f64 -> c128, complex unchanged, anything else -> c64.
DType ToComplexDType(DType t);
// The real dtype of a complex one (c64 -> f32, c128 -> f64); other dtypes unchanged.
DType ToRealDType(DType t);
// Result type of a binary op on two tensors (NumPy/PyTorch category rules:
// bool < int < float < complex; f64 with c64 gives c128).
DType PromoteTypes(DType a, DType b);
// Result type of tensor (op) python scalar: a float scalar lifts an integer tensor to f32.
DType PromoteWithScalar(DType t, bool scalar_is_float);
// Result type of tensor (op) python complex scalar: the tensor's complex counterpart.
DType PromoteWithComplexScalar(DType t);
// The error every kernel without a complex path raises: "<op>: not supported for complex64".
Status ComplexNotSupported(const char* op, DType t, const char* device = "cpu");

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kI8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct DTypeOf<float16> {
  static constexpr DType value = DType::kF16;
};
template <>
struct DTypeOf<bfloat16> {
  static constexpr DType value = DType::kBF16;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};
template <>
struct DTypeOf<complex64> {
  static constexpr DType value = DType::kC64;
};
template <>
struct DTypeOf<complex128> {
  static constexpr DType value = DType::kC128;
};
#define OFL_DTYPE_OF(T, D)                   \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::D; \
  };
OFL_DTYPE_OF(int16_t, kI16)
OFL_DTYPE_OF(uint16_t, kU16)
OFL_DTYPE_OF(uint32_t, kU32)
OFL_DTYPE_OF(uint64_t, kU64)
OFL_DTYPE_OF(float8_e4m3fn, kF8E4M3FN)
OFL_DTYPE_OF(float8_e5m2, kF8E5M2)
OFL_DTYPE_OF(float8_e4m3fnuz, kF8E4M3FNUZ)
OFL_DTYPE_OF(float8_e5m2fnuz, kF8E5M2FNUZ)
#undef OFL_DTYPE_OF

// Calls f(T{}) with the C++ type of `t`. Keep the instantiation count low: kernels pick the
// narrowest switch that covers what they support.
#define OFL_DTYPE_CASE(D, T, ...) \
  case DType::D: {                \
    using scalar_t = T;           \
    __VA_ARGS__;                  \
    break;                        \
  }
#define OFL_SWITCH_ALL(dtype, ...)                               \
  switch (dtype) {                                               \
    OFL_DTYPE_CASE(kBool, bool, __VA_ARGS__)                     \
    OFL_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)                    \
    OFL_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)                     \
    OFL_DTYPE_CASE(kI16, int16_t, __VA_ARGS__)                   \
    OFL_DTYPE_CASE(kI32, int32_t, __VA_ARGS__)                   \
    OFL_DTYPE_CASE(kI64, int64_t, __VA_ARGS__)                   \
    OFL_DTYPE_CASE(kF16, ::oneflow_like::float16, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kBF16, ::oneflow_like::bfloat16, __VA_ARGS__) \
    OFL_DTYPE_CASE(kF32, float, __VA_ARGS__)                     \
    OFL_DTYPE_CASE(kF64, double, __VA_ARGS__)                    \
    default: break;                                              \
  }
// Arithmetic types computed natively (f16/bf16 are converted to f32 by the caller).
#define OFL_SWITCH_NUMERIC(dtype, ...)         \
  switch (dtype) {                             \
    OFL_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)  \
    OFL_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kI16, int16_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kI32, int32_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kI64, int64_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kF32, float, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kF64, double, __VA_ARGS__)  \
    default: break;                            \
  }
#define OFL_SWITCH_FLOAT(dtype, ...)          \
  switch (dtype) {                            \
    OFL_DTYPE_CASE(kF32, float, __VA_ARGS__)  \
    OFL_DTYPE_CASE(kF64, double, __VA_ARGS__) \
    default: break;                           \
  }

// Complex dtypes only: the kernels that have a complex path use this switch of their own, so the
// switches above never instantiate a kernel for complex.
#define OFL_SWITCH_COMPLEX(dtype, ...)                             \
  switch (dtype) {                                                 \
    OFL_DTYPE_CASE(kC64, ::oneflow_like::complex64, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kC128, ::oneflow_like::complex128, __VA_ARGS__) \
    default: break;                                                \
  }

// The limited dtypes only (the switches above never instantiate a kernel for them): the
// conversions, fills, comparisons and bitwise/min/max kernels that torch 2.x has for them.
#define OFL_SWITCH_UNSIGNED_WIDE(dtype, ...)    \
  switch (dtype) {                              \
    OFL_DTYPE_CASE(kU16, uint16_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kU32, uint32_t, __VA_ARGS__) \
    OFL_DTYPE_CASE(kU64, uint64_t, __VA_ARGS__) \
    default: break;                             \
  }
#define OFL_SWITCH_FLOAT8(dtype, ...)                                         \
  switch (dtype) {                                                            \
    OFL_DTYPE_CASE(kF8E4M3FN, ::oneflow_like::float8_e4m3fn, __VA_ARGS__)     \
    OFL_DTYPE_CASE(kF8E5M2, ::oneflow_like::float8_e5m2, __VA_ARGS__)         \
    OFL_DTYPE_CASE(kF8E4M3FNUZ, ::oneflow_like::float8_e4m3fnuz, __VA_ARGS__) \
    OFL_DTYPE_CASE(kF8E5M2FNUZ, ::oneflow_like::float8_e5m2fnuz, __VA_ARGS__) \
    default: break;                                                           \
  }

}  // namespace oneflow_like
