// CUDA kernels of the unary elementwise family: the table's ops (oneflow_like/opdefs/unary.def,
// registered below from it) and logical_not. (The binary table's scalar variants: binary.cc.)
#include <cstring>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/reduce.h"

namespace oneflow_like {
namespace cuda {

// The attrs of launch.h's listed binary ops (binary.cc), from their typed attribute structs (the
// tables' ops read theirs in their generated callers).
OpParams ParamsOf(const char* op, const AttrMap& a) {
  OpParams p;
  auto is = [&](const char* n) { return std::strcmp(op, n) == 0; };
  if (is("reduce_eq_mask")) p.p0 = opdefs::ReadAttrs<opdefs::EqMaskAttrs>(a).is_signed ? 1 : 0;
  return p;
}

namespace {

using kernels::KernelContext;
using kernels::TensorView;

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

}  // namespace

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

}  // namespace cuda
}  // namespace oneflow_like
