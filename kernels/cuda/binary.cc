// CUDA kernels of the binary elementwise family, registered from oneflow_like/opdefs/binary.def
// (same op names, attrs and dtypes as kernels/cpu): inputs share one dtype (promoted by the schema)
// and broadcast to the output, which may be strided (in-place variants). Also launch.h's listed
// binary ops (reduce_eq_mask), which are binary loops on the CPU too.
#include <cstring>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace cuda {

OpParams ParamsOf(const char* op, const AttrMap& a);  // unary.cc

namespace {

using kernels::KernelContext;
using kernels::TensorView;

template <BinaryOp kOp>
Status RunBinary(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  DType t = ctx.input(0).dtype;
  if (!BinarySupported(kOp, ToScalarType(t)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(t));
  TensorView a = BroadcastTo(ctx.input(0), out.shape), b = BroadcastTo(ctx.input(1), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &a, &b}, &loop, ops));
  cudaError_t e = LaunchBinary(kOp, ToScalarType(t), ParamsOf(ctx.op(), ctx.attrs()), loop, ops[0],
                               ops[1], ops[2], static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

// The table's tensor-tensor ops; `attrs` holds the op's attribute struct, read once by the
// generated caller. Ops of api `division` report integer division by zero: the flag is read back
// after the stream is done (the output is already written, as on the CPU).
Status RunTable(KernelContext& ctx, opdefs::BinaryId op, bool int_division,
                const opdefs::BinaryAttrsAll& attrs) {
  const TensorView& out = ctx.output(0);
  DType t = ctx.input(0).dtype;
  if (!BinaryTableSupported(op, ToScalarType(t)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(t));
  TensorView a = BroadcastTo(ctx.input(0), out.shape), b = BroadcastTo(ctx.input(1), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &a, &b}, &loop, ops));
  CudaStream* s = static_cast<CudaStream*>(ctx.stream());
  int* flag = nullptr;
  if (int_division && !IsFloating(t) && loop.numel > 0) {
    ASSIGN_OR_RETURN(void* f, ctx.AllocateTemp(sizeof(int)));
    flag = static_cast<int*>(f);
    if (cudaError_t e = cudaMemsetAsync(f, 0, sizeof(int), s->get()); e != cudaSuccess)
      return LaunchStatus(ctx.op(), e);
  }
  cudaError_t e =
      LaunchBinaryTable(op, ToScalarType(t), attrs, flag, loop, ops[0], ops[1], ops[2], s->get());
  if (e != cudaSuccess) return LaunchStatus(ctx.op(), e);
  if (flag) {  // read at the stream's next sync point (Note [Deferred device checks])
    std::string name = ctx.op();  // a copy: a graph's kernel call names the op in a temporary
    return s->DeferCheck(flag, sizeof(int), [name, t](const void* host) {
      int zero = 0;
      std::memcpy(&zero, host, sizeof(zero));
      if (zero == 0) return Status();
      return InvalidArgument("[%s] ZeroDivisionError: integer division by zero (%s)", name,
                             DTypeName(t));
    });
  }
  return Status();
}

// The table's scalar variants: out = f(x, scalar).
Status RunScalarTable(KernelContext& ctx, opdefs::BinaryId op) {
  const TensorView &out = ctx.output(0), &x = ctx.input(0);
  if (!BinaryTableSupported(op, ToScalarType(x.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(x.dtype));
  TensorView in = BroadcastTo(x, out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  const double scalar = opdefs::ReadAttrs<opdefs::ScalarAttrs>(ctx.attrs()).scalar;
  cudaError_t e = LaunchBinaryScalarTable(op, ToScalarType(x.dtype), scalar, loop, ops[0], ops[1],
                                          static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

#define OFL_REG_BINARY(op, set) OFL_REGISTER_CUDA_KERNEL(op, RunBinary<BinaryOp::op>);
OFL_CUDA_BINARY_OPS(OFL_REG_BINARY)
#undef OFL_REG_BINARY
// clang-format off
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, ...)                                                       \
  Status Run_##name(KernelContext& ctx) {                                                \
    opdefs::BinaryAttrsAll attrs;                                                        \
    attrs.name = opdefs::ReadAttrs<opdefs::Name##Fn::Attrs>(ctx.attrs());                \
    return RunTable(ctx, opdefs::BinaryId::name, opdefs::Name##Fn::kIntDivision, attrs); \
  }                                                                                      \
  OFL_REGISTER_CUDA_KERNEL(name, Run_##name);
#define OFL_BINARY_SCALAR(name, Name, ...)                                               \
  Status Run_##name(KernelContext& ctx) { return RunScalarTable(ctx, opdefs::BinaryId::name); } \
  OFL_REGISTER_CUDA_KERNEL(name, Run_##name);
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on

}  // namespace cuda
}  // namespace oneflow_like
