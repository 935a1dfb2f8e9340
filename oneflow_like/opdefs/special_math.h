// Special functions of the unary table (lgamma, digamma, trigamma, erfinv, Bessel, Airy, the
// normal distribution's tails, erfcx), evaluated in double
// on the host and in CUDA kernels alike. Device-safe: only the C math functions CUDA provides.
#pragma once
#include <cmath>
#include <cstdint>
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

// ---- Bessel functions, the normal distribution's tails, erfcx (torch.special) ----

// exp(-|x|) I_nu(x) for nu = 0 or 1: the power series up to |x| = 30 (positive terms, no
// cancellation), then the asymptotic expansion e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k,
// whose terms fall below 1e-17 before they start to grow for x > 30.
OFL_HD double BesselIScaled(double x, int nu) {
  const double ax = ::fabs(x);
  if (ax != ax) return x;
  double r;
  if (ax <= 30) {
    const double q = ax * ax / 4;
    double term = nu == 0 ? 1 : ax / 2, sum = term;
    for (int k = 1; k < 200 && term > sum * 1e-17; ++k) {
      term *= q / (k * static_cast<double>(k + nu));
      sum += term;
    }
    r = sum * ::exp(-ax);
  } else {
    const double mu = 4.0 * nu * nu;
    double term = 1, sum = 1;
    for (int k = 1; k < 40; ++k) {
      const double odd = 2.0 * k - 1;
      term *= -(mu - odd * odd) / (k * 8.0 * ax);
      sum += term;
      if (::fabs(term) < 1e-17 * ::fabs(sum)) break;
    }
    r = sum / ::sqrt(2 * kPi * ax);
  }
  return nu == 1 && x < 0 ? -r : r;
}
OFL_HD double BesselI(double x, int nu) {
  const double ax = ::fabs(x);
  if (ax == std::numeric_limits<double>::infinity()) return nu == 1 ? x : ax;
  if (ax > 30) {  // e^|x| * scaled, overflowing to inf past about 713 as it should
    const double e = ::exp(ax / 2);
    return BesselIScaled(x, nu) * e * e;
  }
  return BesselIScaled(x, nu) * ::exp(ax);
}

// exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, by the trapezoid rule, which
// converges exponentially for this analytic, doubly-exponentially decaying integrand once the
// step resolves the peak at t = 0 (width 1 / sqrt(x)). K(0) = inf; K(x < 0) = NaN.
OFL_HD double BesselKScaled(double x, double nu) {
  if (x != x || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return 0;
  const double h = ::fmin(0.25, 0.5 / ::sqrt(x));
  double sum = 0.5;  // t = 0
  for (int j = 1; j < 4000; ++j) {
    const double t = j * h;
    const double sh = ::sinh(t / 2);  // cosh t - 1 = 2 sinh^2(t / 2), without cancellation
    const double f = ::exp(-2 * x * sh * sh) * ::cosh(nu * t);
    sum += f;
    if (f < 1e-18 * sum) break;
  }
  return sum * h;
}
OFL_HD double BesselK(double x, double nu) {
  if (x > 0) {  // exp(-x) split in two: exp(-x) alone underflows before K does
    const double e = ::exp(-x / 2);
    return BesselKScaled(x, nu) * e * e;
  }
  return BesselKScaled(x, nu);
}

// exp(x^2) erfc(x): exp(x^2) split as exp(hi) * (1 + lo) with x^2 = hi + lo exactly (so the
// product keeps erfc's relative accuracy up to x = 26), then the Laplace continued fraction
// where erfc underflows; erfcx(-x) = 2 exp(x^2) - erfcx(x).
OFL_HD double ErfcxNonNegative(double x) {
  if (x < 26) {
    const double hi = x * x, lo = ::fma(x, x, -hi);
    return ::exp(hi) * (1 + lo) * ::erfc(x);
  }
  if (x == std::numeric_limits<double>::infinity()) return 0;
  double f = x;  // x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))
  for (int k = 40; k >= 1; --k) f = x + (k / 2.0) / f;
  return 1 / (::sqrt(kPi) * f);
}
OFL_HD double Erfcx(double x) {
  if (x != x || x >= 0) return x != x ? x : ErfcxNonNegative(x);
  if (x < -26.7) return std::numeric_limits<double>::infinity();
  const double hi = x * x, lo = ::fma(x, x, -hi);
  return 2 * ::exp(hi) * (1 + lo) - ErfcxNonNegative(-x);
}

// Phi(x) = P(N(0, 1) <= x) and its log, accurate in both tails.
OFL_HD double Ndtr(double x) {
  return 0.5 * ::erfc(-x * 0.70710678118654752440);
}
OFL_HD double LogNdtr(double x) {
  if (x > 0) return ::log1p(-0.5 * ::erfc(x * 0.70710678118654752440));
  if (x > -30) return ::log(Ndtr(x));
  const double z = -x * 0.70710678118654752440;  // Phi(x) = erfcx(z) exp(-z^2) / 2
  return ::log(0.5 * Erfcx(z)) - z * z;
}

// Phi^-1(p): Abramowitz & Stegun 26.2.23's start (error < 4.5e-4) in the lower half, then Halley
// steps on Phi(x) - p, whose erfc form keeps relative accuracy in the tail; the upper half by
// symmetry (1 - p is exact there).
OFL_HD double NdtriLowerHalf(double p) {  // 0 < p < 0.5
  const double t = ::sqrt(-2 * ::log(p));
  double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) /
                       (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (int i = 0; i < 4; ++i) {
    const double pdf = ::exp(-0.5 * x * x) * 0.39894228040143267794;
    if (pdf == 0) break;
    const double d = (Ndtr(x) - p) / pdf;
    x -= d / (1 + 0.5 * x * d);
  }
  return x;
}
OFL_HD double Ndtri(double p) {
  if (p != p || p < 0 || p > 1) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0) return -std::numeric_limits<double>::infinity();
  if (p == 1) return std::numeric_limits<double>::infinity();
  if (p == 0.5) return 0;
  return p > 0.5 ? -NdtriLowerHalf(1 - p) : NdtriLowerHalf(p);
}

// Bessel functions of the first and second kind (the C library's, on the host and in CUDA).
OFL_HD double BesselJ0(double x) {
  return ::j0(x);
}
OFL_HD double BesselJ1(double x) {
  return ::j1(x);
}
OFL_HD double BesselY0(double x) {
  return x < 0 ? std::numeric_limits<double>::quiet_NaN() : ::y0(x);
}
OFL_HD double BesselY1(double x) {
  return x < 0 ? std::numeric_limits<double>::quiet_NaN() : ::y1(x);
}
// sin(x) / x, 1 at 0 and 0 at +-inf (as PyTorch).
OFL_HD double SphericalBesselJ0(double x) {
  if (x == 0) return 1;
  if (::fabs(x) == std::numeric_limits<double>::infinity()) return 0;
  return ::sin(x) / x;
}

// Double-double numbers (hi + lo, about 32 digits) for the Airy power series, whose terms are
// up to 1e9 times the result on [-10, 2]. Error-free transformations: contraction of a * b + c
// into an FMA (g++ and nvcc both contract) only makes them more exact.
struct DoubleDouble {
  double hi, lo;
};
OFL_HD DoubleDouble DDNormalize(double hi, double lo) {
  const double s = hi + lo;
  return {s, lo - (s - hi)};
}
OFL_HD DoubleDouble DDAdd(DoubleDouble a, DoubleDouble b) {
  const double s = a.hi + b.hi;
  const double bb = s - a.hi;
  const double e = (a.hi - (s - bb)) + (b.hi - bb);  // a.hi + b.hi == s + e exactly
  return DDNormalize(s, e + a.lo + b.lo);
}
OFL_HD DoubleDouble DDMul(DoubleDouble a, DoubleDouble b) {
  const double p = a.hi * b.hi;
  const double e = ::fma(a.hi, b.hi, -p);  // a.hi * b.hi == p + e exactly
  return DDNormalize(p, e + (a.hi * b.lo + a.lo * b.hi));
}
OFL_HD DoubleDouble DDDiv(DoubleDouble a, double b) {
  const double q = a.hi / b;
  const double p = q * b;
  const double pe = ::fma(q, b, -p);
  return DDNormalize(q, ((a.hi - p) - pe + a.lo) / b);
}

// Ai(x), the Airy function of the first kind (torch.special.airy_ai; NaN at +-inf as PyTorch
// and SciPy). Three ranges, each accurate to a few ulp of double (checked against mpmath):
// - [-10, 2]: Ai = c1 f(x) - c2 g(x) with the Maclaurin series f = sum 3^k (1/3)_k x^3k / (3k)!,
//   g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)! (DLMF 9.4.1), summed in double-double since the
//   terms reach e^zeta times Ai (zeta = 2/3 |x|^(3/2));
// - x > 2: Ai = sqrt(x / 3) K_1/3(zeta) / pi (DLMF 9.6.1), K by the trapezoid rule above;
// - x < -10: the Hankel expansion (DLMF 9.7.9), whose error at its smallest term is about
//   exp(-2 zeta) < 1e-18 there.
OFL_HD double AiryAi(double x) {
  if (x != x || ::fabs(x) == std::numeric_limits<double>::infinity()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (x > 2) {
    const double zeta = 2.0 / 3.0 * x * ::sqrt(x);
    const double e = ::exp(-zeta / 2);  // split: exp(-zeta) alone underflows before Ai does
    return ::sqrt(x / 3) / kPi * BesselKScaled(zeta, 1.0 / 3.0) * e * e;
  }
  if (x >= -10) {
    const DoubleDouble c1{0.3550280538878172, 2.05233632436212e-17};    // Ai(0)
    const DoubleDouble c2{0.2588194037928068, -2.522243111610832e-17};  // -Ai'(0)
    const DoubleDouble xx{x, 0};
    const DoubleDouble x3 = DDMul(DDMul(xx, xx), xx);
    DoubleDouble f{1, 0}, g = xx, tf{1, 0}, tg = xx;
    for (int k = 0; k < 200; ++k) {
      tf = DDDiv(DDMul(tf, x3), double((3 * k + 2) * (3 * k + 3)));
      tg = DDDiv(DDMul(tg, x3), double((3 * k + 3) * (3 * k + 4)));
      f = DDAdd(f, tf);
      g = DDAdd(g, tg);
      if (::fabs(tf.hi) + ::fabs(tg.hi) < 1e-34 * (::fabs(f.hi) + ::fabs(g.hi))) break;
    }
    const DoubleDouble a = DDMul(c1, f), b = DDMul(c2, g);
    return DDAdd(a, {-b.hi, -b.lo}).hi;
  }
  const double ax = -x;
  const double zeta = 2.0 / 3.0 * ax * ::sqrt(ax);
  const double z = 1 / zeta;
  double p = 1, q = 0, u = 1, pw = 1, last = 1;
  for (int k = 1; k < 60; ++k) {  // u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!)
    u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
    pw *= z;
    const double t = u * pw;
    if (t > last || t < 1e-18) break;  // past the smallest term, or converged
    last = t;
    const double sign = ((k / 2) % 2 == 0) ? 1 : -1;  // (-1)^floor(k/2)
    if (k % 2 == 0) {
      p += sign * t;
    } else {
      q += sign * t;
    }
  }
  // sin(zeta + pi/4) P - cos(zeta + pi/4) Q, with the sums of sin and cos (no rounding of pi/4
  // added to a large zeta).
  const double s = ::sin(zeta), c = ::cos(zeta);
  return ((s + c) * p - (c - s) * q) / (::sqrt(2 * kPi) * ::sqrt(::sqrt(ax)));
}

// Hurwitz zeta(s, q) = sum_{k >= 0} (k + q)^-s (SciPy's zeta(x, q), PyTorch's special.zeta):
// the first terms summed directly until k + q > 9 (at least 10 terms), then the Euler-Maclaurin
// tail with Bernoulli numbers B_2j (coefficients (2j)! / B_2j). inf at s == 1 and at q a
// non-positive integer; NaN for s < 1 and for q < 0 with s not an integer (as SciPy).
OFL_HD double Zeta(double s, double q) {
  const double inf = std::numeric_limits<double>::infinity(),
               nan = std::numeric_limits<double>::quiet_NaN();
  if (s != s || q != q) return nan;
  if (s == 1) return inf;
  if (s < 1) return nan;
  if (q <= 0) {
    if (q == ::floor(q)) return inf;
    if (s != ::floor(s)) return nan;
  }
  // (2j)! / B_2j for j = 1..12.
  const double kEm[12] = {12.0,
                          -720.0,
                          30240.0,
                          -1209600.0,
                          47900160.0,
                          -1.8924375803183791606e9,
                          7.47242496e10,
                          -2.950130727918164224e12,
                          1.1646782814350067249e14,
                          -4.5979787224074726105e15,
                          1.8152105401943546773e17,
                          -7.1661652561756670113e18};
  double sum = ::pow(q, -s), a = q, term = 0;
  int k = 0;
  while (k < 9 || a <= 9) {
    ++k;
    a += 1;
    term = ::pow(a, -s);
    sum += term;
    if (::fabs(term / sum) < 1e-17) return sum;
  }
  // sum_{n > a} n^-s ~ a^(1-s)/(s-1) - a^-s/2 + sum_j B_2j/(2j)! s(s+1)..(s+2j-2) a^(-s-2j+1)
  sum += term * a / (s - 1) - 0.5 * term;
  double rising = 1, t = term, fac = 0;
  for (int j = 0; j < 12; ++j) {
    rising *= s + fac;
    t /= a;
    const double add = rising * t / kEm[j];
    sum += add;
    if (::fabs(add / sum) < 1e-17) break;
    fac += 1;
    rising *= s + fac;
    t /= a;
    fac += 1;
  }
  return sum;
}

// polygamma(n, x) = d^n/dx^n digamma(x): digamma and trigamma for n = 0, 1, else
// (-1)^(n+1) n! zeta(n + 1, x). n < 0 is rejected before the kernel.
OFL_HD double Polygamma(double x, int64_t n) {
  if (n == 0) return Digamma(x);
  if (n == 1) return Trigamma(x);
  double fact = 1;
  for (int64_t i = 2; i <= n; ++i) fact *= static_cast<double>(i);
  return (n % 2 == 1 ? 1.0 : -1.0) * fact * Zeta(static_cast<double>(n + 1), x);
}

// The regularized lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a) and its complement
// Q = 1 - P (PyTorch's igamma / igammac, SciPy's gammainc / gammaincc): the power series for
// x < a + 1, else Lentz's continued fraction for Q, both to double precision; the prefactor
// x^a e^-x / Gamma(a) in logs. a < 0 or x < 0: NaN; a == 0: P = 1 for x > 0 (Q = 0), NaN at 0.
OFL_HD double IgammaSeries(double a, double x) {  // P(a, x), x < a + 1
  double ap = a, del = 1 / a, sum = del;
  for (int i = 0; i < 2000; ++i) {
    ap += 1;
    del *= x / ap;
    sum += del;
    if (::fabs(del) < ::fabs(sum) * 1e-17) break;
  }
  return sum * ::exp(-x + a * ::log(x) - Lgamma(a));
}
OFL_HD double IgammacFraction(double a, double x) {  // Q(a, x), x >= a + 1
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 2000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (::fabs(del - 1) < 1e-17) break;
  }
  return ::exp(-x + a * ::log(x) - Lgamma(a)) * h;
}
OFL_HD double Igamma(double a, double x, bool upper) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a != a || x != x || a < 0 || x < 0) return nan;
  if (a == 0) return x > 0 ? (upper ? 0.0 : 1.0) : nan;
  if (x == 0) return upper ? 1.0 : 0.0;
  if (x == std::numeric_limits<double>::infinity()) return upper ? 0.0 : 1.0;
  if (a == std::numeric_limits<double>::infinity()) return upper ? 1.0 : 0.0;
  if (x < a + 1) {
    const double p = IgammaSeries(a, x);
    return upper ? 1 - p : p;
  }
  const double q = IgammacFraction(a, x);
  return upper ? q : 1 - q;
}

// The orthogonal polynomials of torch.special at degree n (truncated to an integer; n < 0
// gives 0), by their three-term recurrences in double. kind: 0-3 Chebyshev T U V W, 4 Hermite H
// (physicists'), 5 Hermite He (probabilists'), 6 Laguerre L, 7 Legendre P, 8-11 the shifted
// Chebyshev T U V W (x -> 2x - 1).
OFL_HD double OrthoPoly(int kind, double x, double n_real) {
  if (x != x || n_real != n_real) return std::numeric_limits<double>::quiet_NaN();
  if (n_real < 0) return 0;
  const int64_t n = static_cast<int64_t>(n_real);
  if (kind >= 8) {
    x = 2 * x - 1;
    kind -= 8;
  }
  if (n == 0) return 1;
  double p0 = 1, p1;
  switch (kind) {
    case 0: p1 = x; break;
    case 1: p1 = 2 * x; break;
    case 2: p1 = 2 * x - 1; break;
    case 3: p1 = 2 * x + 1; break;
    case 4: p1 = 2 * x; break;
    case 5: p1 = x; break;
    case 6: p1 = 1 - x; break;
    default: p1 = x; break;
  }
  for (int64_t k = 1; k < n; ++k) {
    const double kk = static_cast<double>(k);
    double p2;
    switch (kind) {
      case 4: p2 = 2 * x * p1 - 2 * kk * p0; break;
      case 5: p2 = x * p1 - kk * p0; break;
      case 6: p2 = ((2 * kk + 1 - x) * p1 - kk * p0) / (kk + 1); break;
      case 7: p2 = ((2 * kk + 1) * x * p1 - kk * p0) / (kk + 1); break;
      default: p2 = 2 * x * p1 - p0; break;  // the Chebyshev kinds
    }
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

}  // namespace special
}  // namespace opdefs
}  // namespace oneflow_like
