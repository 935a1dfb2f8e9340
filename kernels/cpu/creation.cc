// CPU kernels of the creation family: full/fill_, arange, linspace, eye.
#include "kernels/cpu/strided.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/creation.h"

namespace oneflow_like {
namespace kernels {
namespace {

using opdefs::ReadAttrs;

// full / fill_: every element of the (possibly strided) output = FullAttrs' value.
Status FullKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  double v = ReadAttrs<opdefs::FullAttrs>(ctx.attrs()).value;
  bool done = false;
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    done = true;
    T x = FromDouble<T>(v);
    if (out.contiguous()) {
      T* o = out.ptr<T>();
      ParallelFor(out.numel(), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = x;
      });
    } else {
      UnaryLoop<T, T>(out, out, [x](T) { return x; });
    }
  };
  OFL_SWITCH_ALL(out.dtype, fill(scalar_t{}));
  // The limited dtypes have fills (torch.zeros / full / fill_ of uint16 or float8) too.
  OFL_SWITCH_UNSIGNED_WIDE(out.dtype, fill(scalar_t{}));
  OFL_SWITCH_FLOAT8(out.dtype, fill(scalar_t{}));
  if (!done)
    return TypeError("[%s] not supported for %s on cpu", ctx.op(), DTypeLongName(out.dtype));
  return Status();
}

// out[i] = f(i) on a contiguous output.
template <typename F>
Status Generate(const TensorView& out, F f) {
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t* o = out.ptr<scalar_t>();
    ParallelFor(out.numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = FromDouble<scalar_t>(f(i));
    });
  });
  return Status();
}

Status ArangeKernel(KernelContext& ctx) {
  const opdefs::ArangeAttrs a = ReadAttrs<opdefs::ArangeAttrs>(ctx.attrs());
  double start = a.start, step = a.step;
  return Generate(ctx.output(0), [=](int64_t i) { return start + static_cast<double>(i) * step; });
}

// Symmetric like NumPy: the second half counts back from `end`, so both ends are exact.
Status LinspaceKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  const opdefs::LinspaceAttrs a = ReadAttrs<opdefs::LinspaceAttrs>(ctx.attrs());
  double start = a.start, end = a.end;
  int64_t n = out.numel();
  double step = n > 1 ? (end - start) / static_cast<double>(n - 1) : 0.0;
  return Generate(out, [=](int64_t i) {
    return i < (n + 1) / 2 ? start + static_cast<double>(i) * step
                           : end - static_cast<double>(n - 1 - i) * step;
  });
}

Status EyeKernel(KernelContext& ctx) {
  int64_t m = ctx.output(0).shape[1];
  return Generate(ctx.output(0), [=](int64_t i) { return i / m == i % m ? 1.0 : 0.0; });
}

}  // namespace

OFL_REGISTER_KERNEL(full, kCPU, FullKernel);
OFL_REGISTER_KERNEL(arange, kCPU, ArangeKernel);
OFL_REGISTER_KERNEL(linspace, kCPU, LinspaceKernel);
OFL_REGISTER_KERNEL(eye, kCPU, EyeKernel);
OFL_REGISTER_KERNEL(fill_, kCPU, FullKernel);

}  // namespace kernels
}  // namespace oneflow_like
