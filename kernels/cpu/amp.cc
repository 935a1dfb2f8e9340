// CPU kernels of the fused GradScaler ops (oneflow_like/opdefs/amp.def).
//   _amp_foreach_non_finite_check_and_unscale_(grads..., found_inf, inv_scale) -> in place: one
//     pass over every grad (read, test finiteness, multiply, write), the whole list split into
//     chunks of the intra-op pool (one parallel region however many grads), f16/bf16 widened to
//     float a chunk at a time and rounded back once, f64 multiplied in double.
//   _amp_update_scale_(scale, growth_tracker, found_inf) -> in place, torch's rule (amp.def).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/bf16_simd.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernel.h"
#include "oneflow_like/opdefs/amp.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace kernels {
namespace {

constexpr int64_t kChunk = 512;

// Whether any of buf[0, n) (float or double) is inf or nan: all exponent bits set, tested as an
// integer OR, which vectorises.
template <typename T>
inline bool AnyNonFinite(const T* buf, int64_t n) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr U kExp = sizeof(T) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  U bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    U u;
    std::memcpy(&u, buf + i, sizeof(T));
    bad |= static_cast<U>((u & kExp) == kExp);
  }
  return bad != 0;
}

// Unscales p[0, n) in place (float: in float, double: in double); returns whether an element
// was inf/nan (tested before scaling, as torch: a finite value that overflows when scaled up is
// not reported).
template <typename T>
bool UnscaleRange(T* p, int64_t n, float inv) {
  bool bad = AnyNonFinite(p, n);
  const T s = static_cast<T>(inv);
  if (inv != 1.0f)
    for (int64_t i = 0; i < n; ++i) p[i] *= s;
  return bad;
}
// 16-bit floats: widened kChunk at a time into float, checked and scaled there, narrowed back.
template <typename H, typename Widen, typename Narrow>
bool UnscaleHalfRange(H* p, int64_t n, float inv, Widen widen, Narrow narrow) {
  float buf[kChunk];
  bool bad = false;
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    widen(p + i, buf, m);
    bad |= AnyNonFinite(buf, m);
    if (inv == 1.0f) continue;
    for (int64_t j = 0; j < m; ++j) buf[j] *= inv;
    narrow(buf, p + i, m);
  }
  return bad;
}
bool UnscaleRange(bfloat16* p, int64_t n, float inv) {
  return UnscaleHalfRange(p, n, inv, WidenBf16, NarrowToBf16);
}
bool UnscaleRange(float16* p, int64_t n, float inv) {
  return UnscaleHalfRange(
      p, n, inv,
      [](const float16* s, float* d, int64_t m) {
        for (int64_t j = 0; j < m; ++j) d[j] = float(s[j]);
      },
      [](const float* s, float16* d, int64_t m) {
        for (int64_t j = 0; j < m; ++j) d[j] = float16(s[j]);
      });
}

bool UnscaleView(const TensorView& g, int64_t begin, int64_t end, float inv) {
  switch (g.dtype) {
    case DType::kF32: return UnscaleRange(g.ptr<float>() + begin, end - begin, inv);
    case DType::kF64: return UnscaleRange(g.ptr<double>() + begin, end - begin, inv);
    case DType::kBF16: return UnscaleRange(g.ptr<bfloat16>() + begin, end - begin, inv);
    case DType::kF16: return UnscaleRange(g.ptr<float16>() + begin, end - begin, inv);
    default: return false;  // the functional entry admits only the four float dtypes
  }
}

// Inputs (grads..., found_inf, inv_scale), outputs (grads..., found_inf), the grads' outputs
// being their inputs' memory (contiguous).
Status AmpForeachUnscale(KernelContext& ctx) {
  const int n = ctx.num_outputs() - 1;
  for (int i = 0; i < n; ++i) {
    const DType t = ctx.output(i).dtype;
    if (t != DType::kF32 && t != DType::kF64 && t != DType::kBF16 && t != DType::kF16)
      return TypeError("[%s] grads[%d] of %s: expected a floating point dtype", ctx.op(), i,
                       DTypeName(t));
  }
  const float inv = *ctx.input(n + 1).ptr<const float>();
  float* found_inf = ctx.output(n).ptr<float>();
  // The list as one index space: grad i holds [start[i], start[i + 1]).
  std::vector<int64_t> start(n + 1, 0);
  for (int i = 0; i < n; ++i) start[i + 1] = start[i] + ctx.output(i).numel();
  std::atomic<bool> bad{false};
  ParallelFor(start[n], [&](int64_t b, int64_t e) {
    int i = static_cast<int>(std::upper_bound(start.begin(), start.end(), b) - start.begin()) - 1;
    bool local = false;
    for (; b < e && i < n; ++i) {
      const int64_t stop = std::min(e, start[i + 1]);
      if (stop > b) local |= UnscaleView(ctx.output(i), b - start[i], stop - start[i], inv);
      b = stop;
    }
    if (local) bad.store(true, std::memory_order_relaxed);
  });
  if (bad.load()) *found_inf = 1.0f;
  return Status();
}

// Inputs (scale, growth_tracker, found_inf), outputs (scale, growth_tracker), one element each.
Status AmpUpdateScale(KernelContext& ctx) {
  const auto a = opdefs::ReadAttrs<opdefs::AmpUpdateScaleAttrs>(ctx.attrs());
  float* scale = ctx.output(0).ptr<float>();
  int32_t* tracker = ctx.output(1).ptr<int32_t>();
  const float found = *ctx.input(2).ptr<const float>();
  if (found != 0.0f) {
    *scale = static_cast<float>(*scale * a.backoff_factor);
    *tracker = 0;
    return Status();
  }
  const int64_t clean = static_cast<int64_t>(*tracker) + 1;
  if (clean == a.growth_interval) {
    const float grown = static_cast<float>(*scale * a.growth_factor);
    if (std::isfinite(grown)) *scale = grown;
    *tracker = 0;
  } else {
    *tracker = static_cast<int32_t>(clean);
  }
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(_amp_foreach_non_finite_check_and_unscale_, kCPU, AmpForeachUnscale);
OFL_REGISTER_KERNEL(_amp_update_scale_, kCPU, AmpUpdateScale);

}  // namespace kernels
}  // namespace oneflow_like
