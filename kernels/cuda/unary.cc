// CUDA kernels of the unary elementwise family (same op names, attrs and dtypes as kernels/cpu).
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

Status RunUnary(KernelContext& ctx, UnaryOp op, double scalar) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  if (!UnarySupported(op, ToScalarType(out.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(out.dtype));
  TensorView in = BroadcastTo(a, out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e = LaunchUnary(op, ToScalarType(out.dtype), scalar, loop, ops[0], ops[1], s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

Status Neg(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kNeg, 0); }
Status Exp(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kExp, 0); }
Status Relu(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kRelu, 0); }
Status AddScalar(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kAddScalar, ctx.attrs().Float("scalar")); }
Status MulScalar(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kMulScalar, ctx.attrs().Float("scalar")); }
Status RSubScalar(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kRSubScalar, ctx.attrs().Float("scalar")); }
Status RDivScalar(KernelContext& ctx) { return RunUnary(ctx, UnaryOp::kRDivScalar, ctx.attrs().Float("scalar")); }

}  // namespace

OFL_REGISTER_CUDA_KERNEL(neg, Neg);
OFL_REGISTER_CUDA_KERNEL(exp, Exp);
OFL_REGISTER_CUDA_KERNEL(relu, Relu);
OFL_REGISTER_CUDA_KERNEL(add_scalar, AddScalar);
OFL_REGISTER_CUDA_KERNEL(mul_scalar, MulScalar);
OFL_REGISTER_CUDA_KERNEL(rsub_scalar, RSubScalar);
OFL_REGISTER_CUDA_KERNEL(rdiv_scalar, RDivScalar);

}  // namespace cuda
}  // namespace oneflow_like
