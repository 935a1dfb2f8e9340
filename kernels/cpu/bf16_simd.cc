// Runtime-dispatched bfloat16 <-> float conversions (bf16_simd.h). The AVX-512 functions are
// compiled with __attribute__((target)) (the build's baseline is AVX2) and chosen per call from
// one cpuid check, so the library still runs on CPUs without AVX-512.
//
// Narrowing rounds with integer arithmetic (round to nearest even, NaN -> 0x7fc0, subnormals
// kept), not with AVX512_BF16's vcvtneps2bf16: that instruction flushes subnormal inputs to zero
// and keeps NaN payloads, so its results would differ from the scalar bfloat16(float) and from
// the cast kernel in those cases. The loop is memory-bound either way.
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/bf16_simd.h"

// GCC 12's AVX-512 intrinsics start from _mm*_undefined_* (a self-initialised variable), which
// -Wmaybe-uninitialized reports at -O3; the values are fully written by the intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace oneflow_like {
namespace kernels {
namespace {

__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i RoundToBf16Bits512(__m512i u) {
  const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  r = _mm512_srli_epi32(r, 16);
  return _mm512_mask_blend_epi32(nan, r, _mm512_set1_epi32(0x7fc0));
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void NarrowAvx512(const float* src,
                                                                       bfloat16* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i r = RoundToBf16Bits512(_mm512_loadu_si512(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtepi32_epi16(r));
  }
  if (i < n) {  // the tail under a mask: no scalar loop
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    __m512i r = RoundToBf16Bits512(_mm512_maskz_loadu_epi32(m, src + i));
    _mm256_mask_storeu_epi16(dst + i, m, _mm512_cvtepi32_epi16(r));
  }
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void WidenAvx512(const bfloat16* src,
                                                                      float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i w =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_si512(dst + i, _mm512_slli_epi32(w, 16));
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, src + i));
    _mm512_mask_storeu_epi32(dst + i, m, _mm512_slli_epi32(w, 16));
  }
}

bool DetectAvx512() {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl"))
    return false;
  const char* env = std::getenv("OFL_BF16_AVX512");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

}  // namespace

bool Bf16UseAvx512() {
  static const bool on = DetectAvx512();
  return on;
}

void WidenBf16(const bfloat16* src, float* dst, int64_t n) {
  if (Bf16UseAvx512()) return WidenAvx512(src, dst, n);
  Bf16ToFloat(src, dst, n);
}

void NarrowToBf16(const float* src, bfloat16* dst, int64_t n) {
  if (Bf16UseAvx512()) return NarrowAvx512(src, dst, n);
  FloatToBf16(src, dst, n);
}

}  // namespace kernels
}  // namespace oneflow_like
