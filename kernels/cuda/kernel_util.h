// Host-side helpers of the CUDA kernels (*.cc): TensorView -> launch.h structs with dimension
// collapsing, dtype mapping, and the registration wrapper that turns launch errors and device
// faults into the op's Status.
#pragma once
#include <initializer_list>

#include "device/cuda/device.h"
#include "kernels/cuda/launch.h"
#include "kernels/kernel.h"
#include "kernels/layout.h"

namespace oneflow_like {
namespace cuda {

inline ScalarType ToScalarType(DType t) {
  return static_cast<ScalarType>(static_cast<int8_t>(t));
}

using kernels::BroadcastTo;  // kernels/layout.h

// The iteration space of `shape` for `views` (each already of that shape): size-1 dims dropped,
// adjacent dims merged where that holds for every view. Error past kMaxDims collapsed dims.
Status MakeLoop(const char* op, const Shape& shape,
                std::initializer_list<const kernels::TensorView*> views, LoopShape* loop,
                Operand* operands);

// Launch error -> Status naming the op.
Status LaunchStatus(const char* op, cudaError_t e);

// ctx's cudaStream_t (kernels run under CheckedKernel, which checked it is a CudaStream).
inline cudaStream_t StreamOf(kernels::KernelContext& ctx) {
  return static_cast<CudaStream*>(ctx.stream())->get();
}
// A launcher's result as the op's Status.
inline Status Launched(const char* op, cudaError_t e) {
  return e == cudaSuccess ? Status() : LaunchStatus(op, e);
}
// The nn family's dtype check (f32/f64), with the CPU's message.
inline Status CheckNnFloat(const char* op, DType t) {
  if (!NnFloatSupported(ToScalarType(t)))
    return TypeError("[%s] not supported for %s on cuda", op, DTypeName(t));
  return Status();
}

// Runs kernel F on ctx's CUDA stream and reports launch errors (cudaGetLastError). It does not
// wait for the device: the kernel runs asynchronously (Note [CUDA instruction completion] in
// device/cuda/stream_policy.cc). Kernels that must read results on the host (device-side index
// checks, to_device) wait themselves. Never aborts.
template <kernels::KernelFn F>
Status CheckedKernel(kernels::KernelContext& ctx) {
  ASSIGN_OR_RETURN(CudaStream * s, AsCudaStream(ctx.stream(), ctx.op()));
  DeviceGuard guard(s->device().index());
  Status st = F(ctx);
  cudaError_t e = cudaGetLastError();
  if (st.ok() && e != cudaSuccess) st = LaunchStatus(ctx.op(), e);
  return st;
}

// __COUNTER__ (not __LINE__): ops registered from one X-macro line share a line.
#define OFL_REGISTER_CUDA_KERNEL(op, fn)                                                          \
  static ::oneflow_like::kernels::KernelRegistrar OFL_CONCAT(_ofl_cuda_kernel_reg_, __COUNTER__)( \
      #op, ::oneflow_like::DeviceType::kCUDA, ::oneflow_like::cuda::CheckedKernel<fn>)

}  // namespace cuda
}  // namespace oneflow_like
