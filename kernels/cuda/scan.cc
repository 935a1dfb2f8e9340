// CUDA kernels of the scan and ordering family (same op names, attrs, inputs and dtypes as
// kernels/cpu/scan.cc and the CPU's nanmedian_dim): cumsum, cumprod, logcumsumexp, cummax,
// cummin, sort, topk, nanmedian_dim and the gradients cumprod_grad / logcumsumexp_grad. Inputs
// are contiguous (the schemas say so). Device code: scan.cu through scan_launch.h.
#include <string_view>

#include "kernels/cuda/kernel_util.h"
#include "kernels/cuda/scan_launch.h"
#include "kernels/layout.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/reduce.h"
#include "oneflow_like/opdefs/scan.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;
using opdefs::ReadAttrs;

ScanLines LinesAround(const Shape& s, int64_t dim) {
  kernels::DimLayout l = kernels::LayoutOf(s, dim);
  return ScanLines{l.outer, l.d, l.inner};
}

Status Unsupported(KernelContext& ctx, DType t) {
  return TypeError("[%s] not supported for %s on cuda", ctx.op(), DTypeName(t));
}

template <bool kProd>
Status CumScan(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  if (!ScanNumeric(ToScalarType(x.dtype))) return Unsupported(ctx, x.dtype);
  int64_t dim = 0;
  bool reverse = false;
  if constexpr (kProd) {
    dim = ReadAttrs<opdefs::ScanDimAttrs>(ctx.attrs()).dim;
  } else {
    auto a = ReadAttrs<opdefs::CumsumAttrs>(ctx.attrs());
    dim = a.dim;
    reverse = a.reverse;
  }
  return Launched(ctx.op(),
                  LaunchCumScan(ToScalarType(x.dtype), kProd, reverse, LinesAround(x.shape, dim),
                                x.data, out.data, StreamOf(ctx)));
}

Status LogCumSumExp(KernelContext& ctx) {
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  if (!ScanFloat(ToScalarType(x.dtype))) return Unsupported(ctx, x.dtype);
  ScanLines L = LinesAround(x.shape, ReadAttrs<opdefs::ScanDimAttrs>(ctx.attrs()).dim);
  return Launched(ctx.op(),
                  LaunchLogCumSumExp(ToScalarType(x.dtype), L, x.data, out.data, StreamOf(ctx)));
}

// (x, out, g) -> dx.
template <bool kLogCumSumExp>
Status ScanGrad(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  if (!ScanFloat(ToScalarType(x.dtype))) return Unsupported(ctx, x.dtype);
  ScanLines L = LinesAround(x.shape, ReadAttrs<opdefs::ScanDimAttrs>(ctx.attrs()).dim);
  return Launched(ctx.op(),
                  LaunchScanGrad(ToScalarType(x.dtype), kLogCumSumExp, L, x.data, ctx.input(1).data,
                                 ctx.input(2).data, ctx.output(0).data, StreamOf(ctx)));
}

template <bool kMax>
Status CumExtreme(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  if (!ScanNumericBool(ToScalarType(x.dtype))) return Unsupported(ctx, x.dtype);
  ScanLines L = LinesAround(x.shape, ReadAttrs<opdefs::ScanDimAttrs>(ctx.attrs()).dim);
  return Launched(ctx.op(),
                  LaunchCumExtreme(ToScalarType(x.dtype), kMax, L, x.data, ctx.output(0).data,
                                   static_cast<int64_t*>(ctx.output(1).data), StreamOf(ctx)));
}

// sort(x; dim, descending) and topk(x; dim, k, largest): k = n for sort.
Status Order(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  if (!ScanNumericBool(ToScalarType(x.dtype))) return Unsupported(ctx, x.dtype);
  bool is_sort = std::string_view(ctx.op()) == "sort", desc = false;
  int64_t dim = 0, k = 0;
  if (is_sort) {
    auto a = ReadAttrs<opdefs::SortAttrs>(ctx.attrs());
    dim = a.dim;
    desc = a.descending;
  } else {
    auto a = ReadAttrs<opdefs::TopkAttrs>(ctx.attrs());
    dim = a.dim;
    desc = a.largest;
    k = a.k;
  }
  ScanLines L = LinesAround(x.shape, dim);
  if (is_sort) k = L.n;
  if (k == 0 || L.count() == 0) return Status();
  size_t bytes = OrderTempBytes(L);
  ASSIGN_OR_RETURN(void* temp, ctx.AllocateTemp(bytes));
  return Launched(
      ctx.op(), LaunchOrder(ToScalarType(x.dtype), desc, L, k, x.data, ctx.output(0).data,
                            static_cast<int64_t*>(ctx.output(1).data), temp, bytes, StreamOf(ctx)));
}

Status NanMedian(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  if (!ScanNumeric(ToScalarType(x.dtype)))
    return TypeError("[nanmedian] not supported for %s on cuda", DTypeName(x.dtype));
  std::vector<int64_t> dims = ReadAttrs<opdefs::ReduceAttrs>(ctx.attrs()).dims;
  ScanLines L = LinesAround(x.shape, dims.empty() ? 0 : dims[0]);
  if (L.count() == 0 || L.n == 0) return Status();
  size_t bytes = OrderTempBytes(L);
  ASSIGN_OR_RETURN(void* temp, ctx.AllocateTemp(bytes));
  return Launched(ctx.op(), LaunchNanMedian(ToScalarType(x.dtype), L, x.data, ctx.output(0).data,
                                            static_cast<int64_t*>(ctx.output(1).data), temp, bytes,
                                            StreamOf(ctx)));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(cumsum, CumScan<false>);
OFL_REGISTER_CUDA_KERNEL(cumprod, CumScan<true>);
OFL_REGISTER_CUDA_KERNEL(cumprod_grad, ScanGrad<false>);
OFL_REGISTER_CUDA_KERNEL(logcumsumexp, LogCumSumExp);
OFL_REGISTER_CUDA_KERNEL(logcumsumexp_grad, ScanGrad<true>);
OFL_REGISTER_CUDA_KERNEL(cummax, CumExtreme<true>);
OFL_REGISTER_CUDA_KERNEL(cummin, CumExtreme<false>);
OFL_REGISTER_CUDA_KERNEL(sort, Order);
OFL_REGISTER_CUDA_KERNEL(topk, Order);
OFL_REGISTER_CUDA_KERNEL(nanmedian_dim, NanMedian);

}  // namespace cuda
}  // namespace oneflow_like
