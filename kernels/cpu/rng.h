// Counter-based random numbers for CPU kernels: element i of an op with seed s gets
// Philox-like bits from (s, i), so any split of the work gives the same tensor.
#pragma once
#include <cmath>
#include <cstdint>

namespace oneflow_like {
namespace kernels {

inline uint64_t RngBits(uint64_t seed, uint64_t i) {
  uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
// Uniform in [0, 1) with 53 random bits.
inline double RngUniform(uint64_t seed, uint64_t i) {
  return (RngBits(seed, i) >> 11) * (1.0 / 9007199254740992.0);
}
// Standard normal (Box-Muller on two uniforms of a derived stream).
inline double RngNormal(uint64_t seed, uint64_t i) {
  double u1 = RngUniform(seed, 2 * i), u2 = RngUniform(seed, 2 * i + 1);
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace kernels
}  // namespace oneflow_like
