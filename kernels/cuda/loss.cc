// CUDA kernels of the loss family (same op names, attrs, inputs and dtypes as kernels/cpu/loss.cc).
// nll_loss(_grad): a target outside [0, C) that is not ignore_index is the CPU's OutOfRange
// error (smallest position first), reported at the stream's next sync point (deferred, so the
// host never waits here); nothing is written then.
#include <cstring>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/loss.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

using opdefs::NllLossAttrs;

NllGeom NllGeomOf(const NllLossAttrs& a, const Shape& s) {
  NllGeom g;
  if (s.ndim() == 1) {
    g.c = s[0];
  } else {
    g.n = s[0];
    g.c = s[1];
    for (int64_t i = 2; i < s.ndim(); ++i) g.r *= s[i];
  }
  g.reduction = a.reduction;
  g.ignore = a.ignore_index;
  g.eps = a.label_smoothing;
  return g;
}

// Checks the targets on the device, runs `launch(flag, den)` and returns without waiting: the
// first bad target (position and value, copied in stream order) is reported at the stream's next
// sync point (Note [Deferred device checks], device/cuda/device.cc), so a training step never
// stalls the host here. The kernels skip a bad target's term, so nothing faults meanwhile.
template <typename F>
Status WithCheckedTargets(KernelContext& ctx, const char* op, ScalarType t, const NllGeom& g,
                          const int64_t* target, const void* w, F&& launch) {
  auto* s = static_cast<CudaStream*>(ctx.stream());
  // [0] the first bad position (kNoBadIndex: none), [1] the denominator, [2] the bad value
  ASSIGN_OR_RETURN(void* p, ctx.AllocateTemp(3 * sizeof(unsigned long long)));
  auto* flag = static_cast<unsigned long long*>(p);
  double* den = reinterpret_cast<double*>(flag + 1);
  RETURN_IF_ERROR(Launched(op, cudaMemsetAsync(flag, 0xff, sizeof(unsigned long long), s->get())));
  RETURN_IF_ERROR(Launched(op, LaunchNllCheck(t, g, target, w, flag, den, s->get())));
  RETURN_IF_ERROR(launch(flag, den));
  RETURN_IF_ERROR(Launched(
      op, LaunchFetchFlagged(target, flag, reinterpret_cast<long long*>(flag + 2), s->get())));
  const int64_t classes = g.c;
  return s->DeferCheck(flag, 3 * sizeof(unsigned long long), [classes](const void* host) {
    const auto* h = static_cast<const unsigned long long*>(host);
    if (h[0] == kNoBadIndex) return Status();
    int64_t v = 0;
    std::memcpy(&v, h + 2, sizeof(v));
    // The CPU names nll_loss for both the loss and its gradient.
    return OutOfRange("[nll_loss] target %d out of range for %d classes", v, classes);
  });
}

// nll_loss(logp, target [, weight]) -> loss.
Status NllLoss(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  ScalarType t = ToScalarType(x.dtype);
  if (!NnFloatSupported(t))
    return TypeError("[nll_loss] not supported for %s on cuda", DTypeName(x.dtype));
  const NllLossAttrs a = opdefs::ReadAttrs<NllLossAttrs>(ctx.attrs());
  NllGeom g = NllGeomOf(a, x.shape);
  const int64_t* target = ctx.input(1).ptr<const int64_t>();
  const void* w = a.has_weight ? ctx.input(2).data : nullptr;
  void* scratch = nullptr;
  if (g.reduction != opdefs::kReductionNone && g.n * g.r > 0) {
    ASSIGN_OR_RETURN(scratch, ctx.AllocateTemp(NllScratchBytes(g.n * g.r)));
  }
  auto* s = static_cast<CudaStream*>(ctx.stream());
  return WithCheckedTargets(
      ctx, "nll_loss", t, g, target, w, [&](unsigned long long* flag, double* den) {
        return Launched("nll_loss", LaunchNllLoss(t, g, x.data, target, w, flag, den, scratch,
                                                  out.data, s->get()));
      });
}

// nll_loss_grad(dy, logp, target [, weight]) -> dlogp.
Status NllLossGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &x = ctx.input(1), &dx = ctx.output(0);
  ScalarType t = ToScalarType(dy.dtype);
  if (!NnFloatSupported(t))
    return TypeError("[nll_loss_grad] not supported for %s on cuda", DTypeName(dy.dtype));
  const NllLossAttrs a = opdefs::ReadAttrs<NllLossAttrs>(ctx.attrs());
  NllGeom g = NllGeomOf(a, x.shape);
  const int64_t* target = ctx.input(2).ptr<const int64_t>();
  const void* w = a.has_weight ? ctx.input(3).data : nullptr;
  auto* s = static_cast<CudaStream*>(ctx.stream());
  return WithCheckedTargets(
      ctx, "nll_loss_grad", t, g, target, w, [&](unsigned long long* flag, double* den) {
        return Launched("nll_loss_grad",
                        LaunchNllLossGrad(t, g, dy.data, target, w, flag, den, dx.data, s->get()));
      });
}

// binary_cross_entropy_with_logits(x, y [, pos_weight]) -> loss (elementwise).
Status Bce(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.input(1), &out = ctx.output(0);
  if (!NnFloatSupported(ToScalarType(x.dtype)))
    return TypeError("[binary_cross_entropy_with_logits] not supported for %s on cuda",
                     DTypeName(x.dtype));
  const void* pw = ctx.num_inputs() > 2 ? ctx.input(2).data : nullptr;
  auto* s = static_cast<CudaStream*>(ctx.stream());
  return Launched(ctx.op(), LaunchBce(ToScalarType(x.dtype), x.numel(), x.data, y.data, pw,
                                      out.data, s->get()));
}

// bce_with_logits_grad(dy, x, y [, pos_weight]) -> (dx, dy_target [, dpos_weight]).
Status BceGrad(KernelContext& ctx) {
  const TensorView &g = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (!NnFloatSupported(ToScalarType(x.dtype)))
    return TypeError("[bce_with_logits_grad] not supported for %s on cuda", DTypeName(x.dtype));
  bool has_pw = ctx.num_inputs() > 3;
  const void* pw = has_pw ? ctx.input(3).data : nullptr;
  void* dpw = has_pw ? ctx.output(2).data : nullptr;
  auto* s = static_cast<CudaStream*>(ctx.stream());
  return Launched(ctx.op(),
                  LaunchBceGrad(ToScalarType(x.dtype), x.numel(), g.data, x.data, y.data, pw,
                                ctx.output(0).data, ctx.output(1).data, dpw, s->get()));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(nll_loss, NllLoss);
OFL_REGISTER_CUDA_KERNEL(nll_loss_grad, NllLossGrad);
OFL_REGISTER_CUDA_KERNEL(binary_cross_entropy_with_logits, Bce);
OFL_REGISTER_CUDA_KERNEL(bce_with_logits_grad, BceGrad);

}  // namespace cuda
}  // namespace oneflow_like
