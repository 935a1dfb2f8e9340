// Lowerings of the unary elementwise family (oneflow_like/ops/unary.cc) and its backward ops to
// HLO elementwise ops, so they fuse. Each reproduces its kernel in kernels/cpu/unary.cc: same
// operation order in the op's dtype. Floating dtypes only; other dtypes (and ops whose kernel
// has no exact HLO spelling, e.g. expm1) keep the kernel call.
#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double k2OverSqrtPi = 1.12837916709551257390;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

using E = ExprBuilder;

bool IsFloat(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}

// fn(e, inputs...) -> result; falls back to the kernel call for non-float dtypes.
template <typename Fn>
Status Lower(LowerCtx& ctx, const TracedOp& op, Fn fn) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (!IsFloat(ctx.in_meta(op, i).dtype) || ctx.in_meta(op, i).dtype != m.dtype)
      return ctx.LowerAsKernelCall(op);
  if (!IsFloat(m.dtype)) return ctx.LowerAsKernelCall(op);
  E e{ctx, m, Status()};
  std::vector<HloInstruction*> in;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    ASSIGN_OR_RETURN(auto* x, BroadcastTo(ctx, ctx.in(op, i), ctx.in_meta(op, i).shape, m.shape));
    in.push_back(x);
  }
  HloInstruction* r = fn(e, op.attrs, in);
  RETURN_IF_ERROR(e.status);
  if (!r) return Internal("[lower %s] no result", op.op->name);
  ctx.set(op, 0, r);
  return Status();
}

using Ins = std::vector<HloInstruction*>;
#define OFL_LOWER_UNARY(name, ...)                                                             \
  OFL_REGISTER_LOWERING(name, [](LowerCtx& c, const TracedOp& o) {                             \
    return Lower(c, o, [](E& e, const AttrMap& a, const Ins& in) -> HloInstruction* {          \
      (void)a;                                                                                 \
      HloInstruction* x = in[0];                                                               \
      HloInstruction* s = in.size() > 1 ? in[1] : nullptr; /* backward ops: (dy=x, saved=s) */ \
      (void)s;                                                                                 \
      __VA_ARGS__                                                                              \
    });                                                                                        \
  })

HloInstruction* Gelu(E& e, HloInstruction* x, bool tanh_approx) {
  if (tanh_approx) {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    // kernel: T(0.044715) * x * x * x  ==  ((0.044715 * x) * x) * x
    auto* x3 = e.Mul(e.Mul(e.Mul(e.C(0.044715), x), x), x);
    auto* t = e.U(HloOpcode::kTanh, e.Mul(e.C(kSqrt2OverPi), e.Add(x, x3)));
    return e.Mul(e.Mul(e.C(0.5), x), e.Add(e.C(1), t));
  }
  auto* erf = e.U(HloOpcode::kErf, e.Mul(x, e.C(kSqrt1_2)));
  return e.Mul(e.Mul(e.C(0.5), x), e.Add(e.C(1), erf));
}

HloInstruction* GeluGrad(E& e, HloInstruction* dy, HloInstruction* x, bool tanh_approx) {
  if (tanh_approx) {
    auto* x2 = e.Mul(x, x);
    auto* t = e.U(HloOpcode::kTanh,
                  e.Mul(e.C(kSqrt2OverPi), e.Add(x, e.Mul(e.Mul(e.C(0.044715), x2), x))));
    auto* dinner = e.Mul(e.C(kSqrt2OverPi), e.Add(e.C(1), e.Mul(e.C(3 * 0.044715), x2)));
    auto* a = e.Mul(e.C(0.5), e.Add(e.C(1), t));
    auto* b = e.Mul(e.Mul(e.Mul(e.C(0.5), x), e.Sub(e.C(1), e.Mul(t, t))), dinner);
    return e.Mul(dy, e.Add(a, b));
  }
  auto* cdf = e.Mul(e.C(0.5), e.Add(e.C(1), e.U(HloOpcode::kErf, e.Mul(x, e.C(kSqrt1_2)))));
  auto* pdf =
      e.Mul(e.Mul(x, e.C(kInvSqrt2Pi)), e.U(HloOpcode::kExp, e.Mul(e.Mul(e.C(-0.5), x), x)));
  return e.Mul(dy, e.Add(cdf, pdf));
}

}  // namespace

// ---- forward ----------------------------------------------------------------------------------
OFL_LOWER_UNARY(log, return e.U(HloOpcode::kLog, x););
OFL_LOWER_UNARY(log1p, return e.U(HloOpcode::kLog1p, x););
OFL_LOWER_UNARY(sqrt, return e.U(HloOpcode::kSqrt, x););
OFL_LOWER_UNARY(rsqrt, return e.Div(e.C(1), e.U(HloOpcode::kSqrt, x)););  // kernel: 1 / sqrt(x)
OFL_LOWER_UNARY(sin, return e.U(HloOpcode::kSin, x););
OFL_LOWER_UNARY(cos, return e.U(HloOpcode::kCos, x););
OFL_LOWER_UNARY(tanh, return e.U(HloOpcode::kTanh, x););
OFL_LOWER_UNARY(sigmoid, return e.Sigmoid(x););
OFL_LOWER_UNARY(erf, return e.U(HloOpcode::kErf, x););
OFL_LOWER_UNARY(abs, return e.Sel(e.Cmp(x, e.C(0), ComparisonDirection::kLt),
                                  e.U(HloOpcode::kNegate, x), x););
OFL_LOWER_UNARY(square, return e.Mul(x, x););
OFL_LOWER_UNARY(reciprocal, return e.Div(e.C(1), x););
OFL_LOWER_UNARY(floor, return e.U(HloOpcode::kFloor, x););
OFL_LOWER_UNARY(ceil, return e.U(HloOpcode::kCeil, x););
OFL_LOWER_UNARY(round, return e.U(HloOpcode::kRoundNearestEven, x););
// (0 < x) - (x < 0): NaN gives 0, as in the kernel.
OFL_LOWER_UNARY(sign, {
  auto* pos = e.Sel(e.Cmp(e.C(0), x, ComparisonDirection::kLt), e.C(1), e.C(0));
  auto* neg = e.Sel(e.Cmp(x, e.C(0), ComparisonDirection::kLt), e.C(1), e.C(0));
  return e.Sub(pos, neg);
});
OFL_LOWER_UNARY(silu, return e.Mul(x, e.Sigmoid(x)););
OFL_LOWER_UNARY(gelu, return Gelu(e, x, a.Bool("approximate")););
OFL_LOWER_UNARY(leaky_relu, {
  return e.Sel(e.Cmp(x, e.C(0), ComparisonDirection::kGt), x,
               e.Mul(x, e.C(a.Float("negative_slope", 0.01))));
});
OFL_LOWER_UNARY(softplus, {
  double beta = a.Float("beta", 1.0), threshold = a.Float("threshold", 20.0);
  auto* xb = e.Mul(x, e.C(beta));
  auto* soft = e.Div(e.U(HloOpcode::kLog1p, e.U(HloOpcode::kExp, xb)), e.C(beta));
  return e.Sel(e.Cmp(xb, e.C(threshold), ComparisonDirection::kGt), x, soft);
});
// v = x < lo ? lo : x; v > hi ? hi : v (NaN propagates).
OFL_LOWER_UNARY(clamp, {
  auto *lo = e.C(a.Float("min")), *hi = e.C(a.Float("max"));
  auto* v = e.Sel(e.Cmp(x, lo, ComparisonDirection::kLt), lo, x);
  return e.Sel(e.Cmp(v, hi, ComparisonDirection::kGt), hi, v);
});
OFL_LOWER_UNARY(pow_scalar, {
  double p = a.Float("exponent");
  if (p == 1) return x;
  if (p == 2) return e.Mul(x, x);
  if (p == 3) return e.Mul(e.Mul(x, x), x);
  if (p == 0) return e.C(1);
  if (p == 0.5) return e.U(HloOpcode::kSqrt, x);
  if (p == -1) return e.Div(e.C(1), x);
  return e.B(HloOpcode::kPower, x, e.C(p));
});
OFL_LOWER_UNARY(rpow_scalar, return e.B(HloOpcode::kPower, e.C(a.Float("scalar")), x););

// ---- backward ops (dy, saved) -------------------------------------------------------------------
OFL_LOWER_UNARY(sigmoid_grad, return e.Mul(e.Mul(x, s), e.Sub(e.C(1), s)););
OFL_LOWER_UNARY(tanh_grad, return e.Mul(x, e.Sub(e.C(1), e.Mul(s, s))););
OFL_LOWER_UNARY(rsqrt_grad, return e.Mul(e.Mul(e.Mul(e.Mul(e.C(-0.5), x), s), s), s););
OFL_LOWER_UNARY(reciprocal_grad, return e.Mul(e.Mul(e.U(HloOpcode::kNegate, x), s), s););
OFL_LOWER_UNARY(erf_grad, {
  return e.Mul(e.Mul(x, e.C(k2OverSqrtPi)),
               e.U(HloOpcode::kExp, e.Mul(e.U(HloOpcode::kNegate, s), s)));
});
OFL_LOWER_UNARY(silu_grad, {
  auto* sg = e.Sigmoid(s);
  return e.Mul(e.Mul(x, sg), e.Add(e.C(1), e.Mul(s, e.Sub(e.C(1), sg))));
});
OFL_LOWER_UNARY(elu_grad, {
  return e.Sel(e.Cmp(s, e.C(0), ComparisonDirection::kGt), x,
               e.Mul(x, e.Add(s, e.C(a.Float("alpha", 1.0)))));
});
OFL_LOWER_UNARY(leaky_relu_grad, {
  return e.Sel(e.Cmp(s, e.C(0), ComparisonDirection::kGt), x,
               e.Mul(x, e.C(a.Float("negative_slope", 0.01))));
});
OFL_LOWER_UNARY(softplus_grad, {
  double beta = a.Float("beta", 1.0), threshold = a.Float("threshold", 20.0);
  auto* sb = e.Mul(s, e.C(beta));
  return e.Sel(e.Cmp(sb, e.C(threshold), ComparisonDirection::kGt), x, e.Mul(x, e.Sigmoid(sb)));
});
OFL_LOWER_UNARY(gelu_grad, return GeluGrad(e, x, s, a.Bool("approximate")););
OFL_LOWER_UNARY(clamp_grad, {
  auto* ge = e.Cmp(s, e.C(a.Float("min")), ComparisonDirection::kGe);
  auto* le = e.Cmp(s, e.C(a.Float("max")), ComparisonDirection::kLe);
  auto* in_range = e.B(HloOpcode::kAnd, ge, le);
  return e.Sel(in_range, x, e.C(0));
});
OFL_LOWER_UNARY(pow_scalar_grad, {
  double p = a.Float("exponent");
  if (p == 0) return e.C(0);
  if (p == 1) return x;
  if (p == 2) return e.Mul(e.Mul(e.C(2), s), x);
  return e.Mul(e.Mul(x, e.C(p)), e.B(HloOpcode::kPower, s, e.C(p - 1)));
});

}  // namespace lazy
}  // namespace oneflow_like
