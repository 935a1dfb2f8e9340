// Lowerings of the normalization family: layer_norm, group_norm, batch_norm and their gradients
// as reductions plus fused loops, so the residual add / dropout around a transformer's layer
// norms and the relu after a CNN's batch norm fuse with them. group_norm and batch_norm follow
// their kernels (kernels/cpu/norm.cc) operation for operation: statistics accumulate in double,
// the rest is computed in the op's dtype. batch_norm lowers by default (its fused loops beat the
// kernel calls once pred loads vectorise: BatchNorm2d+relu fwd+bwd on [64,32,8,8] ~0.42 ->
// ~0.21-0.31 ms, train_digits' CNN step ~5.3 -> ~5.0 ms); group_norm only under
// ONEFLOW_LIKE_LOWER_NORMS=1 (its loops are still slower than the kernel: ~0.5-0.8 -> ~0.9 ms);
// ONEFLOW_LIKE_LOWER_NORMS=0 keeps both as kernel calls. See compiler/README.md.
#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/norm.h"

namespace oneflow_like {
namespace lazy {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using opdefs::BatchNormAttrs;
using opdefs::RowNormAttrs;

RowNormAttrs RowAttrs(const TracedOp& op) {
  return opdefs::ReadAttrs<RowNormAttrs>(op.attrs);
}

// layer_norm's attrs describe rows of `len` elements (groups = 1, inner = 1); other shapes of
// the shared row-norm op (group_norm) are not lowered.
bool PlainRows(const TracedOp& op, DType t) {
  RowNormAttrs a = RowAttrs(op);
  return (t == DType::kF32 || t == DType::kF64) && a.groups == 1 && a.inner == 1 &&
         a.channels_per_group > 0;
}

struct Rows {
  int64_t rows, len;
  Shape shape;  // [rows, len]
};

Rows RowsOf(const TracedOp& op, const TensorMeta& x) {
  Rows r;
  r.len = RowAttrs(op).channels_per_group;
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

// layer_norm / group_norm forward: y [* w] [+ b] for rows [rows, len] whose element j uses affine
// index j (inputs (x [, w] [, b])).
StatusOr<HloInstruction*> RowAffine(LowerCtx& ctx, const TracedOp& op, HloInstruction* y,
                                    const Rows& r) {
  int next = 1;
  RowNormAttrs a = RowAttrs(op);
  if (a.has_weight) {
    ASSIGN_OR_RETURN(HloInstruction * w, PerColumn(ctx, ctx.in(op, next++), r));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kMultiply, y, w));
  }
  if (a.has_bias) {
    ASSIGN_OR_RETURN(HloInstruction * b, PerColumn(ctx, ctx.in(op, next++), r));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kAdd, y, b));
  }
  return y;
}
// The norms' first outputs: y (reshaped to x's shape), mean, rstd / invstd.
Status SetNormOutputs(LowerCtx& ctx, const TracedOp& op, HloInstruction* y, const Shape& x_shape,
                      HloInstruction* mean, HloInstruction* rstd) {
  ASSIGN_OR_RETURN(y, ctx.b().Reshape(y, x_shape.dims()));
  ctx.set(op, 0, y);
  ctx.set(op, 1, mean);
  ctx.set(op, 2, rstd);
  return Status();
}

// layer_norm(x [, w] [, b]; eps) -> (y, mean [rows], rstd [rows]):
// mean = sum(x) / len, var = sum((x - mean)^2) / len, rstd = 1 / sqrt(var + eps),
// y = (x - mean) * rstd [* w] [+ b].
Status LowerLayerNorm(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 0);
  if (!PlainRows(op, xm.dtype)) return ctx.LowerAsKernelCall(op);
  const DType t = xm.dtype;
  const Rows r = RowsOf(op, xm);
  ASSIGN_OR_RETURN(HloInstruction * x, ctx.b().Reshape(ctx.in(op, 0), r.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction * mean, RowMean(ctx, x, t, r));
  ASSIGN_OR_RETURN(HloInstruction * mean_b, PerRow(ctx, mean, r));
  ASSIGN_OR_RETURN(HloInstruction * xc, ctx.b().Binary(HloOpcode::kSubtract, x, mean_b));
  ASSIGN_OR_RETURN(HloInstruction * sq, ctx.b().Binary(HloOpcode::kMultiply, xc, xc));
  ASSIGN_OR_RETURN(HloInstruction * var, RowMean(ctx, sq, t, r));
  ASSIGN_OR_RETURN(HloInstruction * eps, Splat(ctx, t, RowAttrs(op).eps, Shape{r.rows}));
  ASSIGN_OR_RETURN(HloInstruction * ve, ctx.b().Binary(HloOpcode::kAdd, var, eps));
  ASSIGN_OR_RETURN(HloInstruction * rstd, ctx.b().Unary(HloOpcode::kRsqrt, ve));
  ASSIGN_OR_RETURN(HloInstruction * rstd_b, PerRow(ctx, rstd, r));
  ASSIGN_OR_RETURN(HloInstruction * y, ctx.b().Binary(HloOpcode::kMultiply, xc, rstd_b));
  ASSIGN_OR_RETURN(y, RowAffine(ctx, op, y, r));
  return SetNormOutputs(ctx, op, y, xm.shape, mean, rstd);
}

// layer_norm_grad(dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]) with xhat = (x - mean) rstd,
// g = dy [* w]: dx = rstd (g - mean(g) - xhat mean(g xhat)), dw = sum_rows(dy xhat),
// db = sum_rows(dy).
Status LowerLayerNormGrad(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 1);
  if (!PlainRows(op, xm.dtype)) return ctx.LowerAsKernelCall(op);
  const DType t = xm.dtype;
  const Rows r = RowsOf(op, xm);
  ASSIGN_OR_RETURN(HloInstruction * dy, ctx.b().Reshape(ctx.in(op, 0), r.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction * x, ctx.b().Reshape(ctx.in(op, 1), r.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction * mean_b, PerRow(ctx, ctx.in(op, 2), r));
  ASSIGN_OR_RETURN(HloInstruction * rstd_b, PerRow(ctx, ctx.in(op, 3), r));
  ASSIGN_OR_RETURN(HloInstruction * xc, ctx.b().Binary(HloOpcode::kSubtract, x, mean_b));
  ASSIGN_OR_RETURN(HloInstruction * xhat, ctx.b().Binary(HloOpcode::kMultiply, xc, rstd_b));
  const RowNormAttrs attrs = RowAttrs(op);
  const bool hw = attrs.has_weight, hb = attrs.has_bias;
  HloInstruction* g = dy;
  if (hw) {
    ASSIGN_OR_RETURN(HloInstruction * w, PerColumn(ctx, ctx.in(op, 4), r));
    ASSIGN_OR_RETURN(g, ctx.b().Binary(HloOpcode::kMultiply, dy, w));
  }
  ASSIGN_OR_RETURN(HloInstruction * mg, RowMean(ctx, g, t, r));
  ASSIGN_OR_RETURN(HloInstruction * gx, ctx.b().Binary(HloOpcode::kMultiply, g, xhat));
  ASSIGN_OR_RETURN(HloInstruction * mgx, RowMean(ctx, gx, t, r));
  ASSIGN_OR_RETURN(HloInstruction * mg_b, PerRow(ctx, mg, r));
  ASSIGN_OR_RETURN(HloInstruction * mgx_b, PerRow(ctx, mgx, r));
  ASSIGN_OR_RETURN(HloInstruction * d, ctx.b().Binary(HloOpcode::kSubtract, g, mg_b));
  ASSIGN_OR_RETURN(HloInstruction * xm2, ctx.b().Binary(HloOpcode::kMultiply, xhat, mgx_b));
  ASSIGN_OR_RETURN(d, ctx.b().Binary(HloOpcode::kSubtract, d, xm2));
  ASSIGN_OR_RETURN(HloInstruction * dx, ctx.b().Binary(HloOpcode::kMultiply, d, rstd_b));
  ASSIGN_OR_RETURN(dx, ctx.b().Reshape(dx, xm.shape.dims()));
  ctx.set(op, 0, dx);
  int next = 1;
  if (hw) {
    ASSIGN_OR_RETURN(HloInstruction * dyx, ctx.b().Binary(HloOpcode::kMultiply, dy, xhat));
    ASSIGN_OR_RETURN(HloInstruction * dw,
                     ctx.b().Reduce(dyx, ctx.Scalar(t, 0.0), {0}, hlo::ReduceKind::kAdd));
    ctx.set(op, next++, dw);
  }
  if (hb) {
    ASSIGN_OR_RETURN(HloInstruction * db,
                     ctx.b().Reduce(dy, ctx.Scalar(t, 0.0), {0}, hlo::ReduceKind::kAdd));
    ctx.set(op, next++, db);
  }
  return Status();
}

bool IsFloat(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}
bool GroupNormAsHlo() {
  return EnvFlag("ONEFLOW_LIKE_LOWER_NORMS");
}
bool BatchNormAsHlo() {
  return EnvFlag("ONEFLOW_LIKE_LOWER_NORMS", /*default_on=*/true);
}

// `x` in double: the kernels add up statistics in double (a float term is widened, then added).
StatusOr<HloInstruction*> F64(LowerCtx& ctx, HloInstruction* x) {
  if (x->shape().dtype() == DType::kF64) return x;
  return ctx.b().Convert(x, DType::kF64);
}
// sum over `dims` of x, accumulated in double.
StatusOr<HloInstruction*> SumF64(LowerCtx& ctx, HloInstruction* x, DimVector dims) {
  ASSIGN_OR_RETURN(HloInstruction * xd, F64(ctx, x));
  return ctx.b().Reduce(xd, ctx.Scalar(DType::kF64, 0.0), dims, hlo::ReduceKind::kAdd);
}
// x / n for a double [k] vector x.
StatusOr<HloInstruction*> DivF64(LowerCtx& ctx, HloInstruction* x, double n) {
  ASSIGN_OR_RETURN(HloInstruction * c, Splat(ctx, DType::kF64, n, Shape(x->shape().dims())));
  return ctx.b().Binary(HloOpcode::kDivide, x, c);
}
// 1 / sqrt(v + eps) in double, as the kernels compute the inverse standard deviation.
StatusOr<HloInstruction*> InvStdF64(LowerCtx& ctx, HloInstruction* v, double eps) {
  ASSIGN_OR_RETURN(HloInstruction * e, Splat(ctx, DType::kF64, eps, Shape(v->shape().dims())));
  ASSIGN_OR_RETURN(HloInstruction * ve, ctx.b().Binary(HloOpcode::kAdd, v, e));
  ASSIGN_OR_RETURN(HloInstruction * sq, ctx.b().Unary(HloOpcode::kSqrt, ve));
  ASSIGN_OR_RETURN(HloInstruction * one, Splat(ctx, DType::kF64, 1.0, Shape(v->shape().dims())));
  return ctx.b().Binary(HloOpcode::kDivide, one, sq);
}
StatusOr<HloInstruction*> Mul(LowerCtx& ctx, HloInstruction* a, HloInstruction* b) {
  return ctx.b().Binary(HloOpcode::kMultiply, a, b);
}
StatusOr<HloInstruction*> Sub(LowerCtx& ctx, HloInstruction* a, HloInstruction* b) {
  return ctx.b().Binary(HloOpcode::kSubtract, a, b);
}

// ---- batch_norm: x viewed as [N, C, S], statistics per channel over N * S -------------------

struct Bn {
  int64_t n, c, s;
  DimVector ncs() const { return {n, c, s}; }
  double count() const { return static_cast<double>(n * s); }
};
Bn BnOf(const Shape& x) {
  Bn q{x[0], x[1], 1};
  for (int64_t i = 2; i < x.ndim(); ++i) q.s *= x[i];
  return q;
}
// A per-channel [C] value broadcast over [N, C, S].
StatusOr<HloInstruction*> PerChannel(LowerCtx& ctx, HloInstruction* v, const Bn& q) {
  return ctx.b().Broadcast(v, q.ncs(), {1});
}

// batch_norm(x, w, b, running_mean, running_var; training, eps) -> (y, mean, invstd, uvar). In
// training the statistics are the batch's: m = sum(x) / cnt, ss = sum((x - m)^2) (double), the
// biased variance ss / cnt normalises and the unbiased ss / (cnt - 1) is what the functional
// entry folds into running_var (outside this op, as in-place ops that lower on their own); in
// eval m and v are the running stats. is = 1 / sqrt(v + eps), y = x * T(w is) + T(b - m w is).
Status LowerBatchNorm(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 0);
  const DType t = xm.dtype;
  // Off by default (slower than the kernel); other dtypes: the kernel reports them.
  if (!BatchNormAsHlo() || !IsFloat(t)) return ctx.LowerAsKernelCall(op);
  const Bn q = BnOf(xm.shape);
  ASSIGN_OR_RETURN(HloInstruction * x, ctx.b().Reshape(ctx.in(op, 0), q.ncs()));
  const BatchNormAttrs a = opdefs::ReadAttrs<BatchNormAttrs>(op.attrs);
  HloInstruction *m, *v, *uvar;
  if (a.training) {
    ASSIGN_OR_RETURN(HloInstruction * s, SumF64(ctx, x, {0, 2}));
    ASSIGN_OR_RETURN(m, DivF64(ctx, s, q.count()));
    ASSIGN_OR_RETURN(HloInstruction * xd, F64(ctx, x));
    ASSIGN_OR_RETURN(HloInstruction * mb, PerChannel(ctx, m, q));
    ASSIGN_OR_RETURN(HloInstruction * d, Sub(ctx, xd, mb));
    ASSIGN_OR_RETURN(HloInstruction * dd, Mul(ctx, d, d));
    ASSIGN_OR_RETURN(HloInstruction * ss, SumF64(ctx, dd, {0, 2}));
    ASSIGN_OR_RETURN(v, DivF64(ctx, ss, q.count()));
    ASSIGN_OR_RETURN(HloInstruction * u, DivF64(ctx, ss, q.count() > 1 ? q.count() - 1 : 1.0));
    ASSIGN_OR_RETURN(uvar, ctx.b().Convert(u, t));
  } else {
    ASSIGN_OR_RETURN(m, F64(ctx, ctx.in(op, 3)));
    ASSIGN_OR_RETURN(v, F64(ctx, ctx.in(op, 4)));
    uvar = ctx.in(op, 4);
  }
  ASSIGN_OR_RETURN(HloInstruction * is, InvStdF64(ctx, v, a.eps));
  ASSIGN_OR_RETURN(HloInstruction * w, F64(ctx, ctx.in(op, 1)));
  ASSIGN_OR_RETURN(HloInstruction * b, F64(ctx, ctx.in(op, 2)));
  ASSIGN_OR_RETURN(HloInstruction * wis, Mul(ctx, w, is));
  ASSIGN_OR_RETURN(HloInstruction * sc, ctx.b().Convert(wis, t));
  ASSIGN_OR_RETURN(HloInstruction * mw, Mul(ctx, m, w));
  ASSIGN_OR_RETURN(HloInstruction * mwis, Mul(ctx, mw, is));
  ASSIGN_OR_RETURN(HloInstruction * shd, Sub(ctx, b, mwis));
  ASSIGN_OR_RETURN(HloInstruction * sh, ctx.b().Convert(shd, t));
  ASSIGN_OR_RETURN(HloInstruction * scb, PerChannel(ctx, sc, q));
  ASSIGN_OR_RETURN(HloInstruction * shb, PerChannel(ctx, sh, q));
  ASSIGN_OR_RETURN(HloInstruction * y, Mul(ctx, x, scb));
  ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kAdd, y, shb));
  ASSIGN_OR_RETURN(HloInstruction * mean, ctx.b().Convert(m, t));
  ASSIGN_OR_RETURN(HloInstruction * invstd, ctx.b().Convert(is, t));
  ctx.set(op, 3, uvar);
  return SetNormOutputs(ctx, op, y, xm.shape, mean, invstd);
}

// batch_norm_grad(dy, x, w, mean, invstd; training) -> (dx, dw, db) in T with double sums:
// sg = sum(dy), sgx = sum(dy (x - m) is); dw = sgx, db = sg;
// dx = w is (dy - mg - (x - m) is mgx) with mg = sg / cnt, mgx = sgx / cnt (0 in eval).
Status LowerBatchNormGrad(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 1);
  const DType t = xm.dtype;
  // Off by default (slower than the kernel); other dtypes: the kernel reports them.
  if (!BatchNormAsHlo() || !IsFloat(t)) return ctx.LowerAsKernelCall(op);
  const Bn q = BnOf(xm.shape);
  ASSIGN_OR_RETURN(HloInstruction * dy, ctx.b().Reshape(ctx.in(op, 0), q.ncs()));
  ASSIGN_OR_RETURN(HloInstruction * x, ctx.b().Reshape(ctx.in(op, 1), q.ncs()));
  HloInstruction *w = ctx.in(op, 2), *is = ctx.in(op, 4);
  ASSIGN_OR_RETURN(HloInstruction * mb, PerChannel(ctx, ctx.in(op, 3), q));
  ASSIGN_OR_RETURN(HloInstruction * isb, PerChannel(ctx, is, q));
  ASSIGN_OR_RETURN(HloInstruction * xc, Sub(ctx, x, mb));
  ASSIGN_OR_RETURN(HloInstruction * gxc, Mul(ctx, dy, xc));
  ASSIGN_OR_RETURN(HloInstruction * gxh, Mul(ctx, gxc, isb));
  ASSIGN_OR_RETURN(HloInstruction * sg, SumF64(ctx, dy, {0, 2}));
  ASSIGN_OR_RETURN(HloInstruction * sgx, SumF64(ctx, gxh, {0, 2}));
  HloInstruction *mg, *mgx;
  if (opdefs::ReadAttrs<BatchNormAttrs>(op.attrs).training) {
    ASSIGN_OR_RETURN(HloInstruction * a, DivF64(ctx, sg, q.count()));
    ASSIGN_OR_RETURN(mg, ctx.b().Convert(a, t));
    ASSIGN_OR_RETURN(HloInstruction * c, DivF64(ctx, sgx, q.count()));
    ASSIGN_OR_RETURN(mgx, ctx.b().Convert(c, t));
  } else {
    ASSIGN_OR_RETURN(mg, Splat(ctx, t, 0.0, Shape{q.c}));
    mgx = mg;
  }
  ASSIGN_OR_RETURN(HloInstruction * k, Mul(ctx, w, is));
  ASSIGN_OR_RETURN(HloInstruction * kb, PerChannel(ctx, k, q));
  ASSIGN_OR_RETURN(HloInstruction * mgb, PerChannel(ctx, mg, q));
  ASSIGN_OR_RETURN(HloInstruction * mgxb, PerChannel(ctx, mgx, q));
  ASSIGN_OR_RETURN(HloInstruction * d, Sub(ctx, dy, mgb));
  ASSIGN_OR_RETURN(HloInstruction * xh, Mul(ctx, xc, isb));
  ASSIGN_OR_RETURN(HloInstruction * xhm, Mul(ctx, xh, mgxb));
  ASSIGN_OR_RETURN(d, Sub(ctx, d, xhm));
  ASSIGN_OR_RETURN(HloInstruction * dx, Mul(ctx, kb, d));
  ASSIGN_OR_RETURN(dx, ctx.b().Reshape(dx, xm.shape.dims()));
  ctx.set(op, 0, dx);
  ASSIGN_OR_RETURN(HloInstruction * dw, ctx.b().Convert(sgx, t));
  ASSIGN_OR_RETURN(HloInstruction * db, ctx.b().Convert(sg, t));
  ctx.set(op, 1, dw);
  ctx.set(op, 2, db);
  return Status();
}

// ---- group_norm: rows [N * G, cpg * inner]; element (n, g, c, i) uses affine index g * cpg + c --

struct Gn {
  int64_t n, groups, cpg, inner;
  DimVector rows() const { return {n * groups, cpg * inner}; }
  DimVector ngci() const { return {n, groups, cpg, inner}; }
  double len() const { return static_cast<double>(cpg * inner); }
};
Gn GnOf(const TracedOp& op, const Shape& x) {
  RowNormAttrs a = RowAttrs(op);
  return Gn{x[0], a.groups, a.channels_per_group, a.inner};
}
// A per-row [N * G] value broadcast to `dims` ([N, G, ...]).
StatusOr<HloInstruction*> PerGroupRow(LowerCtx& ctx, HloInstruction* v, const Gn& q,
                                      DimVector dims) {
  ASSIGN_OR_RETURN(v, ctx.b().Reshape(v, {q.n, q.groups}));
  return ctx.b().Broadcast(v, dims, {0, 1});
}
// An affine parameter [C] broadcast to `dims` ([N, G, cpg, ...]).
StatusOr<HloInstruction*> PerAffine(LowerCtx& ctx, HloInstruction* v, const Gn& q, DimVector dims) {
  ASSIGN_OR_RETURN(v, ctx.b().Reshape(v, {q.groups, q.cpg}));
  return ctx.b().Broadcast(v, dims, {1, 2});
}
// group_norm's attrs, as group_norm builds them for x [N, C, *] (C = groups * cpg, S = inner).
bool GroupRows(const TracedOp& op, const TensorMeta& x) {
  RowNormAttrs a = RowAttrs(op);
  return IsFloat(x.dtype) && x.shape.ndim() >= 2 && a.groups > 0 && a.channels_per_group > 0 &&
         x.shape[1] == a.groups * a.channels_per_group &&
         x.shape.numel() == x.shape[0] * x.shape[1] * a.inner;
}

// group_norm(x [, w] [, b]; groups, channels_per_group, inner, eps) -> (y, mean, rstd) [N * G]:
// m = sum(x) / len (double), mt = T(m), v = sum(T(x - mt)^2) / len (double), rs = T(1/sqrt(v +
// eps)); y = x * sc + sh with sc = rs [* w], sh = [b | 0] - mt * sc (the kernel's general rows),
// or, for one group over a single position (the kernel's layer_norm rows), y = (x - mt) rs [* w] [+
// b].
Status LowerGroupNorm(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 0);
  // Off by default (slower than the kernel); other dtypes: the kernel reports them.
  if (!GroupNormAsHlo() || !GroupRows(op, xm)) return ctx.LowerAsKernelCall(op);
  const DType t = xm.dtype;
  const Gn q = GnOf(op, xm.shape);
  ASSIGN_OR_RETURN(HloInstruction * xr, ctx.b().Reshape(ctx.in(op, 0), q.rows()));
  ASSIGN_OR_RETURN(HloInstruction * s, SumF64(ctx, xr, {1}));
  ASSIGN_OR_RETURN(HloInstruction * m, DivF64(ctx, s, q.len()));
  ASSIGN_OR_RETURN(HloInstruction * mt, ctx.b().Convert(m, t));
  ASSIGN_OR_RETURN(HloInstruction * mtr, ctx.b().Broadcast(mt, q.rows(), {0}));
  ASSIGN_OR_RETURN(HloInstruction * d, Sub(ctx, xr, mtr));
  ASSIGN_OR_RETURN(HloInstruction * dd, Mul(ctx, d, d));
  ASSIGN_OR_RETURN(HloInstruction * ss, SumF64(ctx, dd, {1}));
  ASSIGN_OR_RETURN(HloInstruction * v, DivF64(ctx, ss, q.len()));
  ASSIGN_OR_RETURN(HloInstruction * isd, InvStdF64(ctx, v, RowAttrs(op).eps));
  ASSIGN_OR_RETURN(HloInstruction * rs, ctx.b().Convert(isd, t));
  const RowNormAttrs attrs = RowAttrs(op);
  const bool hw = attrs.has_weight, hb = attrs.has_bias;
  HloInstruction* w = hw ? ctx.in(op, 1) : nullptr;
  HloInstruction* b = hb ? ctx.in(op, hw ? 2 : 1) : nullptr;
  HloInstruction* y;
  if (q.groups == 1 && q.inner == 1) {
    ASSIGN_OR_RETURN(HloInstruction * rsr, ctx.b().Broadcast(rs, q.rows(), {0}));
    ASSIGN_OR_RETURN(y, Mul(ctx, d, rsr));
    ASSIGN_OR_RETURN(y, RowAffine(ctx, op, y, Rows{q.n, q.cpg, Shape(q.rows())}));
  } else {
    const DimVector ngc{q.n, q.groups, q.cpg};
    ASSIGN_OR_RETURN(HloInstruction * sc, PerGroupRow(ctx, rs, q, ngc));
    if (w) {
      ASSIGN_OR_RETURN(HloInstruction * wc, PerAffine(ctx, w, q, ngc));
      ASSIGN_OR_RETURN(sc, Mul(ctx, sc, wc));
    }
    HloInstruction* base;
    if (b) {
      ASSIGN_OR_RETURN(base, PerAffine(ctx, b, q, ngc));
    } else {
      ASSIGN_OR_RETURN(base, Splat(ctx, t, 0.0, Shape(ngc)));
    }
    ASSIGN_OR_RETURN(HloInstruction * mtc, PerGroupRow(ctx, mt, q, ngc));
    ASSIGN_OR_RETURN(HloInstruction * msc, Mul(ctx, mtc, sc));
    ASSIGN_OR_RETURN(HloInstruction * sh, Sub(ctx, base, msc));
    ASSIGN_OR_RETURN(HloInstruction * x4, ctx.b().Reshape(ctx.in(op, 0), q.ngci()));
    ASSIGN_OR_RETURN(HloInstruction * scb, ctx.b().Broadcast(sc, q.ngci(), {0, 1, 2}));
    ASSIGN_OR_RETURN(HloInstruction * shb, ctx.b().Broadcast(sh, q.ngci(), {0, 1, 2}));
    ASSIGN_OR_RETURN(y, Mul(ctx, x4, scb));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kAdd, y, shb));
  }
  return SetNormOutputs(ctx, op, y, xm.shape, mt, rs);
}

// group_norm_grad(dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]) ([C] each), per row in T with
// double sums: g = dy [* w], xh = (x - m) rs, mg = T(sum(g) / len), mgx = T(sum(g xh) / len),
// dx = rs (g - mg - xh mgx); dw[c] = sum over n, i of dy xh, db[c] = sum of dy.
Status LowerGroupNormGrad(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& xm = ctx.in_meta(op, 1);
  // Off by default (slower than the kernel); other dtypes: the kernel reports them.
  if (!GroupNormAsHlo() || !GroupRows(op, xm)) return ctx.LowerAsKernelCall(op);
  const DType t = xm.dtype;
  const Gn q = GnOf(op, xm.shape);
  const DimVector full = q.ngci();
  ASSIGN_OR_RETURN(HloInstruction * dy, ctx.b().Reshape(ctx.in(op, 0), full));
  ASSIGN_OR_RETURN(HloInstruction * x, ctx.b().Reshape(ctx.in(op, 1), full));
  ASSIGN_OR_RETURN(HloInstruction * mb, PerGroupRow(ctx, ctx.in(op, 2), q, full));
  ASSIGN_OR_RETURN(HloInstruction * rsb, PerGroupRow(ctx, ctx.in(op, 3), q, full));
  const RowNormAttrs attrs = RowAttrs(op);
  const bool hw = attrs.has_weight, hb = attrs.has_bias;
  HloInstruction* g = dy;
  if (hw) {
    ASSIGN_OR_RETURN(HloInstruction * wb, PerAffine(ctx, ctx.in(op, 4), q, full));
    ASSIGN_OR_RETURN(g, Mul(ctx, dy, wb));
  }
  ASSIGN_OR_RETURN(HloInstruction * xc, Sub(ctx, x, mb));
  ASSIGN_OR_RETURN(HloInstruction * xh, Mul(ctx, xc, rsb));
  ASSIGN_OR_RETURN(HloInstruction * gxh, Mul(ctx, g, xh));
  ASSIGN_OR_RETURN(HloInstruction * gr, ctx.b().Reshape(g, q.rows()));
  ASSIGN_OR_RETURN(HloInstruction * gxhr, ctx.b().Reshape(gxh, q.rows()));
  ASSIGN_OR_RETURN(HloInstruction * sg, SumF64(ctx, gr, {1}));
  ASSIGN_OR_RETURN(HloInstruction * sgx, SumF64(ctx, gxhr, {1}));
  ASSIGN_OR_RETURN(HloInstruction * a, DivF64(ctx, sg, q.len()));
  ASSIGN_OR_RETURN(HloInstruction * mg, ctx.b().Convert(a, t));
  ASSIGN_OR_RETURN(HloInstruction * c, DivF64(ctx, sgx, q.len()));
  ASSIGN_OR_RETURN(HloInstruction * mgx, ctx.b().Convert(c, t));
  ASSIGN_OR_RETURN(HloInstruction * mgb, PerGroupRow(ctx, mg, q, full));
  ASSIGN_OR_RETURN(HloInstruction * mgxb, PerGroupRow(ctx, mgx, q, full));
  ASSIGN_OR_RETURN(HloInstruction * d, Sub(ctx, g, mgb));
  ASSIGN_OR_RETURN(HloInstruction * xhm, Mul(ctx, xh, mgxb));
  ASSIGN_OR_RETURN(d, Sub(ctx, d, xhm));
  ASSIGN_OR_RETURN(HloInstruction * dx, Mul(ctx, rsb, d));
  ASSIGN_OR_RETURN(dx, ctx.b().Reshape(dx, xm.shape.dims()));
  ctx.set(op, 0, dx);
  // Per channel: [N, C, inner] reduced over N and inner.
  const DimVector nci{q.n, q.groups * q.cpg, q.inner};
  int next = 1;
  if (hw) {
    ASSIGN_OR_RETURN(HloInstruction * dyxh, Mul(ctx, dy, xh));
    ASSIGN_OR_RETURN(dyxh, ctx.b().Reshape(dyxh, nci));
    ASSIGN_OR_RETURN(HloInstruction * dw, SumF64(ctx, dyxh, {0, 2}));
    ASSIGN_OR_RETURN(dw, ctx.b().Convert(dw, t));
    ctx.set(op, next++, dw);
  }
  if (hb) {
    ASSIGN_OR_RETURN(HloInstruction * dyc, ctx.b().Reshape(dy, nci));
    ASSIGN_OR_RETURN(HloInstruction * db, SumF64(ctx, dyc, {0, 2}));
    ASSIGN_OR_RETURN(db, ctx.b().Convert(db, t));
    ctx.set(op, next++, db);
  }
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(layer_norm, LowerLayerNorm);
OFL_REGISTER_LOWERING(layer_norm_grad, LowerLayerNormGrad);
OFL_REGISTER_LOWERING(batch_norm, LowerBatchNorm);
OFL_REGISTER_LOWERING(batch_norm_grad, LowerBatchNormGrad);
OFL_REGISTER_LOWERING(group_norm, LowerGroupNorm);
OFL_REGISTER_LOWERING(group_norm_grad, LowerGroupNormGrad);

}  // namespace lazy
}  // namespace oneflow_like
