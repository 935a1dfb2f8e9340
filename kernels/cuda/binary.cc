// CUDA kernels of the binary elementwise family (same op names, attrs and dtypes as kernels/cpu):
// inputs share one dtype (promoted by the schema) and broadcast to the output, which may be
// strided (in-place variants). Also the unary ops' *_grad(dy, saved), reduce_eq_mask and
// lerp_scalar, which are binary loops on the CPU too.
#include <cstring>

#include "kernels/cuda/kernel_util.h"

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
  if (kOp == BinaryOp::div && IsIntegral(ctx.input(1).dtype))
    return TypeError("[div] integer inputs must be promoted to float first");
  if (!BinarySupported(kOp, ToScalarType(t)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(t));
  TensorView a = BroadcastTo(ctx.input(0), out.shape), b = BroadcastTo(ctx.input(1), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &a, &b}, &loop, ops));
  CudaStream* s = static_cast<CudaStream*>(ctx.stream());
  OpParams p = ParamsOf(ctx.op(), ctx.attrs());
  bool int_div =
      (kOp == BinaryOp::floor_divide || kOp == BinaryOp::remainder || kOp == BinaryOp::fmod) &&
      !IsFloating(t);
  if (int_div && loop.numel > 0) {
    ASSIGN_OR_RETURN(void* f, ctx.AllocateTemp(sizeof(int)));
    p.error_flag = static_cast<int*>(f);
    if (cudaError_t e = cudaMemsetAsync(f, 0, sizeof(int), s->get()); e != cudaSuccess)
      return LaunchStatus(ctx.op(), e);
  }
  cudaError_t e = LaunchBinary(kOp, ToScalarType(t), p, loop, ops[0], ops[1], ops[2], s->get());
  if (e != cudaSuccess) return LaunchStatus(ctx.op(), e);
  if (p.error_flag) {  // read back after the stream is done (the output is already written, as on
                       // the CPU)
    int zero = 0;
    if (cudaError_t c =
            cudaMemcpyAsync(&zero, p.error_flag, sizeof(int), cudaMemcpyDeviceToHost, s->get());
        c != cudaSuccess)
      return LaunchStatus(ctx.op(), c);
    RETURN_IF_ERROR(s->Synchronize());
    if (zero) return InvalidArgument("[%s] ZeroDivisionError: integer division by zero", ctx.op());
  }
  return Status();
}

template <BinaryBoolOp kOp>
Status RunBinaryBool(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  DType t = ctx.input(0).dtype;
  if (!BinaryBoolSupported(kOp, ToScalarType(t)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(t));
  TensorView a = BroadcastTo(ctx.input(0), out.shape), b = BroadcastTo(ctx.input(1), out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &a, &b}, &loop, ops));
  cudaError_t e = LaunchBinaryBool(kOp, ToScalarType(t), loop, ops[0], ops[1], ops[2],
                                   static_cast<CudaStream*>(ctx.stream())->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

}  // namespace

#define OFL_REG_BINARY(op, set) OFL_REGISTER_CUDA_KERNEL(op, RunBinary<BinaryOp::op>);
OFL_CUDA_BINARY_OPS(OFL_REG_BINARY)
#undef OFL_REG_BINARY
#define OFL_REG_BINARY_BOOL(op, set) OFL_REGISTER_CUDA_KERNEL(op, RunBinaryBool<BinaryBoolOp::op>);
OFL_CUDA_BINARY_BOOL_OPS(OFL_REG_BINARY_BOOL)
#undef OFL_REG_BINARY_BOOL

}  // namespace cuda
}  // namespace oneflow_like
