// Native bfloat16 loops for the CPU kernels: bf16 operands are widened to float a chunk at a time
// (kBf16Chunk elements, in a stack buffer that stays in L1), the op's float formula runs on the
// chunk (the compiler vectorises it), and the result is rounded back to bf16 (or written as
// another type). One pass over memory at bf16 width, instead of Dispatch's f32 round trip (a cast
// of every input to f32, the f32 kernel, a cast of the output back): the same values, since that
// path also computes in f32 and rounds once. Conversions: bf16_simd.h (AVX-512 at run time).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/cpu/bf16_simd.h"
#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {

constexpr int64_t kBf16Chunk = 512;

// buf[i] = float(src[i * stride]) for i < n.
inline void LoadBf16(const bfloat16* src, int64_t stride, float* buf, int64_t n) {
  if (stride == 1) return WidenBf16(src, buf, n);
  if (stride == 0) return std::fill(buf, buf + n, float(src[0]));
  for (int64_t i = 0; i < n; ++i) buf[i] = float(src[i * stride]);
}

// dst[i * stride] = bfloat16(buf[i]) for i < n.
inline void StoreBf16(const float* buf, bfloat16* dst, int64_t stride, int64_t n) {
  if (stride == 1) return NarrowToBf16(buf, dst, n);
  for (int64_t i = 0; i < n; ++i) dst[i * stride] = bfloat16(buf[i]);
}

// out[i] = f(a[i]) for bf16 a and out (any strides; out may alias a), f: float -> float.
template <typename F>
void Bf16UnaryLoop(const TensorView& out, const TensorView& a, F f) {
  auto run = [&f](const bfloat16* x, int64_t sx, bfloat16* o, int64_t so, int64_t n) {
    float buf[kBf16Chunk];
    for (int64_t i = 0; i < n; i += kBf16Chunk) {
      const int64_t m = std::min(kBf16Chunk, n - i);
      LoadBf16(x + i * sx, sx, buf, m);
      for (int64_t j = 0; j < m; ++j) buf[j] = f(buf[j]);
      StoreBf16(buf, o + i * so, so, m);
    }
  };
  if (out.contiguous() && a.contiguous()) {
    const bfloat16* x = a.ptr<const bfloat16>();
    bfloat16* o = out.ptr<bfloat16>();
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) { run(x + b, 1, o + b, 1, e - b); });
    return;
  }
  std::array<const DimVector*, 2> st{&out.strides, &a.strides};
  ForEachRow<2>(out.shape, st, {static_cast<char*>(out.data), static_cast<char*>(a.data)}, {2, 2},
                [&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                  run(reinterpret_cast<const bfloat16*>(p[1]), s[1],
                      reinterpret_cast<bfloat16*>(p[0]), s[0], n);
                });
}

// out[i] = f(a[i], b[i]) for bf16 a, b and out, a and b broadcast to out's shape (any strides;
// out may alias an input), f: (float, float) -> float.
template <typename F>
void Bf16BinaryLoop(const TensorView& out, const TensorView& a0, const TensorView& b0, F f) {
  auto run = [&f](const bfloat16* x, int64_t sx, const bfloat16* y, int64_t sy, bfloat16* o,
                  int64_t so, int64_t n) {
    float bx[kBf16Chunk], by[kBf16Chunk];
    for (int64_t i = 0; i < n; i += kBf16Chunk) {
      const int64_t m = std::min(kBf16Chunk, n - i);
      LoadBf16(x + i * sx, sx, bx, m);
      LoadBf16(y + i * sy, sy, by, m);
      for (int64_t j = 0; j < m; ++j) bx[j] = f(bx[j], by[j]);
      StoreBf16(bx, o + i * so, so, m);
    }
  };
  const bool same = a0.shape == out.shape && b0.shape == out.shape;
  if (same && out.contiguous() && a0.contiguous() && b0.contiguous()) {
    const bfloat16 *x = a0.ptr<const bfloat16>(), *y = b0.ptr<const bfloat16>();
    bfloat16* o = out.ptr<bfloat16>();
    ParallelFor(out.numel(),
                [&](int64_t b, int64_t e) { run(x + b, 1, y + b, 1, o + b, 1, e - b); });
    return;
  }
  TensorView a = BroadcastTo(a0, out.shape), b = BroadcastTo(b0, out.shape);
  std::array<const DimVector*, 3> st{&out.strides, &a.strides, &b.strides};
  ForEachRow<3>(
      out.shape, st,
      {static_cast<char*>(out.data), static_cast<char*>(a.data), static_cast<char*>(b.data)},
      {2, 2, 2}, [&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
        run(reinterpret_cast<const bfloat16*>(p[1]), s[1], reinterpret_cast<const bfloat16*>(p[2]),
            s[2], reinterpret_cast<bfloat16*>(p[0]), s[0], n);
      });
}

}  // namespace kernels
}  // namespace oneflow_like
