// CUDA kernels of the unary elementwise family (same op names, attrs and dtypes as kernels/cpu:
// unary.cc and the scalar ops of binary.cc). Ops come from launch.h's lists.
#include <cstring>

#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {

// The attrs each elementwise op reads (the CPU functors' names and defaults); binary.cc uses it
// too.
OpParams ParamsOf(const char* op, const AttrMap& a) {
  OpParams p;
  auto is = [&](const char* n) { return std::strcmp(op, n) == 0; };
  if (is("clamp") || is("clamp_grad")) {
    p.p0 = a.Float("min");
    p.p1 = a.Float("max");
  } else if (is("pow_scalar") || is("pow_scalar_grad"))
    p.p0 = a.Float("exponent");
  else if (is("gelu") || is("gelu_grad"))
    p.p0 = a.Bool("approximate") ? 1 : 0;
  else if (is("softplus") || is("softplus_grad")) {
    p.p0 = a.Float("beta", 1.0);
    p.p1 = a.Float("threshold", 20.0);
  } else if (is("elu") || is("elu_grad"))
    p.p0 = a.Float("alpha", 1.0);
  else if (is("leaky_relu") || is("leaky_relu_grad"))
    p.p0 = a.Float("negative_slope", 0.01);
  else if (is("add") || is("sub"))
    p.p0 = a.Float("alpha", 1.0);
  else if (is("reduce_eq_mask"))
    p.p0 = a.Bool("signed") ? 1 : 0;
  else if (is("lerp_scalar"))
    p.p0 = a.Float("weight");
  else if (std::strstr(op, "_scalar"))
    p.p0 = a.Float("scalar");
  return p;
}

namespace {

using kernels::KernelContext;
using kernels::TensorView;

template <UnaryOp kOp>
Status RunUnary(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  ScalarType t = ToScalarType(a.dtype);
  bool to_bool = out.dtype == DType::kBool && a.dtype != DType::kBool;
  if (kOp == UnaryOp::logical_not && to_bool ? !UnaryBoolSupported(UnaryBoolOp::logical_not, t)
                                             : !UnarySupported(kOp, ToScalarType(out.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(a.dtype));
  TensorView in = BroadcastTo(a, out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  cudaStream_t s = static_cast<CudaStream*>(ctx.stream())->get();
  OpParams p = ParamsOf(ctx.op(), ctx.attrs());
  cudaError_t e = kOp == UnaryOp::logical_not && to_bool
                      ? LaunchUnaryBool(UnaryBoolOp::logical_not, t, p, loop, ops[0], ops[1], s)
                      : LaunchUnary(kOp, ToScalarType(out.dtype), p, loop, ops[0], ops[1], s);
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

template <UnaryBoolOp kOp>
Status RunUnaryBool(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  if (!UnaryBoolSupported(kOp, ToScalarType(a.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(a.dtype));
  TensorView in = BroadcastTo(a, out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  cudaError_t e = LaunchUnaryBool(kOp, ToScalarType(a.dtype), ParamsOf(ctx.op(), ctx.attrs()), loop,
                                  ops[0], ops[1], static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

#define OFL_REG_UNARY(op, set) OFL_REGISTER_CUDA_KERNEL(op, RunUnary<UnaryOp::op>);
OFL_CUDA_UNARY_OPS(OFL_REG_UNARY)
#undef OFL_REG_UNARY
// (logical_not, in both lists, is registered once above: RunUnary picks the bool-output form.)
OFL_REGISTER_CUDA_KERNEL(eq_scalar, RunUnaryBool<UnaryBoolOp::eq_scalar>);
OFL_REGISTER_CUDA_KERNEL(ne_scalar, RunUnaryBool<UnaryBoolOp::ne_scalar>);
OFL_REGISTER_CUDA_KERNEL(lt_scalar, RunUnaryBool<UnaryBoolOp::lt_scalar>);
OFL_REGISTER_CUDA_KERNEL(le_scalar, RunUnaryBool<UnaryBoolOp::le_scalar>);
OFL_REGISTER_CUDA_KERNEL(gt_scalar, RunUnaryBool<UnaryBoolOp::gt_scalar>);
OFL_REGISTER_CUDA_KERNEL(ge_scalar, RunUnaryBool<UnaryBoolOp::ge_scalar>);

}  // namespace cuda
}  // namespace oneflow_like
