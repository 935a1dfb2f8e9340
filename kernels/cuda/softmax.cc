// CUDA kernels of the softmax family (same op names, attrs and dtypes as kernels/cpu): the
// schema makes inputs contiguous; SoftmaxAttrs' dim is normalised.
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/softmax.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

using kernels::DimLayout;
using kernels::LayoutOf;

template <bool kLog>
Status Softmax(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.output(0);
  if (!SoftmaxSupported(ToScalarType(x.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(x.dtype));
  DimLayout l = LayoutOf(x.shape, opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(ctx.attrs()).dim);
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e =
      LaunchSoftmax(ToScalarType(x.dtype), kLog, l.outer, l.d, l.inner, x.data, y.data, s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

template <bool kLog>
Status SoftmaxGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &y = ctx.input(1), &dx = ctx.output(0);
  if (!SoftmaxSupported(ToScalarType(y.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(y.dtype));
  DimLayout l = LayoutOf(y.shape, opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(ctx.attrs()).dim);
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e = LaunchSoftmaxGrad(ToScalarType(y.dtype), kLog, l.outer, l.d, l.inner, dy.data,
                                    y.data, dx.data, s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(softmax, Softmax<false>);
OFL_REGISTER_CUDA_KERNEL(log_softmax, Softmax<true>);
OFL_REGISTER_CUDA_KERNEL(softmax_grad, SoftmaxGrad<false>);
OFL_REGISTER_CUDA_KERNEL(log_softmax_grad, SoftmaxGrad<true>);

}  // namespace cuda
}  // namespace oneflow_like
