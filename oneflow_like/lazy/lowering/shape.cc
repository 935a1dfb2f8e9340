// Lowerings of the shape, reduce and creation families' core ops.
#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {
namespace {

Status LowerReshape(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reshape(ctx.in(op, 0), ctx.out_meta(op, 0).shape.dims()));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerExpand(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, ctx.out_meta(op, 0).shape));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerPermute(LowerCtx& ctx, const TracedOp& op) {
  const auto& p = op.attrs.Ints("perm");
  ASSIGN_OR_RETURN(auto* r, ctx.b().Transpose(ctx.in(op, 0), DimVector(p.begin(), p.end())));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerSum(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  hlo::HloInstruction* x = ctx.in(op, 0);
  if (ctx.in_meta(op, 0).dtype != m.dtype) { ASSIGN_OR_RETURN(x, ctx.b().Convert(x, m.dtype)); }
  const auto& dims = op.attrs.Ints("dims");
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reduce(x, ctx.Scalar(m.dtype, 0.0), DimVector(dims.begin(), dims.end()),
                                           hlo::ReduceKind::kAdd));
  if (op.attrs.Bool("keepdim")) { ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, m.shape.dims())); }
  ctx.set(op, 0, r);
  return Status();
}

Status LowerFull(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(auto* r, Splat(ctx, m.dtype, op.attrs.Float("value"), m.shape));
  ctx.set(op, 0, r);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(reshape, LowerReshape);
OFL_REGISTER_LOWERING(expand, LowerExpand);
OFL_REGISTER_LOWERING(permute, LowerPermute);
OFL_REGISTER_LOWERING(sum, LowerSum);
OFL_REGISTER_LOWERING(full, LowerFull);
OFL_REGISTER_LOWERING(fill_, LowerFull);

}  // namespace lazy
}  // namespace oneflow_like
