// CUDA kernels of the pooling family (same op names, attrs and dtypes as kernels/cpu/pool.cc):
// NCHW contiguous f32/f64; geometry from the attrs and the shapes the schema inferred.
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

bool HasWindows(const AttrMap& a) {
  for (const char* n : {"kernel", "stride", "padding", "dilation"})
    if (a.Ints(n).size() != 2) return false;
  return true;
}

// x: the (forward) input [N, C, H, W]; y: the (forward) output [N, C, OH, OW].
PoolGeom GeomOf(const AttrMap& a, const Shape& x, const Shape& y, bool windows) {
  PoolGeom q;
  q.planes = x[0] * x[1];
  q.h = x[2];
  q.w = x[3];
  q.oh = y[2];
  q.ow = y[3];
  if (windows && HasWindows(a)) {
    const auto &k = a.Ints("kernel"), &s = a.Ints("stride"), &p = a.Ints("padding"),
               &d = a.Ints("dilation");
    q.kh = k[0], q.kw = k[1], q.sh = s[0], q.sw = s[1], q.ph = p[0], q.pw = p[1], q.dh = d[0],
    q.dw = d[1];
  }
  return q;
}

Status MaxPool(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat("max_pool2d", x.dtype));
  if (!HasWindows(ctx.attrs()))
    return InvalidArgument("[%s] expected kernel, stride, padding and dilation attrs", ctx.op());
  PoolGeom q = GeomOf(ctx.attrs(), x.shape, y.shape, true);
  return Launched(ctx.op(), LaunchMaxPool(ToScalarType(x.dtype), q, x.data, y.data,
                                          ctx.output(1).ptr<int64_t>(), StreamOf(ctx)));
}

// max_pool2d_grad(dy, indices) -> dx; the window geometry is not needed (indices say it all),
// but the attrs bound the outputs each input element can reach.
Status MaxPoolGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &dx = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat("max_pool2d_grad", dy.dtype));
  PoolGeom q = GeomOf(ctx.attrs(), dx.shape, dy.shape, true);
  if (!HasWindows(ctx.attrs())) {  // no window attrs: every output of the plane is a candidate
    q.sh = q.sw = q.dh = q.dw = 1;
    q.ph = q.oh, q.pw = q.ow, q.kh = q.h + q.oh + 1, q.kw = q.w + q.ow + 1;
  }
  return Launched(ctx.op(),
                  LaunchMaxPoolGrad(ToScalarType(dy.dtype), q, dy.data,
                                    ctx.input(1).ptr<const int64_t>(), dx.data, StreamOf(ctx)));
}

template <bool kGrad>
Status AvgPool(KernelContext& ctx) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat(kGrad ? "avg_pool2d_grad" : "avg_pool2d", in.dtype));
  if (!HasWindows(ctx.attrs()))
    return InvalidArgument("[%s] expected kernel, stride, padding and dilation attrs", ctx.op());
  PoolGeom q = kGrad ? GeomOf(ctx.attrs(), out.shape, in.shape, true)
                     : GeomOf(ctx.attrs(), in.shape, out.shape, true);
  return Launched(
      ctx.op(),
      LaunchAvgPool(ToScalarType(in.dtype), kGrad, q, ctx.attrs().Bool("count_include_pad"),
                    ctx.attrs().Int("divisor_override"), in.data, out.data, StreamOf(ctx)));
}

template <bool kGrad>
Status AdaptivePool(KernelContext& ctx) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), in.dtype));
  PoolGeom q = kGrad ? GeomOf(ctx.attrs(), out.shape, in.shape, false)
                     : GeomOf(ctx.attrs(), in.shape, out.shape, false);
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

}  // namespace cuda
}  // namespace oneflow_like
