#include "oneflow_like/base/dtype.h"

#include <cmath>

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

namespace {
uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> float8 with `mant` mantissa bits and exponent bias `bias`, round to nearest even
// (the magic-number construction of torch's c10/util/Float8_*.h): `overflow` is the smallest
// float magnitude that does not fit (every |f| at or above it, infinities included, becomes
// `overflow_bits` or, for NaN inputs, `nan_bits`). Below the smallest normal, adding a float
// whose ulp equals the format's denormal step rounds the mantissa in hardware. `fnuz`: there
// is no negative zero (a result of magnitude zero drops its sign).
uint8_t FloatToF8(float f, int mant, int bias, uint32_t overflow, uint8_t overflow_bits,
                  uint8_t nan_bits, bool fnuz) {
  uint32_t x = FloatBits(f);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint8_t r;
  if (x >= overflow) {
    if (fnuz) return nan_bits;                        // the fnuz NaN is 0x80 whatever the sign
    r = x > 0x7f800000u ? nan_bits : overflow_bits;   // NaN keeps its sign (0x7f / 0xff)
  } else if (x < (uint32_t(127 - bias + 1) << 23)) {  // below the smallest normal
    // denorm_mask: the float whose ulp is 2^(1 - bias - mant), i.e. exponent (127 - bias) +
    // (23 - mant) + 1.
    const uint32_t denorm_mask = uint32_t((127 - bias) + (23 - mant) + 1) << 23;
    r = static_cast<uint8_t>(FloatBits(BitsFloat(x) + BitsFloat(denorm_mask)) - denorm_mask);
  } else {
    const int shift = 23 - mant;
    const uint32_t odd = (x >> shift) & 1u;
    x += (uint32_t(bias - 127) << 23) + ((1u << (shift - 1)) - 1u) + odd;
    r = static_cast<uint8_t>(x >> shift);
  }
  if (fnuz && r == 0) return 0;
  return r | static_cast<uint8_t>(sign >> 24);
}

// float8 -> float: `ieee_specials` (e5m2): an all-ones exponent is inf/NaN; e4m3fn: only
// S.1111.111 is NaN; fnuz: 0x80 is NaN and the exponent range is shifted by one.
float F8ToFloat(uint8_t b, int mant, int bias, bool e4m3fn, bool e5m2, bool fnuz) {
  const uint32_t sign = uint32_t(b & 0x80u) << 24;
  const int ebits = 7 - mant;
  const uint32_t emax = (1u << ebits) - 1u;
  uint32_t e = (b >> mant) & emax, m = b & ((1u << mant) - 1u);
  if (fnuz && b == 0x80) return BitsFloat(0x7fc00000u);
  if (e4m3fn && e == emax && m == ((1u << mant) - 1u)) return BitsFloat(sign | 0x7fc00000u);
  if (e5m2 && e == emax) return BitsFloat(sign | 0x7f800000u | (m << (23 - mant)));
  if (e == 0) {
    if (m == 0) return BitsFloat(sign);
    float v = std::ldexp(float(m), 1 - bias - mant);  // subnormal: exact in float
    return sign ? -v : v;
  }
  return BitsFloat(sign | ((e + 127 - bias) << 23) | (m << (23 - mant)));
}
}  // namespace

// e4m3fn: 480 (0x43f00000) is the first magnitude past the largest finite value 448: it and
// above give NaN. e5m2: 2^16 (0x47800000) and above give inf. e4m3fnuz (largest 240) and
// e5m2fnuz (largest 57344): 2^8 (0x43800000) and 2^16 (0x47800000) and above give NaN 0x80.
// Values between the largest finite one and the threshold round to nearest even, which may
// carry into the NaN / inf encoding, as in torch.
float8_e4m3fn::float8_e4m3fn(float f) : bits(FloatToF8(f, 3, 7, 0x43f00000u, 0x7f, 0x7f, false)) {}
float8_e4m3fn::operator float() const {
  return F8ToFloat(bits, 3, 7, true, false, false);
}
float8_e5m2::float8_e5m2(float f) : bits(FloatToF8(f, 2, 15, 0x47800000u, 0x7c, 0x7f, false)) {}
float8_e5m2::operator float() const {
  return F8ToFloat(bits, 2, 15, false, true, false);
}
float8_e4m3fnuz::float8_e4m3fnuz(float f)
    : bits(FloatToF8(f, 3, 8, 0x43800000u, 0x80, 0x80, true)) {}
float8_e4m3fnuz::operator float() const {
  return F8ToFloat(bits, 3, 8, false, false, true);
}
float8_e5m2fnuz::float8_e5m2fnuz(float f)
    : bits(FloatToF8(f, 2, 16, 0x47800000u, 0x80, 0x80, true)) {}
float8_e5m2fnuz::operator float() const {
  return F8ToFloat(bits, 2, 16, false, false, true);
}

int64_t DTypeSize(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kU8:
    case DType::kI8:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ: return 1;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16: return 2;
    case DType::kI32:
    case DType::kU32:
    case DType::kF32: return 4;
    case DType::kI64:
    case DType::kU64:
    case DType::kF64:
    case DType::kC64: return 8;
    case DType::kC128: return 16;
  }
  return 0;
}

const char* DTypeName(DType t) {
  static const char* names[] = {
      "pred", "u8",  "s8",  "s32", "s64", "f16",      "bf16",   "f32",        "f64",       "c64",
      "c128", "s16", "u16", "u32", "u64", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumDTypes, "one name per dtype");
  return names[static_cast<int>(t)];
}

const char* DTypeLongName(DType t) {
  static const char* names[] = {"bool",        "uint8",           "int8",           "int32",
                                "int64",       "float16",         "bfloat16",       "float32",
                                "float64",     "complex64",       "complex128",     "int16",
                                "uint16",      "uint32",          "uint64",         "float8_e4m3fn",
                                "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumDTypes, "one name per dtype");
  return names[static_cast<int>(t)];
}

const char* DTypeTorchName(DType t) {
  static const char* names[] = {
      "Bool",           "Byte",   "Char",   "Int",           "Long",          "Half",
      "BFloat16",       "Float",  "Double", "ComplexFloat",  "ComplexDouble", "Short",
      "UInt16",         "UInt32", "UInt64", "Float8_e4m3fn", "Float8_e5m2",   "Float8_e4m3fnuz",
      "Float8_e5m2fnuz"};
  static_assert(sizeof(names) / sizeof(names[0]) == kNumDTypes, "one name per dtype");
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
  if (name == "short" || name == "i16") return DType::kI16;
  if (name == "i8") return DType::kI8;
  if (name == "cfloat" || name == "complex") return DType::kC64;
  if (name == "cdouble") return DType::kC128;
  return InvalidArgument("[dtype] unknown dtype name '%s'", name);
}

bool IsFloat8(DType t) {
  return t == DType::kF8E4M3FN || t == DType::kF8E5M2 || t == DType::kF8E4M3FNUZ ||
         t == DType::kF8E5M2FNUZ;
}
bool IsUnsignedWide(DType t) {
  return t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
}
bool IsLimited(DType t) {
  return IsFloat8(t) || IsUnsignedWide(t);
}
bool IsFloating(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64 ||
         IsFloat8(t);
}
bool IsIntegral(DType t) {
  return t == DType::kU8 || t == DType::kI8 || t == DType::kI16 || t == DType::kI32 ||
         t == DType::kI64 || IsUnsignedWide(t);
}
bool IsComplex(DType t) {
  return t == DType::kC64 || t == DType::kC128;
}
bool IsSigned(DType t) {
  return t != DType::kBool && t != DType::kU8 && !IsUnsignedWide(t);
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
  // integers (torch): u8 with i8 -> i16; otherwise the wider one (u8 with i16 -> i16). The
  // unsigned 16-64 bit types have no integer promotion (PromoteTypesChecked refuses them).
  if ((a == DType::kU8 && b == DType::kI8) || (a == DType::kI8 && b == DType::kU8))
    return DType::kI16;
  return DTypeSize(a) >= DTypeSize(b) ? a : b;
}

StatusOr<DType> PromoteTypesChecked(const char* op, DType a, DType b) {
  if (a == b) return a;
  if (IsFloat8(a) || IsFloat8(b))
    return TypeError(
        "[%s] Promotion for Float8 Types is not supported, attempted to promote %s and %s", op,
        DTypeTorchName(a), DTypeTorchName(b));
  if ((IsUnsignedWide(a) || IsUnsignedWide(b)) && !IsFloating(a) && !IsFloating(b) &&
      !IsComplex(a) && !IsComplex(b))
    return TypeError(
        "[%s] Promotion for uint16, uint32, uint64 types is not supported, attempted to "
        "promote %s and %s",
        op, DTypeTorchName(a), DTypeTorchName(b));
  return PromoteTypes(a, b);
}

Status LimitedNotImplemented(const char* op, DType t) {
  return TypeError("[%s] \"%s\" not implemented for '%s'", op, op, DTypeTorchName(t));
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
