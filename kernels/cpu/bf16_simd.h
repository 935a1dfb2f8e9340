// Vectorised bfloat16 <-> float conversions for the CPU kernels (the build's AVX2 baseline,
// x86-64-v3): the same results as bfloat16's scalar constructor (round to nearest even, any NaN
// becomes the quiet NaN 0x7fc0, subnormals kept), 16 elements per step, the tail scalar.
// Widening is exact (a 16-bit shift). Used by the cast kernel (autocast's casts), the fused
// attention's operand conversion and the bf16 matmul fallback.
// WidenBf16 / NarrowToBf16 (bf16_simd.cc) are the same conversions with runtime CPU dispatch:
// AVX-512 (F, BW, VL; masked tails) where the CPU has it, else the AVX2 code below; the bf16
// elementwise, softmax, layer_norm and reduction kernels (bf16_loops.h) use them.
#pragma once
#include <cstdint>

#include "oneflow_like/base/dtype.h"
#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace oneflow_like {
namespace kernels {

#ifdef __AVX2__
// Eight floats' bits (as int32) rounded to bf16 bits in the low 16 bits of each lane.
inline __m256i RoundToBf16Bits(__m256i u) {
  const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  r = _mm256_srli_epi32(r, 16);
  return _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), nan);
}
#endif

// dst[i] = bfloat16(src[i]) for i < n.
inline void FloatToBf16(const float* src, bfloat16* dst, int64_t n) {
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 16 <= n; i += 16) {
    __m256i lo = RoundToBf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    __m256i hi = RoundToBf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8)));
    // packus works per 128-bit lane: [lo0 hi0 lo1 hi1] -> reorder the 64-bit quarters.
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
#endif
  for (; i < n; ++i) dst[i] = bfloat16(src[i]);
}

// dst[i] = float(src[i]) for i < n.
inline void Bf16ToFloat(const bfloat16* src, float* dst, int64_t n) {
  int64_t i = 0;
#ifdef __AVX2__
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(w, 16));
  }
#endif
  for (; i < n; ++i) dst[i] = float(src[i]);
}

// Runtime-dispatched conversions (bf16_simd.cc): bit-identical to the functions above.
void WidenBf16(const bfloat16* src, float* dst, int64_t n);
void NarrowToBf16(const float* src, bfloat16* dst, int64_t n);
// Whether the AVX-512 paths run: the CPU has AVX-512F, BW and VL and the environment
// variable OFL_BF16_AVX512 is not "0" (read once; the tests set it to run the AVX2 fallback).
bool Bf16UseAvx512();

}  // namespace kernels
}  // namespace oneflow_like
