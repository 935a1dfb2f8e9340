// CUDA kernels of the unary elementwise family: the table's ops (oneflow_like/opdefs/unary.def,
// registered below from it) and the binary family's scalar ops (launch.h's lists).
#include <cstring>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace cuda {

// The attrs of the binary family's ops (binary.cc) and the scalar ops; the unary table's ops
// read their typed attribute structs instead.
OpParams ParamsOf(const char* op, const AttrMap& a) {
  OpParams p;
  auto is = [&](const char* n) { return std::strcmp(op, n) == 0; };
  if (is("add") || is("sub"))
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

// x op scalar (add_scalar, mul_scalar, rsub_scalar, rdiv_scalar: the binary family's scalar ops).
template <UnaryOp kOp>
Status RunScalar(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  ScalarType t = ToScalarType(out.dtype);
  if (!UnarySupported(kOp, t))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(a.dtype));
  TensorView in = BroadcastTo(a, out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  cudaError_t e = LaunchUnary(kOp, t, ParamsOf(ctx.op(), ctx.attrs()), loop, ops[0], ops[1],
                              static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

// logical_not: bool output, or in place in the input's dtype.
Status RunLogicalNot(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &a = ctx.input(0);
  ScalarType t = ToScalarType(a.dtype);
  bool to_bool = out.dtype == DType::kBool && a.dtype != DType::kBool;
  if (to_bool ? !UnaryBoolSupported(UnaryBoolOp::logical_not, t)
              : !UnarySupported(UnaryOp::logical_not, ToScalarType(out.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(a.dtype));
  TensorView in = BroadcastTo(a, out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  cudaStream_t s = static_cast<CudaStream*>(ctx.stream())->get();
  cudaError_t e = to_bool
                      ? LaunchUnaryBool(UnaryBoolOp::logical_not, t, {}, loop, ops[0], ops[1], s)
                      : LaunchUnary(UnaryOp::logical_not, t, {}, loop, ops[0], ops[1], s);
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

// The unary table's ops: forward (1 input) and backward (dy, saved) alike; `attrs` holds the op's
// attribute struct, read once by the generated caller.
Status RunTable(KernelContext& ctx, opdefs::UnaryId op, int inputs,
                const opdefs::UnaryAttrsAll& attrs) {
  const TensorView& out = ctx.output(0);
  ScalarType t = ToScalarType(out.dtype);
  if (!UnaryTableSupported(op, t))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(out.dtype));
  TensorView in[2];
  for (int i = 0; i < inputs; ++i) in[i] = BroadcastTo(ctx.input(i), out.shape);
  LoopShape loop;
  Operand ops[3];
  if (inputs == 1)
    RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in[0]}, &loop, ops));
  else
    RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in[0], &in[1]}, &loop, ops));
  cudaStream_t s = static_cast<CudaStream*>(ctx.stream())->get();
  cudaError_t e = inputs == 1 ? LaunchUnaryTable(op, t, attrs, loop, ops[0], ops[1], s)
                              : LaunchUnaryGradTable(op, t, attrs, loop, ops[0], ops[1], ops[2], s);
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

OFL_REGISTER_CUDA_KERNEL(add_scalar, RunScalar<UnaryOp::add_scalar>);
OFL_REGISTER_CUDA_KERNEL(mul_scalar, RunScalar<UnaryOp::mul_scalar>);
OFL_REGISTER_CUDA_KERNEL(rsub_scalar, RunScalar<UnaryOp::rsub_scalar>);
OFL_REGISTER_CUDA_KERNEL(rdiv_scalar, RunScalar<UnaryOp::rdiv_scalar>);
OFL_REGISTER_CUDA_KERNEL(logical_not, RunLogicalNot);
// clang-format off
#define OFL_ATTRS(...)
#define OFL_TABLE_KERNEL(name, Name, inputs)                                    \
  Status Run_##name(KernelContext& ctx) {                                       \
    opdefs::UnaryAttrsAll attrs;                                                \
    attrs.name = opdefs::ReadAttrs<opdefs::Name##Fn::Attrs>(ctx.attrs());       \
    return RunTable(ctx, opdefs::UnaryId::name, inputs, attrs);                 \
  }                                                                             \
  OFL_REGISTER_CUDA_KERNEL(name, Run_##name);
#define OFL_UNARY(name, Name, ...) OFL_TABLE_KERNEL(name, Name, 1)
#define OFL_UNARY_GRAD(name, Name, ...) OFL_TABLE_KERNEL(name, Name, 2)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
#undef OFL_TABLE_KERNEL
// clang-format on
OFL_REGISTER_CUDA_KERNEL(eq_scalar, RunUnaryBool<UnaryBoolOp::eq_scalar>);
OFL_REGISTER_CUDA_KERNEL(ne_scalar, RunUnaryBool<UnaryBoolOp::ne_scalar>);
OFL_REGISTER_CUDA_KERNEL(lt_scalar, RunUnaryBool<UnaryBoolOp::lt_scalar>);
OFL_REGISTER_CUDA_KERNEL(le_scalar, RunUnaryBool<UnaryBoolOp::le_scalar>);
OFL_REGISTER_CUDA_KERNEL(gt_scalar, RunUnaryBool<UnaryBoolOp::gt_scalar>);
OFL_REGISTER_CUDA_KERNEL(ge_scalar, RunUnaryBool<UnaryBoolOp::ge_scalar>);

}  // namespace cuda
}  // namespace oneflow_like
