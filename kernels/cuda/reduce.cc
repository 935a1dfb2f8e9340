// CUDA kernels of the reduction family (same op names, attrs and dtypes as kernels/cpu; the
// attribute structs are oneflow_like/opdefs/reduce.def's). nanmedian_dim has no CUDA kernel yet.
#include <algorithm>
#include <vector>

#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/reduce.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;

// sum(x; dims, keepdim): floats keep their dtype, integers and bool give i64 (the schema's rule).
Status Sum(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  if (!SumSupported(ToScalarType(x.dtype)))
    return TypeError("[sum] not supported for %s on cuda", DTypeName(x.dtype));
  const auto dims = opdefs::ReadAttrs<opdefs::ReduceAttrs>(ctx.attrs()).dims;
  ReduceShape r;
  for (int64_t i = 0; i < x.shape.ndim(); ++i) {
    if (x.shape[i] == 1) continue;  // size-1 dims change nothing, reduced or kept
    bool reduced = std::find(dims.begin(), dims.end(), i) != dims.end();
    int& n = reduced ? r.red_ndim : r.keep_ndim;
    if (n == kMaxDims)
      return Unimplemented("[sum] CUDA kernel supports up to %d dims, got %s", kMaxDims,
                           x.shape.ToString());
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
  if (scratch_bytes > 0) {
    ASSIGN_OR_RETURN(scratch, ctx.AllocateTemp(scratch_bytes));
  }
  cudaError_t e = LaunchSum(ToScalarType(x.dtype), r, x.data, out.data, scratch, device, s->get());
  return e == cudaSuccess ? Status() : LaunchStatus("sum", e);
}

// Keep / reduced dims of x for `dims` (size-1 dims dropped); the output is contiguous in keep
// order.
Status MakeReduceShape(const char* op, const TensorView& x, const std::vector<int64_t>& dims,
                       ReduceShape* r) {
  *r = ReduceShape();
  for (int64_t i = 0; i < x.shape.ndim(); ++i) {
    bool reduced = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (reduced)
      r->red_numel *= x.shape[i];
    else
      r->out_numel *= x.shape[i];
    if (x.shape[i] == 1 || x.shape[i] == 0) continue;  // size 0: numel already 0, nothing is read
    int& n = reduced ? r->red_ndim : r->keep_ndim;
    if (n == kMaxDims)
      return Unimplemented("[%s] CUDA kernel supports up to %d dims, got %s", op, kMaxDims,
                           x.shape.ToString());
    (reduced ? r->red_sizes : r->keep_sizes)[n] = x.shape[i];
    (reduced ? r->red_strides : r->keep_strides)[n] = x.strides[i];
    ++n;
  }
  return Status();
}

template <ReduceOp kOp>
Status Reduce(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  if (!ReduceSupported(kOp, ToScalarType(x.dtype)))
    return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(x.dtype));
  ReduceShape r;
  RETURN_IF_ERROR(
      MakeReduceShape(ctx.op(), x, opdefs::ReadAttrs<opdefs::ReduceAttrs>(ctx.attrs()).dims, &r));
  void* values = nullptr;
  int64_t* indices = nullptr;
  if (kOp == ReduceOp::kArgmax || kOp == ReduceOp::kArgmin) {
    bool with_values = ctx.num_outputs() == 2;  // max_dim / min_dim
    if (with_values) values = ctx.output(0).data;
    indices = ctx.output(with_values ? 1 : 0).ptr<int64_t>();
  } else {
    values = ctx.output(0).data;
  }
  double param = 0;
  if (kOp == ReduceOp::kVar || kOp == ReduceOp::kStd)
    param = opdefs::ReadAttrs<opdefs::VarAttrs>(ctx.attrs()).correction;
  if (kOp == ReduceOp::kNorm) param = opdefs::ReadAttrs<opdefs::NormAttrs>(ctx.attrs()).p;
  cudaError_t e =
      LaunchReduce(kOp, ToScalarType(x.dtype), r, param, x.data, values, indices, StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

void AroundDim(const Shape& s, int64_t dim, int64_t* outer, int64_t* size, int64_t* inner) {
  *outer = 1, *inner = 1, *size = s.ndim() ? s[dim] : 1;
  for (int64_t i = 0; i < dim; ++i) *outer *= s[i];
  for (int64_t i = dim + 1; i < s.ndim(); ++i) *inner *= s[i];
}

template <bool kScatter>
Status ReduceIndex(KernelContext& ctx) {
  const TensorView &src = ctx.input(0), &idx = ctx.input(1), &out = ctx.output(0);
  if (!IsFloating(out.dtype) || out.dtype == DType::kF16 || out.dtype == DType::kBF16)
    return TypeError("[%s] not supported for %s", ctx.op(), DTypeName(out.dtype));
  int64_t outer, size, inner;
  int64_t dim = kScatter ? opdefs::ReadAttrs<opdefs::IndexScatterAttrs>(ctx.attrs()).dim
                         : opdefs::ReadAttrs<opdefs::IndexGatherAttrs>(ctx.attrs()).dim;
  AroundDim(kScatter ? out.shape : src.shape, dim, &outer, &size, &inner);
  cudaError_t e =
      LaunchReduceIndex(kScatter, ToScalarType(out.dtype), src.data, idx.ptr<const int64_t>(),
                        out.data, outer, size, inner, StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus(ctx.op(), e);
}

Status NormBackward(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &nrm = ctx.input(1), &g = ctx.input(2), &out = ctx.output(0);
  if (out.dtype != DType::kF32 && out.dtype != DType::kF64)
    return TypeError("[norm_backward] not supported for %s", DTypeName(out.dtype));
  void* coef = nullptr;
  if (nrm.numel() > 0) {
    ASSIGN_OR_RETURN(coef, ctx.AllocateTemp(nrm.numel() * DTypeSize(out.dtype)));
  }
  TensorView cv = nrm;
  cv.data = coef;
  TensorView xb = BroadcastTo(x, out.shape), cb = BroadcastTo(cv, out.shape);
  LoopShape loop;
  Operand ops[3];
  RETURN_IF_ERROR(MakeLoop("norm_backward", out.shape, {&out, &xb, &cb}, &loop, ops));
  cudaError_t e = LaunchNormBackward(
      ToScalarType(out.dtype), opdefs::ReadAttrs<opdefs::NormBackwardAttrs>(ctx.attrs()).p,
      nrm.data, g.data, nrm.numel(), coef, loop, ops[0], ops[1], ops[2], StreamOf(ctx));
  return e == cudaSuccess ? Status() : LaunchStatus("norm_backward", e);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(prod, Reduce<ReduceOp::kProd>);
OFL_REGISTER_CUDA_KERNEL(amax, Reduce<ReduceOp::kAmax>);
OFL_REGISTER_CUDA_KERNEL(amin, Reduce<ReduceOp::kAmin>);
OFL_REGISTER_CUDA_KERNEL(max_dim, Reduce<ReduceOp::kArgmax>);
OFL_REGISTER_CUDA_KERNEL(min_dim, Reduce<ReduceOp::kArgmin>);
OFL_REGISTER_CUDA_KERNEL(argmax, Reduce<ReduceOp::kArgmax>);
OFL_REGISTER_CUDA_KERNEL(argmin, Reduce<ReduceOp::kArgmin>);
OFL_REGISTER_CUDA_KERNEL(var, Reduce<ReduceOp::kVar>);
OFL_REGISTER_CUDA_KERNEL(std, Reduce<ReduceOp::kStd>);
OFL_REGISTER_CUDA_KERNEL(norm, Reduce<ReduceOp::kNorm>);
OFL_REGISTER_CUDA_KERNEL(logsumexp, Reduce<ReduceOp::kLogSumExp>);
OFL_REGISTER_CUDA_KERNEL(reduce_index_scatter, ReduceIndex<true>);
OFL_REGISTER_CUDA_KERNEL(reduce_index_gather, ReduceIndex<false>);
OFL_REGISTER_CUDA_KERNEL(norm_backward, NormBackward);
OFL_REGISTER_CUDA_KERNEL(sum, Sum);

}  // namespace cuda
}  // namespace oneflow_like
