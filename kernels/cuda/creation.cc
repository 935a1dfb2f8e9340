// CUDA kernels of the creation family: full / fill_ (attr "value", any dtype, strided output).
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

Status Full(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  LoopShape loop;
  Operand ops[1];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out}, &loop, ops));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e =
      LaunchFill(ToScalarType(out.dtype), ctx.attrs().Float("value"), loop, ops[0], s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(full, Full);
OFL_REGISTER_CUDA_KERNEL(fill_, Full);

}  // namespace cuda
}  // namespace oneflow_like
