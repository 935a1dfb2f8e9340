// The CPU's counter-based RNG (kernels/cpu/rng.h) for host and device code: element i of an op
// with seed s is a function of (s, i) only, so CUDA kernels draw the CPU's numbers. Keep in
// step with kernels/cpu/rng.h. Device arithmetic uses the _rn intrinsics so nvcc cannot fuse
// multiply-adds (the CPU build does not contract either); log/cos/sqrt of the normal draw come
// from the device math library (last-ulp differences in f64 are possible).
#pragma once
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OFL_HD __host__ __device__ __forceinline__
#else
#define OFL_HD inline
#endif

namespace oneflow_like {
namespace cuda {

OFL_HD uint64_t RngBits(uint64_t seed, uint64_t i) {
  uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// a * b + c rounded twice, never fused.
OFL_HD double MulAdd(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(__dmul_rn(a, b), c);
#else
  return a * b + c;
#endif
}
OFL_HD double RngUniform(uint64_t seed, uint64_t i) {
  double b = static_cast<double>(RngBits(seed, i) >> 11);
#ifdef __CUDA_ARCH__
  return __dmul_rn(b, 1.0 / 9007199254740992.0);
#else
  return b * (1.0 / 9007199254740992.0);
#endif
}
OFL_HD double RngNormal(uint64_t seed, uint64_t i) {
  double u1 = RngUniform(seed, 2 * i), u2 = RngUniform(seed, 2 * i + 1);
  if (u1 < 1e-300) u1 = 1e-300;
#ifdef __CUDA_ARCH__
  return __dmul_rn(::sqrt(__dmul_rn(-2.0, ::log(u1))), ::cos(__dmul_rn(6.283185307179586, u2)));
#else
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
#endif
}

}  // namespace cuda
}  // namespace oneflow_like
