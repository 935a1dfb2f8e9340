// Lowerings of the binary family (oneflow_like/opdefs/binary.def): the table's ops of lower column
// L are built from their formula through HloMath (registered at the end); the hand-written ones
// (lower column H: sub, maximum/minimum, pow, comparisons -> compare with a pred result, logical
// ops, float floor_divide/remainder/fmod, bitwise ops; add, mul, div and the arithmetic scalar ops
// are in elementwise.cc) each reproduce their kernel in kernels/cpu/binary.cc; operands are
// broadcast NumPy-style to the output shape. (maximum/minimum's gradient minmax_grad and where are
// the ternary table's: ternary.cc.)
#include "oneflow_like/lazy/lowering/hlo_math.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsFloat(DType t) {
  return IsF32OrF64(t);
}
bool IntOrBool(DType t) {  // bitwise ops
  return t == DType::kBool || t == DType::kU8 || t == DType::kI8 || t == DType::kI32 ||
         t == DType::kI64;
}
bool Numeric(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kI32 || t == DType::kI64;
}

bool SameDtypes(LowerCtx& ctx, const TracedOp& op, size_t first, bool (*ok)(DType)) {
  DType t = ctx.in_meta(op, first).dtype;
  if (!ok(t)) return false;
  for (size_t i = first; i < op.inputs.size(); ++i)
    if (ctx.in_meta(op, i).dtype != t) return false;
  return true;
}

Status LowerSub(LowerCtx& ctx, const TracedOp& op) {  // alpha == 1 ? x - y : x - alpha * y
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!SameDtypes(ctx, op, 0, Numeric) || ctx.in_meta(op, 0).dtype != m.dtype)
    return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  double alpha = op.attrs.Float("alpha", 1.0);
  HloInstruction* y = in[1];
  if (alpha != 1.0) {
    ASSIGN_OR_RETURN(auto* s, Splat(ctx, m.dtype, alpha, m.shape));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(HloOpcode::kMultiply, s, y));
  }
  ASSIGN_OR_RETURN(auto* r, ctx.b().Binary(HloOpcode::kSubtract, in[0], y));
  ctx.set(op, 0, r);
  return Status();
}

// maximum/minimum: HLO's are NaN-propagating with the kernel's tie rule (ofl_max/ofl_min).
// pow: std::pow on floats. bitwise_and/or/xor: x & y, x | y, x ^ y on bool and integers.
Status LowerSameType(LowerCtx& ctx, const TracedOp& op, HloOpcode code, bool (*ok)(DType)) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!SameDtypes(ctx, op, 0, ok) || ctx.in_meta(op, 0).dtype != m.dtype)
    return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Binary(code, in[0], in[1]));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerCompare(LowerCtx& ctx, const TracedOp& op, ComparisonDirection d) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!SameDtypes(ctx, op, 0, Numeric)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Compare(in[0], in[1], d));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerCompareScalar(LowerCtx& ctx, const TracedOp& op, ComparisonDirection d) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  DType t = ctx.in_meta(op, 0).dtype;
  if (!Numeric(t)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto* s,
                   Splat(ctx, t, op.attrs.Float("scalar"), m.shape));  // the scalar in x's dtype
  ASSIGN_OR_RETURN(auto* r, ctx.b().Compare(ctx.in(op, 0), s, d));
  ctx.set(op, 0, r);
  return Status();
}

bool IsBool(DType t) {
  return t == DType::kBool;
}

Status LowerLogical(LowerCtx& ctx, const TracedOp& op, int kind) {  // 0 and, 1 or, 2 xor
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!SameDtypes(ctx, op, 0, IsBool)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  HloInstruction* r;
  if (kind == 0) {
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kAnd, in[0], in[1]));
  } else if (kind == 1) {
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kOr, in[0], in[1]));
  } else {
    ASSIGN_OR_RETURN(r, ctx.b().Compare(in[0], in[1], ComparisonDirection::kNe));
  }
  ctx.set(op, 0, r);
  return Status();
}

// floor_divide / remainder / fmod on floats (kernels/cpu/binary.cc FloatDivOp): floor(x / y);
// r = fmod(x, y) with Python's sign fix (r != 0 and sign(r) != sign(y) -> r + y); C's fmod.
// Integer dtypes keep the kernel call: a zero divisor raises ZeroDivisionError there.
enum class DivKind { kFloorDiv, kRemainder, kFmod };
Status LowerDivision(LowerCtx& ctx, const TracedOp& op, DivKind kind) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!SameDtypes(ctx, op, 0, IsFloat) || ctx.in_meta(op, 0).dtype != m.dtype)
    return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  ExprBuilder e{ctx, m, Status()};
  if (kind == DivKind::kFloorDiv) return e.Set(op, e.U(HloOpcode::kFloor, e.Div(in[0], in[1])));
  HloInstruction* r = e.B(HloOpcode::kRemainder, in[0], in[1]);
  if (kind == DivKind::kRemainder) {
    HloInstruction* zero = e.C(0);
    HloInstruction* signs_differ =
        e.Cmp(e.Cmp(r, zero, ComparisonDirection::kLt),
              e.Cmp(in[1], zero, ComparisonDirection::kLt), ComparisonDirection::kNe);
    HloInstruction* fix =
        e.B(HloOpcode::kAnd, e.Cmp(r, zero, ComparisonDirection::kNe), signs_differ);
    r = e.Sel(fix, e.Add(r, in[1]), r);
  }
  return e.Set(op, r);
}

// bitwise_not: !x on bool, ~x on integers.
Status LowerBitwiseNot(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!IntOrBool(m.dtype) || ctx.in_meta(op, 0).dtype != m.dtype) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto* r, ctx.b().Unary(HloOpcode::kNot, ctx.in(op, 0)));
  ctx.set(op, 0, r);
  return Status();
}

// logical_not: x == 0 (NaN -> false), as bool or cast to the output's dtype.
Status LowerLogicalNot(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  const DType t = ctx.in_meta(op, 0).dtype;
  if (!(IntOrBool(t) || IsFloat(t)) || !(IntOrBool(m.dtype) || IsFloat(m.dtype)))
    return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto* zero, Splat(ctx, t, 0.0, m.shape));
  ASSIGN_OR_RETURN(HloInstruction * r,
                   ctx.b().Compare(ctx.in(op, 0), zero, ComparisonDirection::kEq));
  if (m.dtype != DType::kBool) {
    ASSIGN_OR_RETURN(r, ctx.b().Convert(r, m.dtype));
  }
  ctx.set(op, 0, r);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(sub, LowerSub);
OFL_REGISTER_LOWERING(maximum, [](LowerCtx& c, const TracedOp& o) {
  return LowerSameType(c, o, HloOpcode::kMaximum, Numeric);
});
OFL_REGISTER_LOWERING(minimum, [](LowerCtx& c, const TracedOp& o) {
  return LowerSameType(c, o, HloOpcode::kMinimum, Numeric);
});
OFL_REGISTER_LOWERING(pow, [](LowerCtx& c, const TracedOp& o) {
  return LowerSameType(c, o, HloOpcode::kPower, IsFloat);
});
OFL_REGISTER_LOWERING(eq, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompare(c, o, ComparisonDirection::kEq);
});
OFL_REGISTER_LOWERING(ne, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompare(c, o, ComparisonDirection::kNe);
});
OFL_REGISTER_LOWERING(lt, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompare(c, o, ComparisonDirection::kLt);
});
OFL_REGISTER_LOWERING(le, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompare(c, o, ComparisonDirection::kLe);
});
OFL_REGISTER_LOWERING(gt, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompare(c, o, ComparisonDirection::kGt);
});
OFL_REGISTER_LOWERING(ge, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompare(c, o, ComparisonDirection::kGe);
});
OFL_REGISTER_LOWERING(eq_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompareScalar(c, o, ComparisonDirection::kEq);
});
OFL_REGISTER_LOWERING(ne_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompareScalar(c, o, ComparisonDirection::kNe);
});
OFL_REGISTER_LOWERING(lt_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompareScalar(c, o, ComparisonDirection::kLt);
});
OFL_REGISTER_LOWERING(le_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompareScalar(c, o, ComparisonDirection::kLe);
});
OFL_REGISTER_LOWERING(gt_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompareScalar(c, o, ComparisonDirection::kGt);
});
OFL_REGISTER_LOWERING(ge_scalar, [](LowerCtx& c, const TracedOp& o) {
  return LowerCompareScalar(c, o, ComparisonDirection::kGe);
});
OFL_REGISTER_LOWERING(logical_and,
                      [](LowerCtx& c, const TracedOp& o) { return LowerLogical(c, o, 0); });
OFL_REGISTER_LOWERING(logical_or,
                      [](LowerCtx& c, const TracedOp& o) { return LowerLogical(c, o, 1); });
OFL_REGISTER_LOWERING(logical_xor,
                      [](LowerCtx& c, const TracedOp& o) { return LowerLogical(c, o, 2); });
OFL_REGISTER_LOWERING(floor_divide, [](LowerCtx& c, const TracedOp& o) {
  return LowerDivision(c, o, DivKind::kFloorDiv);
});
OFL_REGISTER_LOWERING(remainder, [](LowerCtx& c, const TracedOp& o) {
  return LowerDivision(c, o, DivKind::kRemainder);
});
OFL_REGISTER_LOWERING(fmod, [](LowerCtx& c, const TracedOp& o) {
  return LowerDivision(c, o, DivKind::kFmod);
});
OFL_REGISTER_LOWERING(bitwise_and, [](LowerCtx& c, const TracedOp& o) {
  return LowerSameType(c, o, HloOpcode::kAnd, IntOrBool);
});
OFL_REGISTER_LOWERING(bitwise_or, [](LowerCtx& c, const TracedOp& o) {
  return LowerSameType(c, o, HloOpcode::kOr, IntOrBool);
});
OFL_REGISTER_LOWERING(bitwise_xor, [](LowerCtx& c, const TracedOp& o) {
  return LowerSameType(c, o, HloOpcode::kXor, IntOrBool);
});
OFL_REGISTER_LOWERING(bitwise_not, LowerBitwiseNot);
OFL_REGISTER_LOWERING(logical_not, LowerLogicalNot);

namespace binary_table {  // (registrations named by .def line numbers)
// clang-format off
// Lower column L: the formula over the two broadcast inputs (floating dtypes; kernel call else).
// Scalar variants have no L: their lowerings are hand-written (H) or kernel calls (K).
#define OFL_LOWER_L(name, Name) \
  OFL_REGISTER_LOWERING(name, (hlo_math::LowerTable<opdefs::Name##Fn, 2>));
#define OFL_LOWER_H(name, Name)
#define OFL_LOWER_K(name, Name)
#define OFL_SCALAR_LOWER_H(name, Name)
#define OFL_SCALAR_LOWER_K(name, Name)
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, lower, ...) \
  OFL_LOWER_##lower(name, Name)
#define OFL_BINARY_SCALAR(name, Name, types, out, Base, order, grad, lower) \
  OFL_SCALAR_LOWER_##lower(name, Name)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
#undef OFL_LOWER_L
#undef OFL_LOWER_H
#undef OFL_LOWER_K
#undef OFL_SCALAR_LOWER_H
#undef OFL_SCALAR_LOWER_K
// clang-format on
}  // namespace binary_table

}  // namespace lazy
}  // namespace oneflow_like
