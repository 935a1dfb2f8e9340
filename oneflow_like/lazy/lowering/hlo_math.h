// HloMath: the op tables' math policy (oneflow_like/opdefs/math.h) over HLO instructions. A
// table formula instantiated with it builds the very expression tree the kernels evaluate (same
// operation order, in the op's dtype), so compiled graphs match eager bit for bit. Constants are
// splats of the output's dtype; each table's lower column says which dtypes a formula may take.
#pragma once
#include <cmath>

#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace lazy {
namespace hlo_math {
using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;

// A value of the formula: an instruction of the output's shape (a pred for comparisons).
struct HV {
  ExprBuilder* e;
  HloInstruction* h;
};
#define OFL_HV_BINARY(op, code)                      \
  inline HV operator op(HV a, HV b) {                \
    return {a.e, a.e->B(HloOpcode::code, a.h, b.h)}; \
  }
OFL_HV_BINARY(+, kAdd)
OFL_HV_BINARY(-, kSubtract)
OFL_HV_BINARY(*, kMultiply)
OFL_HV_BINARY(/, kDivide)
#undef OFL_HV_BINARY
#define OFL_HV_COMPARE(op, dir)                                 \
  inline HV operator op(HV a, HV b) {                           \
    return {a.e, a.e->Cmp(a.h, b.h, ComparisonDirection::dir)}; \
  }
OFL_HV_COMPARE(<, kLt)
OFL_HV_COMPARE(>, kGt)
OFL_HV_COMPARE(<=, kLe)
OFL_HV_COMPARE(>=, kGe)
OFL_HV_COMPARE(==, kEq)
OFL_HV_COMPARE(!=, kNe)
#undef OFL_HV_COMPARE
inline HV operator-(HV a) {
  return {a.e, a.e->U(HloOpcode::kNegate, a.h)};
}

// The math policy over HV (see oneflow_like/opdefs/math.h for the scalar one).
struct HloMath {
  static constexpr bool kFloat = true;
  ExprBuilder* e;
  bool* unsupported;  // set when the formula needs a function HLO has no exact spelling for
  HV c(double v) const { return {e, e->C(v)}; }
  // A Python number in the output's dtype (integers truncate, as ScalarMath::scalar).
  HV scalar(double v) const { return c(IsFloating(e->m.dtype) ? v : std::trunc(v)); }
  HV select(HV p, HV a, HV b) const { return {e, e->Sel(p.h, a.h, b.h)}; }
  HV and_(HV a, HV b) const { return {e, e->B(HloOpcode::kAnd, a.h, b.h)}; }
  HV or_(HV a, HV b) const { return {e, e->B(HloOpcode::kOr, a.h, b.h)}; }
  HV pow(HV a, HV b) const { return {e, e->B(HloOpcode::kPower, a.h, b.h)}; }
  HV sigmoid(HV x) const { return U(HloOpcode::kLogistic, x); }  // 1 / (1 + exp(-x))
  HV exp(HV x) const { return U(HloOpcode::kExp, x); }
  HV log(HV x) const { return U(HloOpcode::kLog, x); }
  HV log1p(HV x) const { return U(HloOpcode::kLog1p, x); }
  HV sqrt(HV x) const { return U(HloOpcode::kSqrt, x); }
  HV sin(HV x) const { return U(HloOpcode::kSin, x); }
  HV cos(HV x) const { return U(HloOpcode::kCos, x); }
  HV tanh(HV x) const { return U(HloOpcode::kTanh, x); }
  HV erf(HV x) const { return U(HloOpcode::kErf, x); }
  HV floor(HV x) const { return U(HloOpcode::kFloor, x); }
  HV ceil(HV x) const { return U(HloOpcode::kCeil, x); }
  HV rint(HV x) const { return U(HloOpcode::kRoundNearestEven, x); }
  // Functions HLO has no exact spelling for: the op becomes a kernel call.
  HV no_hlo(HV x) const {
    *unsupported = true;
    return x;
  }
  HV expm1(HV x) const { return no_hlo(x); }
  HV erfc(HV x) const { return no_hlo(x); }
  HV tan(HV x) const { return no_hlo(x); }
  HV asin(HV x) const { return no_hlo(x); }
  HV acos(HV x) const { return no_hlo(x); }
  HV atan(HV x) const { return no_hlo(x); }
  HV sinh(HV x) const { return no_hlo(x); }
  HV cosh(HV x) const { return no_hlo(x); }
  HV asinh(HV x) const { return no_hlo(x); }
  HV acosh(HV x) const { return no_hlo(x); }
  HV atanh(HV x) const { return no_hlo(x); }
  HV exp2(HV x) const { return no_hlo(x); }
  HV log2(HV x) const { return no_hlo(x); }
  HV log10(HV x) const { return no_hlo(x); }
  HV lgamma(HV x) const { return no_hlo(x); }
  HV digamma(HV x) const { return no_hlo(x); }
  HV trigamma(HV x) const { return no_hlo(x); }
  HV erfinv(HV x) const { return no_hlo(x); }
  // torch.special's Bessel family and normal tails (opdefs/special_math.h): kernel calls.
  HV i0(HV x) const { return no_hlo(x); }
  HV i1(HV x) const { return no_hlo(x); }
  HV i0e(HV x) const { return no_hlo(x); }
  HV i1e(HV x) const { return no_hlo(x); }
  HV k0(HV x) const { return no_hlo(x); }
  HV k1(HV x) const { return no_hlo(x); }
  HV k0e(HV x) const { return no_hlo(x); }
  HV k1e(HV x) const { return no_hlo(x); }
  HV j0(HV x) const { return no_hlo(x); }
  HV j1(HV x) const { return no_hlo(x); }
  HV y0(HV x) const { return no_hlo(x); }
  HV y1(HV x) const { return no_hlo(x); }
  HV sph_j0(HV x) const { return no_hlo(x); }
  HV airy_ai(HV x) const { return no_hlo(x); }
  HV erfcx(HV x) const { return no_hlo(x); }
  HV ndtri(HV x) const { return no_hlo(x); }
  HV log_ndtr(HV x) const { return no_hlo(x); }
  HV polygamma(HV x, int64_t) const { return no_hlo(x); }
  HV zeta(HV x, HV) const { return no_hlo(x); }
  HV igamma(HV a, HV) const { return no_hlo(a); }
  HV igammac(HV a, HV) const { return no_hlo(a); }
  HV orthopoly(int, HV x, HV) const { return no_hlo(x); }
  HV is_nan(HV x) const { return x != x; }
  HV U(HloOpcode op, HV x) const { return {e, e->U(op, x.h)}; }
};

inline bool AllFloat(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IsF32OrF64(m.dtype)) return false;
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (ctx.in_meta(op, static_cast<int>(i)).dtype != m.dtype) return false;
  return true;
}

// Builds a table op `Fn`'s formula (kInputs 1: f(x); 2: f(x, y), the binary table's and the
// unary table's backward ops) over the op's (broadcast) inputs; kernel call where it can't.
template <typename Fn, int kInputs>
Status LowerTable(LowerCtx& ctx, const TracedOp& op) {
  if (!AllFloat(ctx, op)) return ctx.LowerAsKernelCall(op);
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> in, BroadcastInputs(ctx, op, m.shape));
  ExprBuilder e{ctx, m, Status()};
  bool unsupported = false;
  HloMath math{&e, &unsupported};
  const auto a = opdefs::ReadAttrs<typename Fn::Attrs>(op.attrs);
  HV r;
  if constexpr (kInputs == 1)
    r = Fn{}(math, HV{&e, in[0]}, a);
  else
    r = Fn{}(math, HV{&e, in[0]}, HV{&e, in[1]}, a);
  if (unsupported) return ctx.LowerAsKernelCall(op);
  return e.Set(op, r.h);
}

}  // namespace hlo_math
}  // namespace lazy
}  // namespace oneflow_like
