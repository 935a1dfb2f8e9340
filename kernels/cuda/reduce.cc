// CUDA kernels of the reduction family (same op names, attrs and dtypes as kernels/cpu).
#include <algorithm>

#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// sum(x; dims, keepdim): floats keep their dtype, integers and bool give i64 (the schema's rule).
Status Sum(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  if (!SumSupported(ToScalarType(x.dtype))) return TypeError("[sum] not supported for %s on cuda", DTypeName(x.dtype));
  const auto& dims = ctx.attrs().Ints("dims");
  ReduceShape r;
  for (int64_t i = 0; i < x.shape.ndim(); ++i) {
    if (x.shape[i] == 1) continue;  // size-1 dims change nothing, reduced or kept
    bool reduced = std::find(dims.begin(), dims.end(), i) != dims.end();
    int& n = reduced ? r.red_ndim : r.keep_ndim;
    if (n == kMaxDims) return Unimplemented("[sum] CUDA kernel supports up to %d dims, got %s", kMaxDims, x.shape.ToString());
    (reduced ? r.red_sizes : r.keep_sizes)[n] = x.shape[i];
    (reduced ? r.red_strides : r.keep_strides)[n] = x.strides[i];
    (reduced ? r.red_numel : r.out_numel) *= x.shape[i];
    ++n;
  }
  if (x.numel() == 0) {  // empty reduced range: zeros; empty output: nothing
    r.out_numel = out.numel();
    r.red_numel = 0;
    r.keep_ndim = 0;
    r.red_ndim = 0;
    if (r.out_numel > 0) {
      // Keep-dims map onto a contiguous output of out_numel elements; reading nothing gives 0.
      r.keep_ndim = 1;
      r.keep_sizes[0] = r.out_numel;
      r.keep_strides[0] = 0;
    }
  }
  auto* s = static_cast<CudaStream*>(ctx.stream());
  int device = s->device().index();
  size_t scratch_bytes = SumScratchBytes(r, device);
  void* scratch = nullptr;
  if (scratch_bytes > 0) { ASSIGN_OR_RETURN(scratch, ctx.AllocateTemp(scratch_bytes)); }
  cudaError_t e = LaunchSum(ToScalarType(x.dtype), r, x.data, out.data, scratch, device, s->get());
  return e == cudaSuccess ? Status() : LaunchStatus("sum", e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(sum, Sum);

}  // namespace cuda
}  // namespace oneflow_like
