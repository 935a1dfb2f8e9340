// CUDA kernels of the creation family: full / fill_ (FullAttrs' value, any dtype, strided output).
// arange, linspace and eye are in random.cc.
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/creation.h"

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
  const double value = opdefs::ReadAttrs<opdefs::FullAttrs>(ctx.attrs()).value;
  cudaError_t e = LaunchFill(ToScalarType(out.dtype), value, loop, ops[0], s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(full, Full);
OFL_REGISTER_CUDA_KERNEL(fill_, Full);

}  // namespace cuda
}  // namespace oneflow_like
