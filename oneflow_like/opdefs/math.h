// The math policy the op tables' formulas are written against (see unary.def). A formula is a
// functor template over a value type V and a policy M: `m.exp(x)`, `m.select(p, a, b)`, `m.c(2.0)`
// (a constant in V's type) and V's own + - * / < > operators. ScalarMath<T> evaluates it on one
// element (CPU loops and CUDA kernels alike); lazy/lowering's HloMath builds the same expression
// tree as HLO, so compiled graphs repeat the kernels' operation order exactly.
// Device-safe: no abseil, no host-only headers.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define OFL_HD __host__ __device__ __forceinline__
#else
#define OFL_HD inline
#endif

#include "oneflow_like/opdefs/special_math.h"

namespace oneflow_like {
namespace opdefs {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double k2OverSqrtPi = 1.12837916709551257390;
constexpr double kSqrt2Pi = 2.50662827463100050242;  // sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;

// One element of type T. Float math calls the f-suffixed functions for float (as std:: does on
// the host), so CPU and CUDA evaluate the same calls; integer T never reaches the float-only
// functions at run time (the table's dtype sets), but they must compile, hence the casts.
template <typename T>
struct ScalarMath {
  static constexpr bool kFloat = std::is_floating_point_v<T>;
  // Set to 1 by zero_division() (integer division by zero: the kernel reports it after the loop).
  int* zero_flag = nullptr;
  // A constant in T; integers saturate to their range (clamp bounds arrive as +-inf).
  OFL_HD T c(double v) const {
    if constexpr (kFloat || std::is_same_v<T, bool>) {
      return static_cast<T>(v);
    } else {
      if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
      if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return static_cast<T>(v);
    }
  }
  // A Python number in T as PyTorch converts it (scalar operands, alpha): integers through int64,
  // so negative values wrap in unsigned types (u8 - 1 subtracts one); bool as v != 0.
  OFL_HD T scalar(double v) const {
    if constexpr (kFloat)
      return static_cast<T>(v);
    else if constexpr (std::is_same_v<T, bool>)
      return v != 0;
    else
      return static_cast<T>(static_cast<int64_t>(v));
  }
  OFL_HD T select(bool p, T a, T b) const { return p ? a : b; }
  OFL_HD bool and_(bool a, bool b) const { return a && b; }
  OFL_HD bool or_(bool a, bool b) const { return a || b; }
  OFL_HD T bitnot(T x) const {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else if constexpr (kFloat)
      return x;
    else
      return static_cast<T>(~x);
  }
  // x ** e for integer T by repeated squaring (e >= 0, checked by the schema).
  OFL_HD T ipow(T x, double e) const {
    T r = 1, b = x;
    for (int64_t k = static_cast<int64_t>(e); k > 0; k >>= 1) {
      if (k & 1) r = static_cast<T>(r * b);
      b = static_cast<T>(b * b);
    }
    return r;
  }
  // x ** e, both integers, by repeated squaring; e < 0 truncates (0 unless |x| == 1).
  OFL_HD T ipow_int(T x, T e) const {
    if constexpr (kFloat || std::is_same_v<T, bool>) {
      return x;
    } else {
      if (e < 0) return x == T(1) ? T(1) : x == T(-1) ? ((e & 1) ? T(-1) : T(1)) : T(0);
      T r = 1;
      for (; e > 0; e >>= 1) {
        if (e & 1) r = static_cast<T>(r * x);
        x = static_cast<T>(x * x);
      }
      return r;
    }
  }
  OFL_HD bool is_nan(T x) const { return x != x; }
  // Integer division with Python's rounding (y != 0; MIN / -1 wraps around instead of trapping).
  OFL_HD T ifloordiv(T x, T y) const { return IntDiv(x, y, 0); }
  OFL_HD T iremainder(T x, T y) const { return IntDiv(x, y, 1); }
  OFL_HD T ifmod(T x, T y) const { return IntDiv(x, y, 2); }
  OFL_HD T zero_division() const {
    if (zero_flag) {
#if defined(__CUDA_ARCH__)
      *zero_flag = 1;
#else
      __atomic_store_n(zero_flag, 1, __ATOMIC_RELAXED);
#endif
    }
    return T(0);
  }
  OFL_HD T sigmoid(T x) const {
    return T(1) / (T(1) + exp(-x));
  }

  // Rounding is the identity on integers (and must not go through double for int64).
  OFL_HD T floor(T x) const {
    return kFloat ? Float(x, 0) : x;
  }
  OFL_HD T ceil(T x) const {
    return kFloat ? Float(x, 1) : x;
  }
  OFL_HD T rint(T x) const {
    return kFloat ? Float(x, 2) : x;
  }  // half to even

  // clang-format off
#if defined(__CUDA_ARCH__)
// `::fn`, not `fn`: inside this class an unqualified exp(double) finds the member exp(T) first
// and recursed forever for T = double (the first GPU run returned x from exp, log, tanh, ...).
#define OFL_MATH1(name, fn)                   \
  OFL_HD T name(T x) const {                  \
    if constexpr (std::is_same_v<T, float>)   \
      return ::fn##f(x);                      \
    else                                      \
      return static_cast<T>(::fn(double(x))); \
  }
  OFL_HD T pow(T x, T y) const {
    if constexpr (std::is_same_v<T, float>)
      return powf(x, y);
    else
      return static_cast<T>(::pow(double(x), double(y)));
  }
  OFL_HD T fmod(T x, T y) const {
    if constexpr (std::is_same_v<T, float>)
      return fmodf(x, y);
    else
      return static_cast<T>(::fmod(double(x), double(y)));
  }
#else
#define OFL_MATH1(name, fn) \
  OFL_HD T name(T x) const { return static_cast<T>(std::fn(x)); }
  OFL_HD T pow(T x, T y) const { return static_cast<T>(std::pow(x, y)); }
  OFL_HD T fmod(T x, T y) const { return static_cast<T>(std::fmod(x, y)); }
#endif
  // clang-format on
  OFL_MATH1(exp, exp);
  OFL_MATH1(expm1, expm1);
  OFL_MATH1(log, log);
  OFL_MATH1(log1p, log1p);
  OFL_MATH1(sqrt, sqrt);
  OFL_MATH1(sin, sin);
  OFL_MATH1(cos, cos);
  OFL_MATH1(tanh, tanh);
  OFL_MATH1(erf, erf);
  OFL_MATH1(erfc, erfc);
  OFL_MATH1(tan, tan);
  OFL_MATH1(asin, asin);
  OFL_MATH1(acos, acos);
  OFL_MATH1(atan, atan);
  OFL_MATH1(sinh, sinh);
  OFL_MATH1(cosh, cosh);
  OFL_MATH1(asinh, asinh);
  OFL_MATH1(acosh, acosh);
  OFL_MATH1(atanh, atanh);
  OFL_MATH1(exp2, exp2);
  OFL_MATH1(log2, log2);
  OFL_MATH1(log10, log10);
#undef OFL_MATH1
  // Special functions (special_math.h), computed in double.
  OFL_HD T lgamma(T x) const {
    return static_cast<T>(special::Lgamma(double(x)));
  }
  OFL_HD T digamma(T x) const {
    return static_cast<T>(special::Digamma(double(x)));
  }
  OFL_HD T trigamma(T x) const {
    return static_cast<T>(special::Trigamma(double(x)));
  }
  OFL_HD T erfinv(T x) const {
    return static_cast<T>(special::Erfinv(double(x)));
  }
#define OFL_SPECIAL1(name, call)          \
  OFL_HD T name(T x) const {              \
    return static_cast<T>(special::call); \
  }
  OFL_SPECIAL1(i0, BesselI(double(x), 0))
  OFL_SPECIAL1(i1, BesselI(double(x), 1))
  OFL_SPECIAL1(i0e, BesselIScaled(double(x), 0))
  OFL_SPECIAL1(i1e, BesselIScaled(double(x), 1))
  OFL_SPECIAL1(k0, BesselK(double(x), 0))
  OFL_SPECIAL1(k1, BesselK(double(x), 1))
  OFL_SPECIAL1(k0e, BesselKScaled(double(x), 0))
  OFL_SPECIAL1(k1e, BesselKScaled(double(x), 1))
  OFL_SPECIAL1(j0, BesselJ0(double(x)))
  OFL_SPECIAL1(j1, BesselJ1(double(x)))
  OFL_SPECIAL1(y0, BesselY0(double(x)))
  OFL_SPECIAL1(y1, BesselY1(double(x)))
  OFL_SPECIAL1(sph_j0, SphericalBesselJ0(double(x)))
  OFL_SPECIAL1(airy_ai, AiryAi(double(x)))
  OFL_SPECIAL1(erfcx, Erfcx(double(x)))
  OFL_SPECIAL1(ndtri, Ndtri(double(x)))
  OFL_SPECIAL1(log_ndtr, LogNdtr(double(x)))
#undef OFL_SPECIAL1
  OFL_HD T polygamma(T x, int64_t n) const {
    return static_cast<T>(special::Polygamma(double(x), n));
  }
  OFL_HD T zeta(T x, T q) const {
    return static_cast<T>(special::Zeta(double(x), double(q)));
  }
  OFL_HD T igamma(T a, T x) const {
    return static_cast<T>(special::Igamma(double(a), double(x), false));
  }
  OFL_HD T igammac(T a, T x) const {
    return static_cast<T>(special::Igamma(double(a), double(x), true));
  }
  OFL_HD T orthopoly(int kind, T x, T n) const {
    return static_cast<T>(special::OrthoPoly(kind, double(x), double(n)));
  }

 private:
  OFL_HD T IntDiv(T x, T y, int which) const {  // 0 floor_divide, 1 remainder, 2 fmod
    if constexpr (kFloat || std::is_same_v<T, bool>) {
      return x;
    } else {
      using U = std::make_unsigned_t<T>;
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) return which == 0 ? static_cast<T>(U(0) - static_cast<U>(x)) : T(0);
      }
      T q = static_cast<T>(x / y), r = static_cast<T>(x % y);
      if (which == 2) return r;
      bool adjust = r != 0 && ((r < 0) != (y < 0));
      if (which == 0) return adjust ? T(q - 1) : q;
      return adjust ? T(r + y) : r;
    }
  }
  OFL_HD T Float(T x, int which) const {
    if constexpr (kFloat) {
#if defined(__CUDA_ARCH__)
      if constexpr (std::is_same_v<T, float>)
        return which == 0 ? floorf(x) : which == 1 ? ceilf(x) : rintf(x);
      else
        return which == 0 ? ::floor(x) : which == 1 ? ::ceil(x) : ::rint(x);
#else
      return which == 0 ? std::floor(x) : which == 1 ? std::ceil(x) : std::nearbyint(x);
#endif
    } else {
      return x;
    }
  }
};

}  // namespace opdefs
}  // namespace oneflow_like
