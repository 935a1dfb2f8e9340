// CUDA kernels of the fused GradScaler ops (same op names, operands and dtypes as
// kernels/cpu/amp.cc): one unscale launch per grad, all reading inv_scale and writing found_inf
// on the device, then the update on one thread; nothing waits for the device.
#include "kernels/cuda/amp_launch.h"
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/amp.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;

// Inputs (grads..., found_inf, inv_scale), outputs (grads..., found_inf).
Status AmpForeachUnscale(KernelContext& ctx) {
  const int n = ctx.num_outputs() - 1;
  const float* inv = ctx.input(n + 1).ptr<const float>();
  float* found = ctx.output(n).ptr<float>();
  for (int i = 0; i < n; ++i) {
    const kernels::TensorView& g = ctx.output(i);
    if (g.dtype != DType::kF32 && g.dtype != DType::kF64 && g.dtype != DType::kBF16 &&
        g.dtype != DType::kF16)
      return TypeError("[%s] grads[%d] of %s: expected a floating point dtype", ctx.op(), i,
                       DTypeName(g.dtype));
    RETURN_IF_ERROR(Launched(ctx.op(), LaunchAmpUnscale(ToScalarType(g.dtype), g.data, g.numel(),
                                                        inv, found, StreamOf(ctx))));
  }
  return Status();
}

// Inputs (scale, growth_tracker, found_inf), outputs (scale, growth_tracker).
Status AmpUpdateScale(KernelContext& ctx) {
  const auto a = opdefs::ReadAttrs<opdefs::AmpUpdateScaleAttrs>(ctx.attrs());
  return Launched(ctx.op(),
                  LaunchAmpUpdateScale(ctx.output(0).ptr<float>(), ctx.output(1).ptr<int32_t>(),
                                       ctx.input(2).ptr<const float>(), a.growth_factor,
                                       a.backoff_factor, a.growth_interval, StreamOf(ctx)));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(_amp_foreach_non_finite_check_and_unscale_, AmpForeachUnscale);
OFL_REGISTER_CUDA_KERNEL(_amp_update_scale_, AmpUpdateScale);

}  // namespace cuda
}  // namespace oneflow_like
