// CUDA kernels of the softmax family (same op names, attrs and dtypes as kernels/cpu): the
// schema makes inputs contiguous; attr "dim" is normalised.
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

struct Layout {
  int64_t outer = 1, d = 1, inner = 1;
};
Layout LayoutOf(const Shape& s, int64_t dim) {
  Layout l;
  if (s.ndim() == 0) return l;
  for (int64_t i = 0; i < dim; ++i) l.outer *= s[i];
  l.d = s[dim];
  for (int64_t i = dim + 1; i < s.ndim(); ++i) l.inner *= s[i];
  return l;
}

template <bool kLog>
Status Softmax(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &y = ctx.output(0);
  if (!SoftmaxSupported(ToScalarType(x.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(x.dtype));
  Layout l = LayoutOf(x.shape, ctx.attrs().Int("dim"));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e = LaunchSoftmax(ToScalarType(x.dtype), kLog, l.outer, l.d, l.inner, x.data, y.data, s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

template <bool kLog>
Status SoftmaxGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &y = ctx.input(1), &dx = ctx.output(0);
  if (!SoftmaxSupported(ToScalarType(y.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(y.dtype));
  Layout l = LayoutOf(y.shape, ctx.attrs().Int("dim"));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e =
      LaunchSoftmaxGrad(ToScalarType(y.dtype), kLog, l.outer, l.d, l.inner, dy.data, y.data, dx.data, s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(softmax, Softmax<false>);
OFL_REGISTER_CUDA_KERNEL(log_softmax, Softmax<true>);
OFL_REGISTER_CUDA_KERNEL(softmax_grad, SoftmaxGrad<false>);
OFL_REGISTER_CUDA_KERNEL(log_softmax_grad, SoftmaxGrad<true>);

}  // namespace cuda
}  // namespace oneflow_like
