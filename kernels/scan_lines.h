// The line recurrences of the scan family shared by the CPU kernels (kernels/cpu/scan.cc) and the
// CUDA kernels (kernels/cuda/scan.cu, compiled by nvcc): one n-long line of a tensor at `base`
// with element stride `st`, floats computed in double, so both devices compute the same values.
// Plain C++ and <cmath> only (nvcc includes it in device code).
#pragma once
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OFL_SCAN_HD __host__ __device__ __forceinline__
#else
#define OFL_SCAN_HD inline
#endif

namespace oneflow_like {
namespace scan_lines {

template <typename T>
OFL_SCAN_HD bool IsNan(T v) {
  return v != v;  // false for integers and bool
}

// out_j = log(exp(out_{j-1}) + exp(x_j)), computed as max + log1p(exp(-|difference|)).
template <typename T>
OFL_SCAN_HD void LogCumSumExp(const T* x, T* out, int64_t base, int64_t st, int64_t n) {
  const double inf = HUGE_VAL;
  double acc = -inf;
  for (int64_t j = 0; j < n; ++j) {
    double v = static_cast<double>(x[base + j * st]);
    double hi = acc > v ? acc : v, lo = acc > v ? v : acc;
    if (IsNan(v) || IsNan(acc))
      acc = v + acc;  // NaN
    else if (lo == -inf || hi == lo)
      acc = hi == lo && hi - hi == 0 ? hi + log(2.0) : hi;
    else
      acc = hi + log1p(exp(lo - hi));
    out[base + j * st] = static_cast<T>(acc);
  }
}

// cumprod's gradient: d out_j / d x_i = prod_{k <= j, k != i} x_k. With z the first zero of the
// line: for i < z, dx_i = sum_{i <= j < z} g_j out_j / x_i; dx_z = sum_{j >= z} g_j
// prod_{k <= j, k != z} x_k; dx_i = 0 for i > z.
template <typename T>
OFL_SCAN_HD void CumprodGrad(const T* xv, const T* ov, const T* gv, T* d, int64_t base, int64_t st,
                             int64_t n) {
  int64_t z = 0;
  while (z < n && xv[base + z * st] != 0) ++z;
  double acc = 0;
  for (int64_t j = z - 1; j >= 0; --j) {
    int64_t p = base + j * st;
    acc += static_cast<double>(gv[p]) * ov[p];
    d[p] = static_cast<T>(acc / xv[p]);
  }
  if (z == n) return;
  double term = z == 0 ? 1.0 : static_cast<double>(ov[base + (z - 1) * st]), sum = 0;
  for (int64_t j = z; j < n; ++j) {
    if (j > z) term *= xv[base + j * st];
    sum += static_cast<double>(gv[base + j * st]) * term;
  }
  d[base + z * st] = static_cast<T>(sum);
  for (int64_t j = z + 1; j < n; ++j) d[base + j * st] = 0;
}

// logcumsumexp's gradient: dx_i = sum_{j >= i} g_j exp(x_i - out_j) = exp(x_i - out_i) T_i with
// T_i = g_i + exp(out_i - out_{i+1}) T_{i+1}; out never decreases, so both factors are <= 1
// (equal infinities give 1).
template <typename T>
OFL_SCAN_HD void LogCumSumExpGrad(const T* xv, const T* ov, const T* gv, T* d, int64_t base,
                                  int64_t st, int64_t n) {
  auto ratio = [](double a, double b) { return a == b ? 1.0 : exp(a - b); };
  double t = 0;
  for (int64_t j = n - 1; j >= 0; --j) {
    int64_t p = base + j * st;
    t = gv[p] + (j + 1 < n ? ratio(ov[p], ov[p + st]) * t : 0.0);
    d[p] = static_cast<T>(ratio(xv[p], ov[p]) * t);
  }
}

// Running max (min) and its index: the last of equal values; a NaN sticks (PyTorch's cummax).
template <bool kMax, typename T>
OFL_SCAN_HD void CumExtreme(const T* xv, T* o, int64_t* iv, int64_t base, int64_t st, int64_t n) {
  T best{};
  int64_t bi = 0;
  for (int64_t j = 0; j < n; ++j) {
    T v = xv[base + j * st];
    bool take = j == 0 || IsNan(v) || (!IsNan(best) && (kMax ? !(v < best) : !(best < v)));
    if (take) best = v, bi = j;
    o[base + j * st] = best;
    iv[base + j * st] = bi;
  }
}

}  // namespace scan_lines
}  // namespace oneflow_like
