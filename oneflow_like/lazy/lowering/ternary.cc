// Lowerings of the ternary family's arithmetic (kernels/cpu/ternary.cc): addcmul, addcdiv (the
// Adam/AdamW/RMSprop moment updates), lerp and lerp_scalar, as fusible elementwise HLO with the
// kernels' operation order in the op's dtype. where/where_scalar_* are in binary.cc.
#include <cmath>

#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::ComparisonDirection;
using hlo::HloInstruction;

bool IsIntegral32Or64(DType t) {
  return t == DType::kI32 || t == DType::kI64;
}

// The operands share the output's dtype (the schema checks it); f16/bf16 have no codegen.
bool AllInputsAre(LowerCtx& ctx, const TracedOp& op, DType t) {
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (ctx.in_meta(op, static_cast<int>(i)).dtype != t) return false;
  return true;
}

// addcmul: t + v * a * b == t + ((v * a) * b); addcdiv: t + ((v * a) / b), v =
// static_cast<T>(value).
template <bool kDiv>
Status LowerAddc(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  // Integer addcmul: i32/i64 wrap like HLO; u8/i8 are promoted to int in the kernel (kept as
  // calls).
  const bool ok = IsF32OrF64(m.dtype) || (!kDiv && IsIntegral32Or64(m.dtype));
  if (!ok || !AllInputsAre(ctx, op, m.dtype)) return ctx.LowerAsKernelCall(op);
  double v = op.attrs.Float("value", 1.0);
  if (!IsF32OrF64(m.dtype)) v = std::trunc(v);  // static_cast<T>(value)
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  ExprBuilder e{ctx, m, Status()};
  HloInstruction* va = e.Mul(e.C(v), in[1]);
  HloInstruction* r = e.Add(in[0], kDiv ? e.Div(va, in[2]) : e.Mul(va, in[2]));
  return e.Set(op, r);
}

// LerpValue(s, e, w) = w < 0.5 ? s + w * (e - s) : e - (e - s) * (1 - w) (lerp(a, b, 1) == b).
HloInstruction* LerpLow(ExprBuilder& e, HloInstruction* s, HloInstruction* end, HloInstruction* w) {
  return e.Add(s, e.Mul(w, e.Sub(end, s)));
}
HloInstruction* LerpHigh(ExprBuilder& e, HloInstruction* s, HloInstruction* end,
                         HloInstruction* w) {
  return e.Sub(end, e.Mul(e.Sub(end, s), e.Sub(e.C(1), w)));
}

Status LowerLerp(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IsF32OrF64(m.dtype) || !AllInputsAre(ctx, op, m.dtype)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  ExprBuilder e{ctx, m, Status()};
  HloInstruction* w = in[2];
  return e.Set(op, e.Sel(e.Cmp(w, e.C(0.5), ComparisonDirection::kLt), LerpLow(e, in[0], in[1], w),
                         LerpHigh(e, in[0], in[1], w)));
}

Status LowerLerpScalar(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IsF32OrF64(m.dtype) || !AllInputsAre(ctx, op, m.dtype)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  ExprBuilder e{ctx, m, Status()};
  // The branch is known here: the weight rounded to the dtype, compared with 0.5 (NaN -> high).
  const double w = op.attrs.Float("weight");
  const bool low = m.dtype == DType::kF32 ? static_cast<float>(w) < 0.5f : w < 0.5;
  return e.Set(op, low ? LerpLow(e, in[0], in[1], e.C(w)) : LerpHigh(e, in[0], in[1], e.C(w)));
}

}  // namespace

OFL_REGISTER_LOWERING(addcmul, LowerAddc<false>);
OFL_REGISTER_LOWERING(addcdiv, LowerAddc<true>);
OFL_REGISTER_LOWERING(lerp, LowerLerp);
OFL_REGISTER_LOWERING(lerp_scalar, LowerLerpScalar);

}  // namespace lazy
}  // namespace oneflow_like
