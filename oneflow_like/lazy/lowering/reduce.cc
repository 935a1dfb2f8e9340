// Lowerings of the reduce family beyond sum (shape.cc): amax/amin -> reduce max/min (NaN
// propagating, like the kernel), logsumexp as max + log(sum(exp(x - max))), softmax /
// log_softmax and their backward ops as compositions (reductions plus elementwise work that
// fuses with its neighbours: attention's scale before the softmax, dropout after it).
#include <algorithm>
#include <limits>

#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/reduce.h"
#include "oneflow_like/opdefs/softmax.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsFloat(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}

// The reduced dims of a reduce-family op (opdefs/reduce.def's typed attributes).
DimVector Dims(const TracedOp& op) {
  auto v = opdefs::ReadAttrs<opdefs::ReduceAttrs>(op.attrs).dims;
  return DimVector(v.begin(), v.end());
}

// x reduced over `dims`, then broadcast back to x's shape (the keepdim value, expanded).
StatusOr<HloInstruction*> BroadcastBack(LowerCtx& ctx, HloInstruction* r, const Shape& full,
                                        const DimVector& dims) {
  DimVector kept;
  for (int64_t i = 0; i < full.ndim(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) kept.push_back(i);
  return ctx.b().Broadcast(r, full.dims(), kept);
}

Status LowerExtreme(LowerCtx& ctx, const TracedOp& op, bool is_max) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IsFloat(m.dtype) || ctx.in_meta(op, 0).dtype != m.dtype) return ctx.LowerAsKernelCall(op);
  double init =
      is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reduce(ctx.in(op, 0), ctx.Scalar(m.dtype, init), Dims(op),
                                           is_max ? hlo::ReduceKind::kMax : hlo::ReduceKind::kMin));
  if (r->shape().dims() != m.shape.dims()) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, m.shape.dims()));
  }
  ctx.set(op, 0, r);
  return Status();
}

// The pieces of a stable exp-sum over `dims`: shift = max, e = exp(x - shift) at x's shape,
// sum = sum(e). With `finite_shift` the shift is 0 where the max is not finite, as logsumexp's
// running merge gives (all -inf -> -inf, +inf -> +inf); softmax's kernels shift by the max
// itself, so a row with +inf or only -inf is NaN there, as in PyTorch.
struct ExpSum {
  HloInstruction *shift, *shift_b, *e, *sum;
};
StatusOr<ExpSum> StableExpSum(LowerCtx& ctx, HloInstruction* x, DType t, const Shape& xs,
                              const DimVector& dims, bool finite_shift) {
  ASSIGN_OR_RETURN(auto* mx,
                   ctx.b().Reduce(x, ctx.Scalar(t, -std::numeric_limits<double>::infinity()), dims,
                                  hlo::ReduceKind::kMax));
  ExpSum r;
  r.shift = mx;
  if (finite_shift) {
    ASSIGN_OR_RETURN(auto* inf, Splat(ctx, t, std::numeric_limits<double>::infinity(),
                                      Shape(mx->shape().dims())));
    ASSIGN_OR_RETURN(auto* zero, Splat(ctx, t, 0.0, Shape(mx->shape().dims())));
    ASSIGN_OR_RETURN(auto* neg, ctx.b().Compare(mx, zero, hlo::ComparisonDirection::kLt));
    ASSIGN_OR_RETURN(auto* nmx, ctx.b().Unary(HloOpcode::kNegate, mx));
    ASSIGN_OR_RETURN(auto* ab, ctx.b().Select(neg, nmx, mx));
    ASSIGN_OR_RETURN(auto* finite, ctx.b().Compare(ab, inf, hlo::ComparisonDirection::kLt));
    ASSIGN_OR_RETURN(r.shift, ctx.b().Select(finite, mx, zero));
  }
  ASSIGN_OR_RETURN(r.shift_b, BroadcastBack(ctx, r.shift, xs, dims));
  ASSIGN_OR_RETURN(auto* d, ctx.b().Binary(HloOpcode::kSubtract, x, r.shift_b));
  ASSIGN_OR_RETURN(r.e, ctx.b().Unary(HloOpcode::kExp, d));
  ASSIGN_OR_RETURN(r.sum, ctx.b().Reduce(r.e, ctx.Scalar(t, 0.0), dims, hlo::ReduceKind::kAdd));
  return r;
}

// logsumexp over dims: shift + log(sum(exp(x - shift))).
Status LowerLogSumExp(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  const Shape& xs = ctx.in_meta(op, 0).shape;
  if (!IsFloat(m.dtype) || ctx.in_meta(op, 0).dtype != m.dtype) return ctx.LowerAsKernelCall(op);
  DimVector dims = Dims(op);
  ASSIGN_OR_RETURN(ExpSum es,
                   StableExpSum(ctx, ctx.in(op, 0), m.dtype, xs, dims, /*finite_shift=*/true));
  ASSIGN_OR_RETURN(auto* l, ctx.b().Unary(HloOpcode::kLog, es.sum));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Binary(HloOpcode::kAdd, es.shift, l));
  if (r->shape().dims() != m.shape.dims()) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, m.shape.dims()));
  }
  ctx.set(op, 0, r);
  return Status();
}

// softmax(x; dim) = exp(x - shift) / sum; log_softmax(x; dim) = x - shift - log(sum).
template <bool kLog>
Status LowerSoftmax(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IsFloat(m.dtype) || ctx.in_meta(op, 0).dtype != m.dtype || m.shape.ndim() == 0)
    return ctx.LowerAsKernelCall(op);
  int64_t dim = opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(op.attrs).dim;
  if (dim < 0) dim += m.shape.ndim();
  ASSIGN_OR_RETURN(
      ExpSum es, StableExpSum(ctx, ctx.in(op, 0), m.dtype, m.shape, {dim}, /*finite_shift=*/false));
  HloInstruction* r;
  if (kLog) {
    ASSIGN_OR_RETURN(auto* l, ctx.b().Unary(HloOpcode::kLog, es.sum));
    ASSIGN_OR_RETURN(auto* lb, BroadcastBack(ctx, l, m.shape, {dim}));
    ASSIGN_OR_RETURN(auto* d, ctx.b().Binary(HloOpcode::kSubtract, ctx.in(op, 0), es.shift_b));
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kSubtract, d, lb));
  } else {
    ASSIGN_OR_RETURN(auto* sb, BroadcastBack(ctx, es.sum, m.shape, {dim}));
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kDivide, es.e, sb));
  }
  ctx.set(op, 0, r);
  return Status();
}

// softmax_grad(dy, y; dim) = y * (dy - sum(dy * y, dim)); log_softmax_grad = dy - exp(y) * sum(dy,
// dim).
template <bool kLog>
Status LowerSoftmaxGrad(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IsFloat(m.dtype) || ctx.in_meta(op, 0).shape != m.shape ||
      ctx.in_meta(op, 1).shape != m.shape)
    return ctx.LowerAsKernelCall(op);
  int64_t dim = opdefs::ReadAttrs<opdefs::SoftmaxAttrs>(op.attrs).dim;
  if (dim < 0) dim += m.shape.ndim();
  HloInstruction *dy = ctx.in(op, 0), *y = ctx.in(op, 1);
  HloInstruction* summand = dy;
  if (!kLog) {
    ASSIGN_OR_RETURN(summand, ctx.b().Binary(HloOpcode::kMultiply, dy, y));
  }
  ASSIGN_OR_RETURN(auto* s,
                   ctx.b().Reduce(summand, ctx.Scalar(m.dtype, 0.0), {dim}, hlo::ReduceKind::kAdd));
  ASSIGN_OR_RETURN(auto* sb, BroadcastBack(ctx, s, m.shape, {dim}));
  HloInstruction* r;
  if (kLog) {
    ASSIGN_OR_RETURN(auto* e, ctx.b().Unary(HloOpcode::kExp, y));
    ASSIGN_OR_RETURN(auto* es, ctx.b().Binary(HloOpcode::kMultiply, e, sb));
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kSubtract, dy, es));
  } else {
    ASSIGN_OR_RETURN(auto* diff, ctx.b().Binary(HloOpcode::kSubtract, dy, sb));
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kMultiply, y, diff));
  }
  ctx.set(op, 0, r);
  return Status();
}

// reduce_eq_mask(x, m; signed=false) -> 1 where x == m (NaN matches NaN), else 0 (amax/amin grad).
Status LowerEqMask(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& mt = ctx.out_meta(op, 0);
  if (!IsFloat(mt.dtype) || opdefs::ReadAttrs<opdefs::EqMaskAttrs>(op.attrs).is_signed)
    return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto* x, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, mt.shape));
  ASSIGN_OR_RETURN(auto* m, BroadcastTo(ctx, ctx.in(op, 1), ctx.in_meta(op, 1).shape, mt.shape));
  ASSIGN_OR_RETURN(auto* eq, ctx.b().Compare(x, m, hlo::ComparisonDirection::kEq));
  ASSIGN_OR_RETURN(auto* xn, ctx.b().Compare(x, x, hlo::ComparisonDirection::kNe));
  ASSIGN_OR_RETURN(auto* mn, ctx.b().Compare(m, m, hlo::ComparisonDirection::kNe));
  ASSIGN_OR_RETURN(auto* both, ctx.b().Binary(HloOpcode::kAnd, xn, mn));
  ASSIGN_OR_RETURN(auto* hit, ctx.b().Binary(HloOpcode::kOr, eq, both));
  ASSIGN_OR_RETURN(auto* one, Splat(ctx, mt.dtype, 1.0, mt.shape));
  ASSIGN_OR_RETURN(auto* zero, Splat(ctx, mt.dtype, 0.0, mt.shape));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Select(hit, one, zero));
  ctx.set(op, 0, r);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(amax,
                      [](LowerCtx& c, const TracedOp& o) { return LowerExtreme(c, o, true); });
OFL_REGISTER_LOWERING(amin,
                      [](LowerCtx& c, const TracedOp& o) { return LowerExtreme(c, o, false); });
OFL_REGISTER_LOWERING(logsumexp, LowerLogSumExp);
OFL_REGISTER_LOWERING(softmax, LowerSoftmax<false>);
OFL_REGISTER_LOWERING(log_softmax, LowerSoftmax<true>);
OFL_REGISTER_LOWERING(softmax_grad, LowerSoftmaxGrad<false>);
OFL_REGISTER_LOWERING(log_softmax_grad, LowerSoftmaxGrad<true>);
OFL_REGISTER_LOWERING(reduce_eq_mask, LowerEqMask);

}  // namespace lazy
}  // namespace oneflow_like
