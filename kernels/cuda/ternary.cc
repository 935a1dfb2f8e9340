// CUDA kernels of the ternary elementwise family (same op names, attrs and dtypes as kernels/cpu):
// where (tensor or scalar branches; every dtype), addcmul, addcdiv, lerp, and minmax_grad.
#include <cstring>

#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

Status Where(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  TensorView c = BroadcastTo(ctx.input(0), out.shape), x = BroadcastTo(ctx.input(1), out.shape),
             y = BroadcastTo(ctx.input(2), out.shape);
  LoopShape loop;
  Operand ops[4];
  RETURN_IF_ERROR(MakeLoop("where", out.shape, {&out, &c, &x, &y}, &loop, ops));
  cudaError_t e =
      LaunchWhere(DTypeSize(out.dtype), loop, ops[0], ops[1], ops[2], ops[3], StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus("where", e);
}

// The scalar converted as the CPU's ScalarAs: arithmetic types by static_cast, f16/bf16 through
// float.
uint64_t ScalarBits(DType t, double v) {
  uint64_t bits = 0;
  OFL_SWITCH_ALL(t, {
    scalar_t x;
    if constexpr (std::is_arithmetic_v<scalar_t>)
      x = static_cast<scalar_t>(v);
    else
      x = scalar_t(static_cast<float>(v));
    std::memcpy(&bits, &x, sizeof(x));
  });
  return bits;
}

template <bool kScalarIsOther>
Status WhereScalar(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  TensorView c = BroadcastTo(ctx.input(0), out.shape), x = BroadcastTo(ctx.input(1), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &c, &x}, &loop, ops));
  cudaError_t e = LaunchWhereScalar(DTypeSize(out.dtype), kScalarIsOther,
                                    ScalarBits(out.dtype, ctx.attrs().Float("scalar")), loop,
                                    ops[0], ops[1], ops[2], StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

template <TernaryOp kOp>
Status Ternary(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  if (!TernarySupported(kOp, ToScalarType(out.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(out.dtype));
  TensorView a = BroadcastTo(ctx.input(0), out.shape), b = BroadcastTo(ctx.input(1), out.shape),
             c = BroadcastTo(ctx.input(2), out.shape);
  LoopShape loop;
  Operand ops[4];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &a, &b, &c}, &loop, ops));
  OpParams p;
  if (kOp == TernaryOp::kMinMaxGrad) {
    p.p0 = ctx.attrs().Bool("is_max") ? 1 : 0;
    p.p1 = static_cast<double>(ctx.attrs().Int("side"));
  } else {
    p.p0 = ctx.attrs().Float("value", 1.0);
  }
  cudaError_t e = LaunchTernary(kOp, ToScalarType(out.dtype), p, loop, ops[0], ops[1], ops[2],
                                ops[3], StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(where, Where);
OFL_REGISTER_CUDA_KERNEL(where_scalar_other, WhereScalar<true>);
OFL_REGISTER_CUDA_KERNEL(where_scalar_input, WhereScalar<false>);
OFL_REGISTER_CUDA_KERNEL(addcmul, Ternary<TernaryOp::kAddcmul>);
OFL_REGISTER_CUDA_KERNEL(addcdiv, Ternary<TernaryOp::kAddcdiv>);
OFL_REGISTER_CUDA_KERNEL(lerp, Ternary<TernaryOp::kLerp>);
OFL_REGISTER_CUDA_KERNEL(minmax_grad, Ternary<TernaryOp::kMinMaxGrad>);

}  // namespace cuda
}  // namespace oneflow_like
