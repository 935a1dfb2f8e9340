// Vectorised transcendental functions for CPU kernels (AVX2 + FMA, which the build targets:
// .bazelrc's -march=x86-64-v3), with scalar tails and scalar double overloads, on vec_exp.h's
// Exp8: in-place sigmoid / tanh over arrays (the recurrent kernels' gate activations). Relative
// error about 1e-7 in f32 (Cephes' polynomials).
#pragma once
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/vec_exp.h"

namespace oneflow_like {
namespace kernels {

#ifdef __AVX2__
// tanh(x) for 8 floats: Cephes' odd polynomial below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above,
// with x's sign.
inline __m256 Tanh8(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745E-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036E-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422E-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  const __m256 e = Exp8(_mm256_add_ps(ax, ax));
  __m256 big =
      _mm256_sub_ps(_mm256_set1_ps(1.0f),
                    _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  big = _mm256_or_ps(big, sign);
  const __m256 use_small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ);
  return _mm256_blendv_ps(big, small, use_small);
}
// 1 / (1 + exp(-x)) for 8 floats.
inline __m256 Sigmoid8(__m256 x) {
  const __m256 e = Exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f)));
}
#endif

inline void SigmoidInPlace(float* v, int64_t n) {
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(v + i, Sigmoid8(_mm256_loadu_ps(v + i)));
#endif
  for (; i < n; ++i) v[i] = 1.0f / (1.0f + std::exp(-v[i]));
}
inline void TanhInPlace(float* v, int64_t n) {
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(v + i, Tanh8(_mm256_loadu_ps(v + i)));
#endif
  for (; i < n; ++i) v[i] = std::tanh(v[i]);
}
inline void SigmoidInPlace(double* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = 1.0 / (1.0 + std::exp(-v[i]));
}
inline void TanhInPlace(double* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = std::tanh(v[i]);
}

}  // namespace kernels
}  // namespace oneflow_like
