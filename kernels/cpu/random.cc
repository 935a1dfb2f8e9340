// CPU kernels of the random family. Element i of an op with seed s is a function of (s, i)
// only (kernels/cpu/rng.h), so results do not depend on threading; outputs may be strided
// (the in-place variants fill views), element i being the i-th in row-major order.
#include <algorithm>
#include <atomic>
#include <numeric>

#include "kernels/cpu/rng_simd.h"
#include "kernels/cpu/strided.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/random.h"

namespace oneflow_like {
namespace kernels {
namespace {

using opdefs::ReadAttrs;

// out[i] = v[i] converted to the output's dtype, for any output strides, where fill(b, n, v)
// writes v[0, n) for elements [b, b + n) (blocks let the draws run four counters at a time).
template <typename Fill>
Status DrawBlocks(const TensorView& out, Fill fill) {
  constexpr int64_t kBlock = 512;
  if (out.numel() == 0) return Status();
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    const bool contiguous = out.contiguous();
    int64_t nd = out.shape.ndim();
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) {
      double v[kBlock];
      DimVector c(nd, 0);  // coordinates of element blk (strided outputs only)
      for (int64_t d = nd - 1, r = b; d >= 0 && !contiguous; --d) {
        c[d] = r % out.shape[d];
        r /= out.shape[d];
      }
      for (int64_t blk = b; blk < e; blk += kBlock) {
        int64_t n = std::min(kBlock, e - blk);
        fill(blk, n, v);
        if (contiguous) {
          for (int64_t j = 0; j < n; ++j) o[blk + j] = FromDouble<scalar_t>(v[j]);
          continue;
        }
        for (int64_t j = 0; j < n; ++j) {
          int64_t off = 0;
          for (int64_t d = 0; d < nd; ++d) off += c[d] * out.strides[d];
          o[off] = FromDouble<scalar_t>(v[j]);
          for (int64_t d = nd - 1; d >= 0; --d) {
            if (++c[d] < out.shape[d]) break;
            c[d] = 0;
          }
        }
      }
    });
  });
  return Status();
}

// out[i] = f(i) converted to the output's dtype, for any output strides.
template <typename F>
Status Draw(const TensorView& out, F f) {
  return DrawBlocks(out, [&](int64_t b, int64_t n, double* v) {
    for (int64_t j = 0; j < n; ++j) v[j] = f(b + j);
  });
}

// The op's seed (opdefs/random.def: drawn at dispatch from the device's generator).
template <typename A>
uint64_t Seed(const A& a) {
  return static_cast<uint64_t>(a.seed);
}

// uniform / uniform_ (UniformAttrs).
Status UniformKernel(KernelContext& ctx) {
  const opdefs::UniformAttrs a = ReadAttrs<opdefs::UniformAttrs>(ctx.attrs());
  uint64_t s = Seed(a);
  double lo = a.low, hi = a.high;
  return DrawBlocks(ctx.output(0), [=](int64_t b, int64_t n, double* v) {
    RngUniformBlock(s, static_cast<uint64_t>(b), n, v);
    for (int64_t j = 0; j < n; ++j) v[j] = lo + (hi - lo) * v[j];
  });
}

// normal / normal_ (NormalAttrs).
Status NormalKernel(KernelContext& ctx) {
  const opdefs::NormalAttrs a = ReadAttrs<opdefs::NormalAttrs>(ctx.attrs());
  uint64_t s = Seed(a);
  double mean = a.mean, std = a.std;
  return Draw(ctx.output(0), [=](int64_t i) { return mean + std * RngNormal(s, i); });
}

// randint / randint_ (RandintAttrs).
Status RandintKernel(KernelContext& ctx) {
  const opdefs::RandintAttrs a = ReadAttrs<opdefs::RandintAttrs>(ctx.attrs());
  uint64_t s = Seed(a);
  int64_t lo = a.low, span = a.high - lo;
  return Draw(ctx.output(0), [=](int64_t i) {
    return static_cast<double>(lo +
                               static_cast<int64_t>(RngBits(s, i) % static_cast<uint64_t>(span)));
  });
}

// Fisher-Yates with swap i drawn from (seed, i).
Status RandpermKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  uint64_t s = Seed(ReadAttrs<opdefs::RandpermAttrs>(ctx.attrs()));
  std::vector<int64_t> p(static_cast<size_t>(out.numel()));
  std::iota(p.begin(), p.end(), int64_t(0));
  for (int64_t i = out.numel() - 1; i > 0; --i)
    std::swap(p[i], p[static_cast<int64_t>(RngBits(s, i) % static_cast<uint64_t>(i + 1))]);
  return Draw(out, [&](int64_t i) { return static_cast<double>(p[i]); });
}

Status BernoulliKernel(KernelContext& ctx) {
  const TensorView& prob = ctx.input(0);
  uint64_t s = Seed(ReadAttrs<opdefs::BernoulliAttrs>(ctx.attrs()));
  Status st;
  OFL_SWITCH_FLOAT(prob.dtype, {
    const scalar_t* p = prob.ptr<const scalar_t>();
    // A branch-free parallel scan first; the serial search for the first bad element only on
    // failure.
    std::atomic<bool> bad{false};
    ParallelFor(prob.numel(), [&](int64_t b, int64_t e) {
      bool any = false;
      for (int64_t i = b; i < e; ++i) any |= !(p[i] >= 0 && p[i] <= 1);
      if (any) bad.store(true, std::memory_order_relaxed);
    });
    for (int64_t i = 0; bad.load() && i < prob.numel(); ++i)
      if (!(p[i] >= 0 && p[i] <= 1))
        return OutOfRange("[bernoulli] probability %g at element %d is not in [0, 1]", double(p[i]),
                          i);
    st = DrawBlocks(ctx.output(0), [=](int64_t b, int64_t n, double* v) {
      RngUniformBlock(s, static_cast<uint64_t>(b), n, v);
      for (int64_t j = 0; j < n; ++j) v[j] = v[j] < static_cast<double>(p[b + j]) ? 1.0 : 0.0;
    });
  });
  return st;
}

}  // namespace

OFL_REGISTER_KERNEL(uniform, kCPU, UniformKernel);
OFL_REGISTER_KERNEL(uniform_, kCPU, UniformKernel);
OFL_REGISTER_KERNEL(normal, kCPU, NormalKernel);
OFL_REGISTER_KERNEL(normal_, kCPU, NormalKernel);
OFL_REGISTER_KERNEL(randint, kCPU, RandintKernel);
OFL_REGISTER_KERNEL(randint_, kCPU, RandintKernel);
OFL_REGISTER_KERNEL(randperm, kCPU, RandpermKernel);
OFL_REGISTER_KERNEL(bernoulli, kCPU, BernoulliKernel);

}  // namespace kernels
}  // namespace oneflow_like
