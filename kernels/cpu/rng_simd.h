// Block versions of kernels/cpu/rng.h for CPU kernels that draw one number per element: the
// same bits as the scalar functions (so CPU and CUDA still agree), four counters at a time with
// AVX2 where the build has it (AVX2 has no 64-bit multiply: each one is three vpmuludq).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cpu/rng.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace oneflow_like {
namespace kernels {

// The 53 bits behind RngUniform: RngUniform(s, i) == (RngBits(s, i) >> 11) * 2^-53 exactly (the
// integer is below 2^53, so its conversion and the power-of-two scaling are both exact).
//
// RngUniform(s, i) >= p  <=>  (RngBits(s, i) >> 11) >= UniformThreshold(p), for every double p:
// p * 2^53 is exact (a power-of-two scaling of a value in [0, 1] neither rounds nor overflows), and
// for an integer u, u >= y <=> u >= ceil(y). A NaN p, or p > 1, compares false for every draw
// (threshold 2^53, above every u); p <= 0 compares true for every draw (threshold 0).
inline uint64_t UniformThreshold(double p) {
  constexpr double kTwo53 = 9007199254740992.0;
  if (!(p <= 1.0)) return uint64_t(1) << 53;
  if (p <= 0.0) return 0;
  return static_cast<uint64_t>(std::ceil(p * kTwo53));
}

#if defined(__AVX2__)
namespace rng_simd {
// a * c mod 2^64 per lane, c = (c_hi << 32) | c_lo broadcast.
inline __m256i Mul64(__m256i a, __m256i c_lo, __m256i c_hi) {
  __m256i ll = _mm256_mul_epu32(a, c_lo);
  __m256i cross =
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), c_lo), _mm256_mul_epu32(a, c_hi));
  return _mm256_add_epi64(ll, _mm256_slli_epi64(cross, 32));
}
// RngBits(seed, i) >> 11 for four lanes given i * 0x9e3779b97f4a7c15 per lane.
inline __m256i Bits53(__m256i i_times_c1, __m256i seed) {
  const __m256i c2l = _mm256_set1_epi64x(0x1ce4e5b9LL), c2h = _mm256_set1_epi64x(0xbf58476dLL);
  const __m256i c3l = _mm256_set1_epi64x(0x133111ebLL), c3h = _mm256_set1_epi64x(0x94d049bbLL);
  __m256i x = _mm256_xor_si256(seed, i_times_c1);
  x = Mul64(_mm256_xor_si256(x, _mm256_srli_epi64(x, 30)), c2l, c2h);
  x = Mul64(_mm256_xor_si256(x, _mm256_srli_epi64(x, 27)), c3l, c3h);
  return _mm256_srli_epi64(_mm256_xor_si256(x, _mm256_srli_epi64(x, 31)), 11);
}
// Walks counters begin, begin + 1, ... four lanes at a time (i * C1 advanced by addition).
struct Counter4 {
  static constexpr uint64_t kC1 = 0x9e3779b97f4a7c15ULL;
  __m256i ic, step, seed;
  Counter4(uint64_t s, uint64_t begin)
      : ic(_mm256_set_epi64x(
            static_cast<int64_t>((begin + 3) * kC1), static_cast<int64_t>((begin + 2) * kC1),
            static_cast<int64_t>((begin + 1) * kC1), static_cast<int64_t>(begin * kC1))),
        step(_mm256_set1_epi64x(static_cast<int64_t>(4 * kC1))),
        seed(_mm256_set1_epi64x(static_cast<int64_t>(s))) {}
  __m256i Next() {
    __m256i r = Bits53(ic, seed);
    ic = _mm256_add_epi64(ic, step);
    return r;
  }
};
}  // namespace rng_simd
#endif

// keep[j] = ~0u if RngUniform(seed, begin + j) >= p else 0, with thr = UniformThreshold(p).
inline void RngAtLeastMask(uint64_t seed, uint64_t begin, int64_t n, uint64_t thr, uint32_t* keep) {
  int64_t j = 0;
#if defined(__AVX2__)
  rng_simd::Counter4 c(seed, begin);
  // u >= thr <=> u > thr - 1 as signed 64-bit (u < 2^53, thr <= 2^53; thr = 0 gives -1).
  const __m256i t = _mm256_set1_epi64x(static_cast<int64_t>(thr) - 1);
  const __m256i even_lanes = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  for (; j + 8 <= n; j += 8) {
    __m256i m0 = _mm256_cmpgt_epi64(c.Next(), t), m1 = _mm256_cmpgt_epi64(c.Next(), t);
    // Lane k of m0 -> 32-bit slot k, lane k of m1 -> slot 4 + k.
    __m256i m = _mm256_permutevar8x32_epi32(_mm256_blend_epi32(m0, _mm256_slli_epi64(m1, 32), 0xAA),
                                            even_lanes);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(keep + j), m);
  }
#endif
  for (; j < n; ++j) keep[j] = (RngBits(seed, begin + j) >> 11) >= thr ? ~0u : 0u;
}

// u[j] = RngUniform(seed, begin + j), bit for bit.
inline void RngUniformBlock(uint64_t seed, uint64_t begin, int64_t n, double* u) {
  int64_t j = 0;
#if defined(__AVX2__)
  rng_simd::Counter4 c(seed, begin);
  // Exact u64 -> double for u < 2^53: (hi | bits(2^84)) - (2^84 + 2^52) + (lo | bits(2^52)).
  const __m256i lo_mask = _mm256_set1_epi64x(0xffffffffLL);
  const __m256i e52 = _mm256_set1_epi64x(0x4330000000000000LL),
                e84 = _mm256_set1_epi64x(0x4530000000000000LL);
  const __m256d bias = _mm256_set1_pd(19342813118337666422669312.0);  // 2^84 + 2^52
  const __m256d scale = _mm256_set1_pd(1.0 / 9007199254740992.0);
  for (; j + 4 <= n; j += 4) {
    __m256i b = c.Next();
    __m256d hi =
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(b, 32), e84)), bias);
    __m256d lo = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(b, lo_mask), e52));
    _mm256_storeu_pd(u + j, _mm256_mul_pd(_mm256_add_pd(hi, lo), scale));
  }
#endif
  for (; j < n; ++j) u[j] = RngUniform(seed, begin + j);
}

}  // namespace kernels
}  // namespace oneflow_like
