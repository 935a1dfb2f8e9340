// Lowerings of the normalization family: layer_norm and its gradient as row reductions plus
// fused loops, so the residual add and dropout around a transformer's layer norms fuse with it.
// (group_norm and batch_norm keep their kernels.)
#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// layer_norm's attrs describe rows of `len` elements (groups = 1, inner = 1); other shapes of
// the shared row-norm op (group_norm) are not lowered.
bool PlainRows(const TracedOp& op, DType t) {
  return (t == DType::kF32 || t == DType::kF64) && op.attrs.Int("groups") == 1 && op.attrs.Int("inner") == 1 &&
         op.attrs.Int("channels_per_group") > 0;
}

struct Rows {
  int64_t rows, len;
  Shape shape;  // [rows, len]
};

Rows RowsOf(const TracedOp& op, const TensorMeta& x) {
  Rows r;
  r.len = op.attrs.Int("channels_per_group");
  r.rows = x.shape.numel() / r.len;
  r.shape = Shape{r.rows, r.len};
  return r;
}

// Per-row values [rows] broadcast to [rows, len].
StatusOr<HloInstruction*> PerRow(LowerCtx& ctx, HloInstruction* v, const Rows& r) {
  return ctx.b().Broadcast(v, r.shape.dims(), {0});
}
// Per-column values (the affine weight, [len]) broadcast to [rows, len].
StatusOr<HloInstruction*> PerColumn(LowerCtx& ctx, HloInstruction* v, const Rows& r) {
  ASSIGN_OR_RETURN(v, ctx.b().Reshape(v, {r.len}));
  return ctx.b().Broadcast(v, r.shape.dims(), {1});
}
StatusOr<HloInstruction*> RowMean(LowerCtx& ctx, HloInstruction* x, DType t, const Rows& r) {
  ASSIGN_OR_RETURN(auto* s, ctx.b().Reduce(x, ctx.Scalar(t, 0.0), {1}, hlo::ReduceKind::kAdd));
  ASSIGN_OR_RETURN(auto* n, Splat(ctx, t, 1.0 / static_cast<double>(r.len), Shape{r.rows}));
  return ctx.b().Binary(HloOpcode::kMultiply, s, n);
}

// layer_norm(x [, w] [, b]; eps) -> (y, mean [rows], rstd [rows]):
// mean = sum(x) / len, var = sum((x - mean)^2) / len, rstd = 1 / sqrt(var + eps),
// y = (x - mean) * rstd [* w] [+ b].
Status LowerLayerNorm(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 0);
  if (!PlainRows(op, xm.dtype)) return ctx.LowerAsKernelCall(op);
  const DType t = xm.dtype;
  const Rows r = RowsOf(op, xm);
  ASSIGN_OR_RETURN(HloInstruction* x, ctx.b().Reshape(ctx.in(op, 0), r.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction* mean, RowMean(ctx, x, t, r));
  ASSIGN_OR_RETURN(HloInstruction* mean_b, PerRow(ctx, mean, r));
  ASSIGN_OR_RETURN(HloInstruction* xc, ctx.b().Binary(HloOpcode::kSubtract, x, mean_b));
  ASSIGN_OR_RETURN(HloInstruction* sq, ctx.b().Binary(HloOpcode::kMultiply, xc, xc));
  ASSIGN_OR_RETURN(HloInstruction* var, RowMean(ctx, sq, t, r));
  ASSIGN_OR_RETURN(HloInstruction* eps, Splat(ctx, t, op.attrs.Float("eps"), Shape{r.rows}));
  ASSIGN_OR_RETURN(HloInstruction* ve, ctx.b().Binary(HloOpcode::kAdd, var, eps));
  ASSIGN_OR_RETURN(HloInstruction* rstd, ctx.b().Unary(HloOpcode::kRsqrt, ve));
  ASSIGN_OR_RETURN(HloInstruction* rstd_b, PerRow(ctx, rstd, r));
  ASSIGN_OR_RETURN(HloInstruction* y, ctx.b().Binary(HloOpcode::kMultiply, xc, rstd_b));
  int next = 1;
  if (op.attrs.Bool("has_weight")) {
    ASSIGN_OR_RETURN(HloInstruction* w, PerColumn(ctx, ctx.in(op, next++), r));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kMultiply, y, w));
  }
  if (op.attrs.Bool("has_bias")) {
    ASSIGN_OR_RETURN(HloInstruction* b, PerColumn(ctx, ctx.in(op, next++), r));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kAdd, y, b));
  }
  ASSIGN_OR_RETURN(y, ctx.b().Reshape(y, xm.shape.dims()));
  ctx.set(op, 0, y);
  ctx.set(op, 1, mean);
  ctx.set(op, 2, rstd);
  return Status();
}

// layer_norm_grad(dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]) with xhat = (x - mean) rstd,
// g = dy [* w]: dx = rstd (g - mean(g) - xhat mean(g xhat)), dw = sum_rows(dy xhat),
// db = sum_rows(dy).
Status LowerLayerNormGrad(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 1);
  if (!PlainRows(op, xm.dtype)) return ctx.LowerAsKernelCall(op);
  const DType t = xm.dtype;
  const Rows r = RowsOf(op, xm);
  ASSIGN_OR_RETURN(HloInstruction* dy, ctx.b().Reshape(ctx.in(op, 0), r.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction* x, ctx.b().Reshape(ctx.in(op, 1), r.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction* mean_b, PerRow(ctx, ctx.in(op, 2), r));
  ASSIGN_OR_RETURN(HloInstruction* rstd_b, PerRow(ctx, ctx.in(op, 3), r));
  ASSIGN_OR_RETURN(HloInstruction* xc, ctx.b().Binary(HloOpcode::kSubtract, x, mean_b));
  ASSIGN_OR_RETURN(HloInstruction* xhat, ctx.b().Binary(HloOpcode::kMultiply, xc, rstd_b));
  const bool hw = op.attrs.Bool("has_weight"), hb = op.attrs.Bool("has_bias");
  HloInstruction* g = dy;
  if (hw) {
    ASSIGN_OR_RETURN(HloInstruction* w, PerColumn(ctx, ctx.in(op, 4), r));
    ASSIGN_OR_RETURN(g, ctx.b().Binary(HloOpcode::kMultiply, dy, w));
  }
  ASSIGN_OR_RETURN(HloInstruction* mg, RowMean(ctx, g, t, r));
  ASSIGN_OR_RETURN(HloInstruction* gx, ctx.b().Binary(HloOpcode::kMultiply, g, xhat));
  ASSIGN_OR_RETURN(HloInstruction* mgx, RowMean(ctx, gx, t, r));
  ASSIGN_OR_RETURN(HloInstruction* mg_b, PerRow(ctx, mg, r));
  ASSIGN_OR_RETURN(HloInstruction* mgx_b, PerRow(ctx, mgx, r));
  ASSIGN_OR_RETURN(HloInstruction* d, ctx.b().Binary(HloOpcode::kSubtract, g, mg_b));
  ASSIGN_OR_RETURN(HloInstruction* xm2, ctx.b().Binary(HloOpcode::kMultiply, xhat, mgx_b));
  ASSIGN_OR_RETURN(d, ctx.b().Binary(HloOpcode::kSubtract, d, xm2));
  ASSIGN_OR_RETURN(HloInstruction* dx, ctx.b().Binary(HloOpcode::kMultiply, d, rstd_b));
  ASSIGN_OR_RETURN(dx, ctx.b().Reshape(dx, xm.shape.dims()));
  ctx.set(op, 0, dx);
  int next = 1;
  if (hw) {
    ASSIGN_OR_RETURN(HloInstruction* dyx, ctx.b().Binary(HloOpcode::kMultiply, dy, xhat));
    ASSIGN_OR_RETURN(HloInstruction* dw, ctx.b().Reduce(dyx, ctx.Scalar(t, 0.0), {0}, hlo::ReduceKind::kAdd));
    ctx.set(op, next++, dw);
  }
  if (hb) {
    ASSIGN_OR_RETURN(HloInstruction* db, ctx.b().Reduce(dy, ctx.Scalar(t, 0.0), {0}, hlo::ReduceKind::kAdd));
    ctx.set(op, next++, db);
  }
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(layer_norm, LowerLayerNorm);
OFL_REGISTER_LOWERING(layer_norm_grad, LowerLayerNormGrad);

}  // namespace lazy
}  // namespace oneflow_like
