// Special functions of the unary table (lgamma, digamma, trigamma, erfinv), evaluated in double
// on the host and in CUDA kernels alike. Device-safe: only the C math functions CUDA provides.
#pragma once
#include <cmath>
#include <limits>

#if !defined(OFL_HD)
#error "include oneflow_like/opdefs/math.h"
#endif

namespace oneflow_like {
namespace opdefs {
namespace special {

constexpr double kPi = 3.14159265358979323846;

// log|Gamma(x)|; the host's lgamma writes the global signgam, so it uses the reentrant form.
OFL_HD double Lgamma(double x) {
#if defined(__CUDA_ARCH__)
  return ::lgamma(x);
#else
  int sign;
  return ::lgamma_r(x, &sign);
#endif
}

// psi(x) = d/dx log Gamma(x): reflection below 0, recurrence up to 10, then the asymptotic
// series (error below 1e-16 there). As PyTorch: -inf at +0, +inf at -0, NaN at negative integers.
OFL_HD double Digamma(double x) {
  const double inf = std::numeric_limits<double>::infinity();
  if (x == 0) return 1 / x < 0 ? inf : -inf;  // the sign of zero
  double acc = 0;
  if (x < 0) {
    if (x == ::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    acc = -kPi / ::tan(kPi * x);  // psi(x) = psi(1 - x) - pi / tan(pi x)
    x = 1 - x;
  }
  if (x != x || x == inf) return x + acc;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  double z = 1 / (x * x);
  double series =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
  return acc + ::log(x) - 0.5 / x - series;
}

// psi'(x): reflection psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x), recurrence, asymptotic series.
OFL_HD double Trigamma(double x) {
  double acc = 0, sign = 1;
  if (x < 0.5) {
    double s = ::sin(kPi * x);
    acc = kPi * kPi / (s * s);
    sign = -1;
    x = 1 - x;
  }
  double rec = 0;
  while (x < 10) {
    rec += 1 / (x * x);
    x += 1;
  }
  double z = 1 / (x * x);
  double tail =
      (1 + 0.5 / x + z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30))))) / x;
  return acc + sign * (rec + tail);
}

// erf^-1(y): a polynomial start in w = -log(1 - y^2) (M. Giles' form), then Newton steps on erf.
OFL_HD double Erfinv(double y) {
  const double inf = std::numeric_limits<double>::infinity();
  if (y != y || y < -1 || y > 1) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1 || y == -1) return y * inf;
  double w = -::log((1 - y) * (1 + y)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = ::sqrt(w) - 3;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * y;
  for (int i = 0; i < 3; ++i) {  // d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2)
    double d = 1.12837916709551257390 * ::exp(-x * x);
    if (d == 0) break;
    x -= (::erf(x) - y) / d;
  }
  return x;
}

}  // namespace special
}  // namespace opdefs
}  // namespace oneflow_like
