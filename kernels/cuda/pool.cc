// CUDA kernels of the pooling family (same op names, attrs and dtypes as kernels/cpu/pool.cc):
// NCHW (NCDHW for the *3d ops) contiguous f32/f64; geometry from the attrs and the shapes the
// schema inferred.
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/pool.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;
using opdefs::PoolAttrs;

// The attrs hold one window value per spatial dim of `x`.
bool HasWindows(const PoolAttrs& a, const Shape& x) {
  for (const auto* v : {&a.kernel, &a.stride, &a.padding, &a.dilation})
    if (static_cast<int64_t>(v->size()) != x.ndim() - 2) return false;
  return true;
}

// x: the (forward) input [N, C, (D,) H, W]; y: the (forward) output [N, C, (OD,) OH, OW]: the
// planes and their sizes (all an adaptive pool needs).
PoolGeom PlaneGeom(const Shape& x, const Shape& y) {
  int o = x.ndim() == 5 ? 1 : 0;
  PoolGeom q;
  q.planes = x[0] * x[1];
  q.h = x[2 + o];
  q.w = x[3 + o];
  q.oh = y[2 + o];
  q.ow = y[3 + o];
  if (o) q.d = x[2], q.od = y[2];
  return q;
}
// And the windows of `a` where it has them (the backward ops' PoolGradAttrs read as PoolAttrs).
PoolGeom GeomOf(const PoolAttrs& a, const Shape& x, const Shape& y) {
  PoolGeom q = PlaneGeom(x, y);
  if (HasWindows(a, x)) {
    int o = x.ndim() == 5 ? 1 : 0;
    const auto &k = a.kernel, &s = a.stride, &p = a.padding, &d = a.dilation;
    q.kh = k[o], q.kw = k[1 + o], q.sh = s[o], q.sw = s[1 + o], q.ph = p[o], q.pw = p[1 + o],
    q.dh = d[o], q.dw = d[1 + o];
    if (o) q.kd = k[0], q.sd = s[0], q.pd = p[0], q.dd = d[0];
  }
  return q;
}

Status MaxPool(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), x.dtype));
  const auto a = opdefs::ReadAttrs<PoolAttrs>(ctx.attrs());
  if (!HasWindows(a, x.shape))
    return InvalidArgument("[%s] expected kernel, stride, padding and dilation attrs", ctx.op());
  PoolGeom q = GeomOf(a, x.shape, y.shape);
  return Launched(ctx.op(), LaunchMaxPool(ToScalarType(x.dtype), q, x.data, y.data,
                                          ctx.output(1).ptr<int64_t>(), StreamOf(ctx)));
}

// max_pool2d_grad(dy, indices) -> dx; the window geometry is not needed (indices say it all),
// but the attrs bound the outputs each input element can reach.
Status MaxPoolGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &dx = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), dy.dtype));
  const auto a = opdefs::ReadAttrs<PoolAttrs>(ctx.attrs());
  PoolGeom q = GeomOf(a, dx.shape, dy.shape);
  if (!HasWindows(a, dx.shape)) {  // no window attrs: every output is a candidate
    q.sd = q.sh = q.sw = q.dd = q.dh = q.dw = 1;
    q.pd = q.od, q.ph = q.oh, q.pw = q.ow;
    q.kd = q.d + q.od + 1, q.kh = q.h + q.oh + 1, q.kw = q.w + q.ow + 1;
  }
  return Launched(ctx.op(),
                  LaunchMaxPoolGrad(ToScalarType(dy.dtype), q, dy.data,
                                    ctx.input(1).ptr<const int64_t>(), dx.data, StreamOf(ctx)));
}

template <bool kGrad>
Status AvgPool(KernelContext& ctx) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), in.dtype));
  const auto a = opdefs::ReadAttrs<PoolAttrs>(ctx.attrs());
  if (!HasWindows(a, kGrad ? out.shape : in.shape))
    return InvalidArgument("[%s] expected kernel, stride, padding and dilation attrs", ctx.op());
  PoolGeom q = kGrad ? GeomOf(a, out.shape, in.shape) : GeomOf(a, in.shape, out.shape);
  return Launched(ctx.op(), LaunchAvgPool(ToScalarType(in.dtype), kGrad, q, a.count_include_pad,
                                          a.divisor_override, in.data, out.data, StreamOf(ctx)));
}

template <bool kGrad>
Status AdaptivePool(KernelContext& ctx) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), in.dtype));
  PoolGeom q = kGrad ? PlaneGeom(out.shape, in.shape) : PlaneGeom(in.shape, out.shape);
  return Launched(ctx.op(), LaunchAdaptiveAvgPool(ToScalarType(in.dtype), kGrad, q, in.data,
                                                  out.data, StreamOf(ctx)));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(max_pool2d, MaxPool);
OFL_REGISTER_CUDA_KERNEL(max_pool2d_grad, MaxPoolGrad);
OFL_REGISTER_CUDA_KERNEL(avg_pool2d, AvgPool<false>);
OFL_REGISTER_CUDA_KERNEL(avg_pool2d_grad, AvgPool<true>);
OFL_REGISTER_CUDA_KERNEL(adaptive_avg_pool2d, AdaptivePool<false>);
OFL_REGISTER_CUDA_KERNEL(adaptive_avg_pool2d_grad, AdaptivePool<true>);
OFL_REGISTER_CUDA_KERNEL(max_pool3d, MaxPool);
OFL_REGISTER_CUDA_KERNEL(max_pool3d_grad, MaxPoolGrad);
OFL_REGISTER_CUDA_KERNEL(avg_pool3d, AvgPool<false>);
OFL_REGISTER_CUDA_KERNEL(avg_pool3d_grad, AvgPool<true>);
OFL_REGISTER_CUDA_KERNEL(adaptive_avg_pool3d, AdaptivePool<false>);
OFL_REGISTER_CUDA_KERNEL(adaptive_avg_pool3d_grad, AdaptivePool<true>);

}  // namespace cuda
}  // namespace oneflow_like
