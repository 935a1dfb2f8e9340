// CPU kernels of the creation family.
#include "kernels/cpu/loops.h"

namespace oneflow_like {
namespace kernels {
namespace {

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) return T(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>) return v != 0.0;
  else return static_cast<T>(v);
}

// full / fill_: every element of the (possibly strided) output = attr "value".
Status FullKernel(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  double v = ctx.attrs().Float("value");
  OFL_SWITCH_ALL(out.dtype, {
    scalar_t x = FromDouble<scalar_t>(v);
    if (out.contiguous()) {
      scalar_t* o = out.ptr<scalar_t>();
      ParallelFor(out.numel(), [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) o[i] = x; });
    } else {
      UnaryLoop<scalar_t, scalar_t>(out, out, [x](scalar_t) { return x; });
    }
  });
  return Status();
}

}  // namespace

OFL_REGISTER_KERNEL(full, kCPU, FullKernel);
OFL_REGISTER_KERNEL(fill_, kCPU, FullKernel);

}  // namespace kernels
}  // namespace oneflow_like
