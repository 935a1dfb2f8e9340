// CUDA kernels of the copy family: contiguous, cast, copy_ (broadcast + cast into a strided
// destination) and to_device (cpu <-> cuda and cuda <-> cuda, on the CUDA side's stream).
#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// out (any strides) = cast(in broadcast to out's shape); both on this device.
Status CastInto(KernelContext& ctx) {
  const TensorView& out = ctx.output(0);
  TensorView in = BroadcastTo(ctx.input(0), out.shape);
  LoopShape loop;
  Operand ops[2];
  RETURN_IF_ERROR(MakeLoop(ctx.op(), out.shape, {&out, &in}, &loop, ops));
  auto* s = static_cast<CudaStream*>(ctx.stream());
  cudaError_t e =
      LaunchCast(ToScalarType(out.dtype), ToScalarType(in.dtype), loop, ops[0], ops[1], s->get());
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

// The schema keeps the dtype and makes both sides contiguous, so a transfer is one memcpy;
// cudaMemcpyDefault lets unified addressing find the direction (host, this or another device).
// Pageable host memory is handled by the driver (staged; a D2H copy returns when done).
Status ToDevice(KernelContext& ctx) {
  const TensorView &out = ctx.output(0), &in = ctx.input(0);
  if (out.dtype != in.dtype || !out.contiguous() || !in.contiguous())
    return Internal("[to_device] expected contiguous tensors of one dtype, got %s and %s",
                    ShapeString(in.dtype, in.shape), ShapeString(out.dtype, out.shape));
  size_t bytes = static_cast<size_t>(out.numel() * DTypeSize(out.dtype));
  if (bytes == 0) return Status();
  auto* s = static_cast<CudaStream*>(ctx.stream());
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.data, in.data, bytes, cudaMemcpyDefault, s->get()));
  // One side is host memory (or another device's): the instruction retires only when the copy is
  // done, so the CPU op or host read that depends on it sees the data, and a source in pageable
  // host memory may be freed (Note [CUDA instruction completion], device/cuda/stream_policy.cc).
  return s->Synchronize();
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(contiguous, CastInto);
OFL_REGISTER_CUDA_KERNEL(cast, CastInto);
OFL_REGISTER_CUDA_KERNEL(copy_, CastInto);
OFL_REGISTER_CUDA_KERNEL(to_device, ToDevice);

}  // namespace cuda
}  // namespace oneflow_like
