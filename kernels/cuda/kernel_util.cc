#include "kernels/cuda/kernel_util.h"

namespace oneflow_like {
namespace cuda {

#define OFL_CHECK_SCALAR_TYPE(D)                                               \
  static_assert(static_cast<int>(ScalarType::D) == static_cast<int>(DType::D), \
                "ScalarType must mirror DType");
OFL_CHECK_SCALAR_TYPE(kBool)
OFL_CHECK_SCALAR_TYPE(kU8)
OFL_CHECK_SCALAR_TYPE(kI8)
OFL_CHECK_SCALAR_TYPE(kI32)
OFL_CHECK_SCALAR_TYPE(kI64)
OFL_CHECK_SCALAR_TYPE(kF16)
OFL_CHECK_SCALAR_TYPE(kBF16)
OFL_CHECK_SCALAR_TYPE(kF32)
OFL_CHECK_SCALAR_TYPE(kF64)
OFL_CHECK_SCALAR_TYPE(kC64)
OFL_CHECK_SCALAR_TYPE(kC128)
OFL_CHECK_SCALAR_TYPE(kI16)
OFL_CHECK_SCALAR_TYPE(kU16)
OFL_CHECK_SCALAR_TYPE(kU32)
OFL_CHECK_SCALAR_TYPE(kU64)
OFL_CHECK_SCALAR_TYPE(kF8E4M3FN)
OFL_CHECK_SCALAR_TYPE(kF8E5M2)
OFL_CHECK_SCALAR_TYPE(kF8E4M3FNUZ)
OFL_CHECK_SCALAR_TYPE(kF8E5M2FNUZ)
// The complex and limited dtypes have no CUDA kernels (but to_device's byte copies): the
// dispatcher refuses them by name before a CUDA kernel's switch sees them.
static_assert(kNumDTypes == 19, "a new DType needs a ScalarType and device conversions");
#undef OFL_CHECK_SCALAR_TYPE

Status MakeLoop(const char* op, const Shape& shape,
                std::initializer_list<const kernels::TensorView*> views, LoopShape* loop,
                Operand* operands) {
  const size_t n = views.size();
  DimVector sizes;
  std::vector<DimVector> st(n);
  for (int64_t d = 0; d < shape.ndim(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !sizes.empty();
    size_t k = 0;
    for (const kernels::TensorView* v : views) {
      if (merge) merge = st[k].back() == v->strides[d] * shape[d];
      ++k;
    }
    k = 0;
    if (merge) {
      sizes.back() *= shape[d];
      for (const kernels::TensorView* v : views) st[k++].back() = v->strides[d];
    } else {
      sizes.push_back(shape[d]);
      for (const kernels::TensorView* v : views) st[k++].push_back(v->strides[d]);
    }
  }
  if (static_cast<int>(sizes.size()) > kMaxDims)
    return Unimplemented("[%s] CUDA kernels support up to %d non-mergeable dims, got shape %s", op,
                         kMaxDims, shape.ToString());
  *loop = LoopShape();
  loop->ndim = static_cast<int>(sizes.size());
  loop->numel = shape.numel();
  for (int d = 0; d < loop->ndim; ++d) loop->sizes[d] = sizes[d];
  size_t k = 0;
  for (const kernels::TensorView* v : views) {
    Operand& o = operands[k];
    o = Operand();
    o.data = v->data;
    int64_t expect = 1;
    bool contiguous = true;
    for (int d = loop->ndim - 1; d >= 0; --d) {
      o.strides[d] = st[k][d];
      contiguous &= st[k][d] == expect;
      expect *= sizes[d];
    }
    o.contiguous = contiguous;
    ++k;
  }
  return Status();
}

Status LaunchStatus(const char* op, cudaError_t e) {
  if (IsStickyError(e))
    return Internal(
        "[%s] %s (%s): the CUDA context of this process is lost (an asynchronous fault of this "
        "or an earlier CUDA op; run with CUDA_LAUNCH_BLOCKING=1 to find it); CUDA work fails "
        "until the process restarts, CPU work is unaffected",
        op, cudaGetErrorName(e), cudaGetErrorString(e));
  return Internal("[%s] CUDA launch failed: %s (%s)", op, cudaGetErrorName(e),
                  cudaGetErrorString(e));
}

}  // namespace cuda
}  // namespace oneflow_like
