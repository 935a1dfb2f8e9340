// Small helpers shared by the shape, index, creation and random CPU kernels: scalar conversion
// from an attribute's double, addition that also covers bool/f16/bf16, and a strided copy.
#pragma once
#include <cstring>
#include <type_traits>

#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {

template <typename T>
inline T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else if constexpr (!std::is_arithmetic_v<T>)  // f16, bf16, float8: round from float
    return T(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, uint64_t>)  // above 2^63, or negative (wraps, as torch)
    return v >= 0 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    return static_cast<T>(v);
}

template <typename T>
inline T AddValues(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    return T(static_cast<float>(a) + static_cast<float>(b));
  else
    return static_cast<T>(a + b);
}

// out (any strides) = in (any strides, negative allowed), same shape and dtype.
inline void CopyStrided(const TensorView& out, const TensorView& in) {
  if (out.numel() == 0) return;
  if (out.contiguous() && in.contiguous()) {
    std::memcpy(out.data, in.data, out.numel() * DTypeSize(out.dtype));
    return;
  }
  // A copy moves bytes: one instantiation per element size serves every dtype (the limited
  // and complex ones included).
  OFL_SWITCH_SIZE(DTypeSize(out.dtype),
                  { UnaryLoop<scalar_t, scalar_t>(out, in, [](scalar_t v) { return v; }); });
}

}  // namespace kernels
}  // namespace oneflow_like
