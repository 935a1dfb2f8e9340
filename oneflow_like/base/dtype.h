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
};
constexpr int kNumDTypes = 11;
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

int64_t DTypeSize(DType t);
const char* DTypeName(DType t);      // "f32", "i64", ...
const char* DTypeLongName(DType t);  // "float32", "int64", ... (the Python names)
StatusOr<DType> DTypeFromName(const std::string& name);  // accepts both spellings
bool IsFloating(DType t);
bool IsIntegral(DType t);  // bool excluded
bool IsComplex(DType t);   // c64, c128 (not floating: torch's is_floating_point is False for them)
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
    OFL_DTYPE_CASE(kI32, int32_t, __VA_ARGS__)                   \
    OFL_DTYPE_CASE(kI64, int64_t, __VA_ARGS__)                   \
    OFL_DTYPE_CASE(kF16, ::oneflow_like::float16, __VA_ARGS__)   \
    OFL_DTYPE_CASE(kBF16, ::oneflow_like::bfloat16, __VA_ARGS__) \
    OFL_DTYPE_CASE(kF32, float, __VA_ARGS__)                     \
    OFL_DTYPE_CASE(kF64, double, __VA_ARGS__)                    \
  }
// Arithmetic types computed natively (f16/bf16 are converted to f32 by the caller).
#define OFL_SWITCH_NUMERIC(dtype, ...)         \
  switch (dtype) {                             \
    OFL_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)  \
    OFL_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)   \
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

}  // namespace oneflow_like
