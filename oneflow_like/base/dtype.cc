#include "oneflow_like/base/dtype.h"

namespace oneflow_like {

float16::float16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) {
    bits = uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));
    return;
  }
  if (exp >= 31) {
    bits = uint16_t(sign | 0x7c00u);
    return;
  }                // overflow -> inf
  if (exp <= 0) {  // subnormal or zero
    if (exp < -10) {
      bits = uint16_t(sign);
      return;
    }
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    bits = uint16_t(sign | half);
    return;
  }
  uint32_t half = sign | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: fine
  bits = uint16_t(half);
}

float16::operator float() const {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu, out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // normalise the subnormal
      exp = 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

int64_t DTypeSize(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kU8:
    case DType::kI8: return 1;
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kI32:
    case DType::kF32: return 4;
    case DType::kI64:
    case DType::kF64:
    case DType::kC64: return 8;
    case DType::kC128: return 16;
  }
  return 0;
}

const char* DTypeName(DType t) {
  static const char* names[] = {"pred", "u8",  "s8",  "s32", "s64", "f16",
                                "bf16", "f32", "f64", "c64", "c128"};
  return names[static_cast<int>(t)];
}

const char* DTypeLongName(DType t) {
  static const char* names[] = {"bool",    "uint8",     "int8",      "int32",
                                "int64",   "float16",   "bfloat16",  "float32",
                                "float64", "complex64", "complex128"};
  return names[static_cast<int>(t)];
}

StatusOr<DType> DTypeFromName(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    if (name == DTypeName(t) || name == DTypeLongName(t)) return t;
  }
  if (name == "float" || name == "f32") return DType::kF32;
  if (name == "double") return DType::kF64;
  if (name == "half") return DType::kF16;
  if (name == "int" || name == "long" || name == "i64") return DType::kI64;
  if (name == "i32") return DType::kI32;
  if (name == "i8") return DType::kI8;
  if (name == "cfloat" || name == "complex") return DType::kC64;
  if (name == "cdouble") return DType::kC128;
  return InvalidArgument("[dtype] unknown dtype name '%s'", name);
}

bool IsFloating(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}
bool IsIntegral(DType t) {
  return t == DType::kU8 || t == DType::kI8 || t == DType::kI32 || t == DType::kI64;
}
bool IsComplex(DType t) {
  return t == DType::kC64 || t == DType::kC128;
}

DType ToComplexDType(DType t) {
  if (IsComplex(t)) return t;
  return t == DType::kF64 ? DType::kC128 : DType::kC64;
}
DType ToRealDType(DType t) {
  if (t == DType::kC64) return DType::kF32;
  if (t == DType::kC128) return DType::kF64;
  return t;
}

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (IsComplex(a) || IsComplex(b)) {  // complex beats float; f64 with c64 gives c128
    if (a == DType::kC128 || b == DType::kC128 || a == DType::kF64 || b == DType::kF64)
      return DType::kC128;
    return DType::kC64;
  }
  auto cat = [](DType t) { return t == DType::kBool ? 0 : IsIntegral(t) ? 1 : 2; };
  if (cat(a) != cat(b)) return cat(a) > cat(b) ? a : b;
  if (cat(a) == 2) {
    if ((a == DType::kF16 && b == DType::kBF16) || (a == DType::kBF16 && b == DType::kF16))
      return DType::kF32;
    return DTypeSize(a) >= DTypeSize(b) ? a : b;
  }
  // integers: u8 with i8 -> i32 (no 16-bit type here); otherwise the wider one
  if ((a == DType::kU8 && b == DType::kI8) || (a == DType::kI8 && b == DType::kU8))
    return DType::kI32;
  return DTypeSize(a) >= DTypeSize(b) ? a : b;
}

DType PromoteWithScalar(DType t, bool scalar_is_float) {
  if (scalar_is_float && !IsFloating(t)) return DType::kF32;
  if (!scalar_is_float && t == DType::kBool) return DType::kI64;
  return t;
}

DType PromoteWithComplexScalar(DType t) {
  return ToComplexDType(t);
}

Status ComplexNotSupported(const char* op, DType t, const char* device) {
  return TypeError("[%s] not supported for %s on %s", op, DTypeLongName(t), device);
}

}  // namespace oneflow_like
