// Lowerings of the unary/binary/copy families to HLO elementwise ops (fusible).
#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::HloOpcode;

Status LowerBinary(LowerCtx& ctx, const TracedOp& op, HloOpcode code) {
  const Shape& out = ctx.out_meta(op, 0).shape;
  ASSIGN_OR_RETURN(auto* a, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, out));
  ASSIGN_OR_RETURN(auto* b, BroadcastTo(ctx, ctx.in(op, 1), ctx.in_meta(op, 1).shape, out));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Binary(code, a, b));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerAdd(LowerCtx& ctx, const TracedOp& op) {
  double alpha = op.attrs.Float("alpha", 1.0);
  const Shape& out = ctx.out_meta(op, 0).shape;
  DType t = ctx.out_meta(op, 0).dtype;
  ASSIGN_OR_RETURN(auto* a, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, out));
  ASSIGN_OR_RETURN(auto* b, BroadcastTo(ctx, ctx.in(op, 1), ctx.in_meta(op, 1).shape, out));
  if (alpha != 1.0) {
    ASSIGN_OR_RETURN(auto* s, Splat(ctx, t, alpha, out));
    ASSIGN_OR_RETURN(b, ctx.b().Binary(HloOpcode::kMultiply, b, s));
  }
  ASSIGN_OR_RETURN(auto* r, ctx.b().Binary(HloOpcode::kAdd, a, b));
  ctx.set(op, 0, r);
  return Status();
}

// x (op) scalar, or scalar (op) x when `reversed`.
Status LowerScalar(LowerCtx& ctx, const TracedOp& op, HloOpcode code, bool reversed) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(auto* s, Splat(ctx, m.dtype, op.attrs.Float("scalar"), m.shape));
  ASSIGN_OR_RETURN(auto* r, reversed ? ctx.b().Binary(code, s, ctx.in(op, 0))
                                     : ctx.b().Binary(code, ctx.in(op, 0), s));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerUnary(LowerCtx& ctx, const TracedOp& op, HloOpcode code) {
  ASSIGN_OR_RETURN(auto* r, ctx.b().Unary(code, ctx.in(op, 0)));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerRelu(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(auto* z, Splat(ctx, m.dtype, 0.0, m.shape));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Binary(HloOpcode::kMaximum, ctx.in(op, 0), z));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerReluGrad(LowerCtx& ctx, const TracedOp& op) {  // (dy, y) -> y > 0 ? dy : 0
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(auto* z, Splat(ctx, m.dtype, 0.0, m.shape));
  ASSIGN_OR_RETURN(auto* y, BroadcastTo(ctx, ctx.in(op, 1), ctx.in_meta(op, 1).shape, m.shape));
  ASSIGN_OR_RETURN(auto* dy, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, m.shape));
  ASSIGN_OR_RETURN(auto* pos, ctx.b().Compare(y, z, hlo::ComparisonDirection::kGt));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Select(pos, dy, z));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerCast(LowerCtx& ctx, const TracedOp& op) {
  // copy_ broadcasts its source to the target's shape as well.
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(auto* x, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, m.shape));
  hlo::HloInstruction* r = x;
  if (ctx.in_meta(op, 0).dtype != m.dtype) {
    ASSIGN_OR_RETURN(r, ctx.b().Convert(x, m.dtype));
  }
  ctx.set(op, 0, r);
  return Status();
}

Status LowerIdentity(LowerCtx& ctx, const TracedOp& op) {
  ctx.set(op, 0, ctx.in(op, 0));
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(add, LowerAdd);
OFL_REGISTER_LOWERING(mul, [](LowerCtx& c, const TracedOp& o) {
  return LowerBinary(c, o, HloOpcode::kMultiply);
});
OFL_REGISTER_LOWERING(div, [](LowerCtx& c, const TracedOp& o) {
  return LowerBinary(c, o, HloOpcode::kDivide);
});
OFL_REGISTER_LOWERING(add_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerScalar(c, o, HloOpcode::kAdd, false);
});
OFL_REGISTER_LOWERING(mul_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerScalar(c, o, HloOpcode::kMultiply, false);
});
OFL_REGISTER_LOWERING(rsub_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerScalar(c, o, HloOpcode::kSubtract, true);
});
OFL_REGISTER_LOWERING(rdiv_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerScalar(c, o, HloOpcode::kDivide, true);
});
OFL_REGISTER_LOWERING(neg, [](LowerCtx& c, const TracedOp& o) {
  return LowerUnary(c, o, HloOpcode::kNegate);
});
OFL_REGISTER_LOWERING(exp, [](LowerCtx& c, const TracedOp& o) {
  return LowerUnary(c, o, HloOpcode::kExp);
});
OFL_REGISTER_LOWERING(relu, LowerRelu);
OFL_REGISTER_LOWERING(relu_grad, LowerReluGrad);
OFL_REGISTER_LOWERING(cast, LowerCast);
OFL_REGISTER_LOWERING(copy_, LowerCast);
OFL_REGISTER_LOWERING(contiguous, LowerIdentity);

}  // namespace lazy
}  // namespace oneflow_like
