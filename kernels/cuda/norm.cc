// CUDA kernels of the normalization family (same op names, attrs, inputs and dtypes as
// kernels/cpu/norm.cc). batch_norm writes the batch statistics as outputs exactly like the CPU
// (the functional layer folds them into the running stats with in-place elementwise ops).
#include "kernels/cuda/kernel_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/norm.h"

namespace oneflow_like {
namespace cuda {
namespace {

using kernels::KernelContext;
using kernels::TensorView;
using opdefs::BatchNormAttrs;
using opdefs::RmsNormAttrs;
using opdefs::RowNormAttrs;

RowNormGeom RowGeomOf(const RowNormAttrs& a, int64_t numel) {
  RowNormGeom q;
  q.cpg = a.channels_per_group;
  q.inner = a.inner;
  q.len = q.cpg * q.inner;
  q.rows = q.len > 0 ? numel / q.len : 0;
  q.groups = a.groups;
  return q;
}

// layer_norm / group_norm(x [, w] [, b]) -> (y, mean, rstd).
Status RowNorm(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), x.dtype));
  auto a = opdefs::ReadAttrs<RowNormAttrs>(ctx.attrs());
  RowNormGeom q = RowGeomOf(a, x.numel());
  const void* w = a.has_weight ? ctx.input(1).data : nullptr;
  const void* b = a.has_bias ? ctx.input(a.has_weight ? 2 : 1).data : nullptr;
  return Launched(ctx.op(),
                  LaunchRowNorm(ToScalarType(x.dtype), q, a.eps, x.data, w, b, ctx.output(0).data,
                                ctx.output(1).data, ctx.output(2).data, StreamOf(ctx)));
}

// *_norm_grad(dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]).
Status RowNormGrad(KernelContext& ctx) {
  const TensorView &dy = ctx.input(0), &x = ctx.input(1);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), x.dtype));
  auto a = opdefs::ReadAttrs<RowNormAttrs>(ctx.attrs());
  RowNormGeom q = RowGeomOf(a, x.numel());
  bool hw = a.has_weight, hb = a.has_bias;
  const void* w = hw ? ctx.input(4).data : nullptr;
  void* dw = hw ? ctx.output(1).data : nullptr;
  void* db = hb ? ctx.output(hw ? 2 : 1).data : nullptr;
  return Launched(
      ctx.op(), LaunchRowNormGrad(ToScalarType(x.dtype), q, dy.data, x.data, ctx.input(2).data,
                                  ctx.input(3).data, w, ctx.output(0).data, dw, db, StreamOf(ctx)));
}

// x viewed as (N, C, S).
void BnGeomOf(const Shape& x, int64_t* n, int64_t* c, int64_t* s) {
  *n = x[0];
  *c = x[1];
  *s = 1;
  for (int64_t i = 2; i < x.ndim(); ++i) *s *= x[i];
}

// batch_norm(x, w, b, running_mean, running_var) -> (y, mean, invstd, unbiased batch var).
Status BatchNorm(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  RETURN_IF_ERROR(CheckNnFloat("batch_norm", x.dtype));
  int64_t n, c, s;
  BnGeomOf(x.shape, &n, &c, &s);
  auto a = opdefs::ReadAttrs<BatchNormAttrs>(ctx.attrs());
  return Launched(
      ctx.op(),
      LaunchBatchNorm(ToScalarType(x.dtype), n, c, s, a.training, a.eps, x.data, ctx.input(1).data,
                      ctx.input(2).data, ctx.input(3).data, ctx.input(4).data, ctx.output(0).data,
                      ctx.output(1).data, ctx.output(2).data, ctx.output(3).data, StreamOf(ctx)));
}

// batch_norm_grad(dy, x, w, mean, invstd) -> (dx, dw, db).
Status BatchNormGrad(KernelContext& ctx) {
  const TensorView& x = ctx.input(1);
  RETURN_IF_ERROR(CheckNnFloat("batch_norm_grad", x.dtype));
  int64_t n, c, s;
  BnGeomOf(x.shape, &n, &c, &s);
  return Launched(
      ctx.op(), LaunchBatchNormGrad(ToScalarType(x.dtype), n, c, s,
                                    opdefs::ReadAttrs<BatchNormAttrs>(ctx.attrs()).training,
                                    ctx.input(0).data, x.data, ctx.input(2).data, ctx.input(3).data,
                                    ctx.input(4).data, ctx.output(0).data, ctx.output(1).data,
                                    ctx.output(2).data, StreamOf(ctx)));
}

// rms_norm(x [, w]) -> (y, rstd);  rms_norm_grad(dy, x, rstd [, w]) -> (dx [, dw]).
Status RmsNorm(KernelContext& ctx) {
  const TensorView& x = ctx.input(0);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), x.dtype));
  auto a = opdefs::ReadAttrs<RmsNormAttrs>(ctx.attrs());
  int64_t rows = a.len > 0 ? x.numel() / a.len : 0;
  const void* w = ctx.num_inputs() > 1 ? ctx.input(1).data : nullptr;
  return Launched(ctx.op(), LaunchRmsNorm(ToScalarType(x.dtype), rows, a.len, a.eps, x.data, w,
                                          ctx.output(0).data, ctx.output(1).data, StreamOf(ctx)));
}

Status RmsNormGrad(KernelContext& ctx) {
  const TensorView& x = ctx.input(1);
  RETURN_IF_ERROR(CheckNnFloat(ctx.op(), x.dtype));
  int64_t len = opdefs::ReadAttrs<RmsNormAttrs>(ctx.attrs()).len;
  int64_t rows = len > 0 ? x.numel() / len : 0;
  bool hw = ctx.num_inputs() > 3;
  return Launched(ctx.op(), LaunchRmsNormGrad(ToScalarType(x.dtype), rows, len, ctx.input(0).data,
                                              x.data, ctx.input(2).data,
                                              hw ? ctx.input(3).data : nullptr, ctx.output(0).data,
                                              hw ? ctx.output(1).data : nullptr, StreamOf(ctx)));
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL(layer_norm, RowNorm);
OFL_REGISTER_CUDA_KERNEL(rms_norm, RmsNorm);
OFL_REGISTER_CUDA_KERNEL(rms_norm_grad, RmsNormGrad);
OFL_REGISTER_CUDA_KERNEL(group_norm, RowNorm);
OFL_REGISTER_CUDA_KERNEL(layer_norm_grad, RowNormGrad);
OFL_REGISTER_CUDA_KERNEL(group_norm_grad, RowNormGrad);
OFL_REGISTER_CUDA_KERNEL(batch_norm, BatchNorm);
OFL_REGISTER_CUDA_KERNEL(batch_norm_grad, BatchNormGrad);

}  // namespace cuda
}  // namespace oneflow_like
