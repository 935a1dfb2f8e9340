// CUDA kernels of the binary elementwise family (same op names, attrs and dtypes as kernels/cpu).
// Inputs share one dtype (promoted by the schema) and broadcast to the output, which may be
// strided (in-place variants).
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

Status RunBinary(KernelContext& ctx, BinaryOp op, double alpha) {
  const TensorView& out = ctx.output(0);
  if (op == BinaryOp::kDiv && IsIntegral(ctx.input(1).dtype))
    return TypeError("[div] integer inputs must be promoted to float first");
  if (!BinarySupported(op, ToScalarType(out.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(out.dtype));
  TensorView a = BroadcastTo(ctx.input(0), out.shape), b = BroadcastTo(ctx.input(1), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &a, &b}, &loop, ops));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e = LaunchBinary(op, ToScalarType(out.dtype), alpha, loop, ops[0], ops[1], ops[2], s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

Status Add(KernelContext& ctx) { return RunBinary(ctx, BinaryOp::kAdd, ctx.attrs().Float("alpha", 1.0)); }
Status Mul(KernelContext& ctx) { return RunBinary(ctx, BinaryOp::kMul, 1.0); }
Status Div(KernelContext& ctx) { return RunBinary(ctx, BinaryOp::kDiv, 1.0); }
Status ReluGrad(KernelContext& ctx) { return RunBinary(ctx, BinaryOp::kReluGrad, 1.0); }

}  // namespace

OFL_REGISTER_CUDA_KERNEL(add, Add);
OFL_REGISTER_CUDA_KERNEL(mul, Mul);
OFL_REGISTER_CUDA_KERNEL(div, Div);
OFL_REGISTER_CUDA_KERNEL(relu_grad, ReluGrad);

}  // namespace cuda
}  // namespace oneflow_like
