// Unary elementwise family: schemas, gradient hookup and functional entries, generated from
// oneflow_like/opdefs/unary.def (this file holds the composite gradient formulas and the entries
// with extra checks). Kernels (kernels/cpu/unary.cc) see one dtype in and out (bool out for
// logical_not) and any input strides. Backward ops <name>_grad(dy, saved) are linear in dy;
// double backward (create_graph=True) differentiates formulas written with differentiable ops
// (the Deriv list below) instead.
#include "oneflow_like/ops/unary.h"

#include <cmath>
#include <limits>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/ternary.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace {
namespace F = functional;

// Every unary kernel reads any input strides.
OpSpec Unary(const char* name, InferFn infer = ops::InferSameAsInput) {
  return OpSpec(name, infer).StridedInputs().SaveInputs(false).SaveOutputs(false);
}

// The backward ops <name>_grad(dy, saved) read their inputs element by element: one shape (a
// direct dispatch with others, as flow.func.vmap's replay could make, fails naming the op instead
// of reading past the smaller one).
template <const OpDef& Self>
Status InferUnaryGrad(TensorSpan in, const AttrMap& attrs, std::vector<TensorMeta>* out) {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].shape() != in[0].shape())
      return InvalidArgument(
          "[%s] expected the gradient and the saved tensor of one shape, got %s "
          "and %s",
          Self.name, in[0].meta_string(), in[i].meta_string());
  return ops::InferSameAsInput(in, attrs, out);
}

Status InferBool(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), DType::kBool, in[0].device()});
  return Status();
}

// ---- double backward ------------------------------------------------------------------------
// A backward op bw(dy, s) computes dy * f'(s) in one fused kernel (s: the forward's saved input or
// output). Backward with create_graph=True must differentiate that result again, so there the
// forward op's gradient builds dy * f'(s) from differentiable ops instead (Deriv below: one per
// backward op); the fused op stays on the first-order path. A Deriv is one of:
//   a formula: dy * f'(s) written with differentiable ops;
//   PiecewiseConstant: f' is constant in s where it is defined (relu, clamp, ...), so the fused
//     op is exact to any order (its gradient w.r.t. dy is itself, w.r.t. s zero);
//   nullptr: not twice differentiable here; a gradient required through the fused op fails,
//     naming it.
using DerivFn = StatusOr<Tensor> (*)(const Tensor& dy, const Tensor& s, const AttrMap& a);
StatusOr<Tensor> PiecewiseConstant(const Tensor&, const Tensor&, const AttrMap&) {
  return Internal("PiecewiseConstant is a marker, not a formula");
}

// StatusOr<Tensor> with arithmetic, so the formulas read like the table's: the first error wins.
struct E {
  StatusOr<Tensor> t;
  E(StatusOr<Tensor> v) : t(std::move(v)) {}  // NOLINT: implicit on purpose
  E(const Tensor& v) : t(v) {}                // NOLINT
};
template <typename Fn>
E Apply(const E& a, Fn f) {
  if (!a.t.ok()) return a;
  return E(f(*a.t));
}
template <typename Fn>
E Apply(const E& a, const E& b, Fn f) {
  if (!a.t.ok()) return a;
  if (!b.t.ok()) return b;
  return E(f(*a.t, *b.t));
}
E operator*(const E& a, const E& b) {
  return Apply(a, b, [](const Tensor& x, const Tensor& y) { return F::Mul(x, y); });
}
E operator/(const E& a, const E& b) {
  return Apply(a, b, [](const Tensor& x, const Tensor& y) { return F::Div(x, y); });
}
E operator+(const E& a, const E& b) {
  return Apply(a, b, [](const Tensor& x, const Tensor& y) { return F::Add(x, y); });
}
E operator-(const E& a, const E& b) {
  return Apply(a, b, [](const Tensor& x, const Tensor& y) { return F::Sub(x, y); });
}
E operator*(const E& a, double v) {
  return Apply(a, [v](const Tensor& x) { return F::MulScalar(x, v); });
}
E operator*(double v, const E& a) {
  return a * v;
}
E operator+(const E& a, double v) {
  return Apply(a, [v](const Tensor& x) { return F::AddScalar(x, v); });
}
E operator+(double v, const E& a) {
  return a + v;
}
E operator-(double v, const E& a) {
  return Apply(a, [v](const Tensor& x) { return F::RSubScalar(x, v); });
}
E operator-(const E& a) {
  return Apply(a, [](const Tensor& x) { return F::Neg(x); });
}
// cond ? a : b, the condition a comparison of s with a constant (not differentiated).
using Cmp = F::CompareOp;
E Where(Cmp op, const E& s, double v, const E& a, const E& b) {
  return Apply(s, [&](const Tensor& x) -> StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor cond, F::CompareScalar(op, x, v));
    return Apply(a, b, [&](const Tensor& p, const Tensor& q) { return F::Where(cond, p, q); }).t;
  });
}
using opdefs::k2OverSqrtPi;
using opdefs::kInvSqrt2Pi;
using opdefs::kLn10;
using opdefs::kLn2;
using opdefs::kSqrt1_2;
using opdefs::kSqrt2OverPi;
using opdefs::kSqrt2Pi;
#define OFL_FN(f) [](const Tensor& x) { return F::f(x); }
E Exp(const E& a) {
  return Apply(a, OFL_FN(Exp));
}
E Sqrt(const E& a) {
  return Apply(a, OFL_FN(Sqrt));
}
E Sigmoid(const E& a) {
  return Apply(a, OFL_FN(Sigmoid));
}
E Tanh(const E& a) {
  return Apply(a, OFL_FN(Tanh));
}
E Erf(const E& a) {
  return Apply(a, OFL_FN(Erf));
}

// One Deriv per backward op, k<Name>Deriv (Name: the backward op's, e.g. kTanhGradDeriv).
#define OFL_DERIV(Name, Attrs, ...)                                                   \
  StatusOr<Tensor> D##Name(const Tensor& dy_t, const Tensor& s_t, const AttrMap& m) { \
    [[maybe_unused]] const opdefs::Attrs a = opdefs::ReadAttrs<opdefs::Attrs>(m);     \
    [[maybe_unused]] E dy(dy_t), s(s_t);                                              \
    __VA_ARGS__                                                                       \
  }                                                                                   \
  constexpr DerivFn k##Name##Deriv = &D##Name;
#define OFL_DERIV_MARK(Name, fn) constexpr DerivFn k##Name##Deriv = fn;
OFL_DERIV_MARK(ReluGrad, &PiecewiseConstant)
OFL_DERIV_MARK(LeakyReluGrad, &PiecewiseConstant)
OFL_DERIV_MARK(ClampGrad, &PiecewiseConstant)
OFL_DERIV_MARK(FracGrad, &PiecewiseConstant)
OFL_DERIV_MARK(HardsigmoidGrad, &PiecewiseConstant)
OFL_DERIV_MARK(HardshrinkGrad, &PiecewiseConstant)
OFL_DERIV_MARK(SoftshrinkGrad, &PiecewiseConstant)
// Modified Bessel functions' derivatives (i0e, i1, i1e): special cases at 0, not implemented.
OFL_DERIV_MARK(SpecialI0eGrad, nullptr)
OFL_DERIV_MARK(SpecialI1Grad, nullptr)
OFL_DERIV_MARK(SpecialI1eGrad, nullptr)
OFL_DERIV(SigmoidGrad, NoAttrs, return (dy * s * (1.0 - s)).t;)  // s = y
OFL_DERIV(TanhGrad, NoAttrs, return (dy * (1.0 - s * s)).t;)     // s = y
OFL_DERIV(RsqrtGrad, NoAttrs, return (-0.5 * dy * s * s * s).t;)
OFL_DERIV(ReciprocalGrad, NoAttrs, return (-dy * s * s).t;)
OFL_DERIV(ErfGrad, NoAttrs, return (dy * k2OverSqrtPi * Exp(-(s * s))).t;)
OFL_DERIV(ErfcGrad, NoAttrs, return (-dy * k2OverSqrtPi * Exp(-(s * s))).t;)
OFL_DERIV(LgammaGrad, NoAttrs, return (dy * Apply(s, OFL_FN(Digamma))).t;)
OFL_DERIV(DigammaGrad, NoAttrs,
          return (dy * Apply(s, [](const Tensor& x) { return F::Polygamma(x, {1}); })).t;)
OFL_DERIV(PolygammaGrad, PolygammaAttrs,
          return (dy * Apply(s, [&](const Tensor& x) { return F::Polygamma(x, {a.n + 1}); })).t;)
OFL_DERIV(ErfinvGrad, NoAttrs, return (dy * (1 / k2OverSqrtPi) * Exp(s * s)).t;)  // s = y
OFL_DERIV(I0Grad, NoAttrs, return (dy * Apply(s, OFL_FN(SpecialI1))).t;)
OFL_DERIV(SpecialNdtriGrad, NoAttrs, return (dy * kSqrt2Pi * Exp(0.5 * s * s)).t;)  // s = y
OFL_DERIV(SpecialLogNdtrGrad, NoAttrs,
          return (dy * (1 / kSqrt2Pi) * Exp(-0.5 * s * s - Apply(s, OFL_FN(SpecialLogNdtr)))).t;)
OFL_DERIV(SpecialErfcxGrad, NoAttrs,
          return (dy * (2.0 * s * Apply(s, OFL_FN(SpecialErfcx)) + (-k2OverSqrtPi))).t;)
OFL_DERIV(SiluGrad, NoAttrs, E sg = Sigmoid(s); return (dy * sg * (1.0 + s * (1.0 - sg))).t;)
OFL_DERIV(EluGrad, EluAttrs,  // s = y: y + alpha = alpha exp(x) for x <= 0
          return Where(Cmp::kGt, s, 0, dy, dy*(s + a.alpha)).t;)
OFL_DERIV(SoftplusGrad, SoftplusAttrs, E sb = s * a.beta;
          return Where(Cmp::kGt, sb, a.threshold, dy, dy* Sigmoid(sb)).t;)
OFL_DERIV(
    GeluGrad, GeluAttrs,
    if (a.approximate) {
      E x2 = s * s;
      E t = Tanh(kSqrt2OverPi * (s + 0.044715 * x2 * s));
      E dinner = kSqrt2OverPi * (1.0 + (3 * 0.044715) * x2);
      return (dy * (0.5 * (1.0 + t) + 0.5 * s * (1.0 - t * t) * dinner)).t;
    } E cdf = 0.5 * (1.0 + Erf(s * kSqrt1_2));
    return (dy * (cdf + s * kInvSqrt2Pi * Exp(-0.5 * s * s))).t;)
OFL_DERIV(PowScalarGrad, PowScalarAttrs, const double p = a.exponent;
          if (p == 0) return (dy * 0.0).t; if (p == 1) return dy.t;
          return (dy * p * Apply(s, [p](const Tensor& x) { return F::PowScalar(x, p - 1); })).t;)
OFL_DERIV(LogitGrad, LogitAttrs,  // 0 where eps clamped x
          E g = dy / (s * (1.0 - s));
          if (a.eps < 0) return g.t; E zero = dy * 0.0;
          return Where(Cmp::kLt, s, a.eps, zero, Where(Cmp::kGt, s, 1 - a.eps, zero, g)).t;)
OFL_DERIV(TanGrad, NoAttrs, return (dy * (1.0 + s * s)).t;)  // s = y
OFL_DERIV(AsinGrad, NoAttrs, return (dy / Sqrt(1.0 - s * s)).t;)
OFL_DERIV(AcosGrad, NoAttrs, return (-dy / Sqrt(1.0 - s * s)).t;)
OFL_DERIV(AtanGrad, NoAttrs, return (dy / (1.0 + s * s)).t;)
OFL_DERIV(SinhGrad, NoAttrs, return (dy * Apply(s, OFL_FN(Cosh))).t;)
OFL_DERIV(CoshGrad, NoAttrs, return (dy * Apply(s, OFL_FN(Sinh))).t;)
OFL_DERIV(AsinhGrad, NoAttrs, return (dy / Sqrt(s * s + 1.0)).t;)
OFL_DERIV(AcoshGrad, NoAttrs, return (dy / Sqrt(s * s + (-1.0))).t;)
OFL_DERIV(AtanhGrad, NoAttrs, return (dy / (1.0 - s * s)).t;)
OFL_DERIV(Expm1Grad, NoAttrs, return (dy * (s + 1.0)).t;)  // s = y
OFL_DERIV(Exp2Grad, NoAttrs, return (dy * s * kLn2).t;)    // s = y
OFL_DERIV(Log2Grad, NoAttrs, return (dy / (s * kLn2)).t;)
OFL_DERIV(Log10Grad, NoAttrs, return (dy / (s * kLn10)).t;)
OFL_DERIV(MishGrad, NoAttrs,
          E t = Tanh(Apply(s, [](const Tensor& x) { return F::Softplus(x, {}); }));
          return (dy * (t + s * Sigmoid(s) * (1.0 - t * t))).t;)
OFL_DERIV(
    HardswishGrad, NoAttrs,
    return Where(Cmp::kLt, s, -3, dy * 0.0, Where(Cmp::kLe, s, 3, dy*(s*(1.0 / 3) + 0.5), dy)).t;)
OFL_DERIV(SoftsignGrad, NoAttrs, E d = 1.0 + Apply(s, OFL_FN(Abs)); return (dy / (d * d)).t;)
OFL_DERIV(TanhshrinkGrad, NoAttrs, E t = Tanh(s); return (dy * t * t).t;)
#undef OFL_DERIV
#undef OFL_DERIV_MARK
#undef OFL_FN

// The gradient of a backward op bw(dy, s): w.r.t. dy the op itself (it is linear in dy); w.r.t.
// s zero where f' is piecewise constant, otherwise an error (the forward's gradient uses the
// formula instead of this op whenever s requires grad, so only a direct use gets here).
template <const OpDef& Self, DerivFn D>
StatusOr<TensorList> GradOfBackwardOp(const GradContext& c) {
  if (D != &PiecewiseConstant && c.needs_input_grad[1])
    return ops::DoubleBackwardUnsupported(Self.name);
  Tensor g;
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(g, Dispatch1(Self, {c.grad_outputs[0], c.inputs[1]}, c.attrs));
  }
  return TensorList{g, Tensor()};
}

// Gradient from a backward op fed with the saved output (kOut) or input (kIn); with grad mode on
// (create_graph=True) and something to differentiate, from the op's Deriv formula.
enum Saved { kIn, kOut };
template <const OpDef& Bw, Saved S, DerivFn D>
StatusOr<TensorList> ViaBackwardOp(const GradContext& c) {
  const Tensor& s = S == kOut ? c.outputs[0] : c.inputs[0];
  const Tensor& dy = c.grad_outputs[0];
  if (D != nullptr && D != &PiecewiseConstant && ops::DifferentiableBackward({dy, s})) {
    ASSIGN_OR_RETURN(Tensor g, D(dy, s, c.attrs));
    return TensorList{g};
  }
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(Bw, {dy, s}, c.attrs));
  return TensorList{g};
}

// Composite gradients (grad column fn_*): g is the incoming gradient.
#define OFL_GRAD(Name, body)                              \
  StatusOr<TensorList> Grad##Name(const GradContext& c) { \
    const Tensor& g = c.grad_outputs[0];                  \
    [[maybe_unused]] const TensorList& in = c.inputs;     \
    [[maybe_unused]] const TensorList& out = c.outputs;   \
    Tensor r;                                             \
    body;                                                 \
    return TensorList{r};                                 \
  }
OFL_GRAD(Neg, ASSIGN_OR_RETURN(r, F::Neg(g)))
OFL_GRAD(Exp, ASSIGN_OR_RETURN(r, F::Mul(g, out[0])))
OFL_GRAD(Log, ASSIGN_OR_RETURN(r, F::Div(g, in[0])))
OFL_GRAD(Log1p, {
  ASSIGN_OR_RETURN(Tensor xp1, F::AddScalar(in[0], 1.0));
  ASSIGN_OR_RETURN(r, F::Div(g, xp1));
})
OFL_GRAD(Sqrt, {  // g / (2 y)
  ASSIGN_OR_RETURN(Tensor h, F::MulScalar(g, 0.5));
  ASSIGN_OR_RETURN(r, F::Div(h, out[0]));
})
OFL_GRAD(Sin, {
  ASSIGN_OR_RETURN(Tensor cx, F::Cos(in[0]));
  ASSIGN_OR_RETURN(r, F::Mul(g, cx));
})
OFL_GRAD(Cos, {
  ASSIGN_OR_RETURN(Tensor sx, F::Sin(in[0]));
  ASSIGN_OR_RETURN(Tensor gs, F::Mul(g, sx));
  ASSIGN_OR_RETURN(r, F::Neg(gs));
})
OFL_GRAD(Abs, {
  ASSIGN_OR_RETURN(Tensor sx, F::Sign(in[0]));
  ASSIGN_OR_RETURN(r, F::Mul(g, sx));
})
OFL_GRAD(Square, {
  ASSIGN_OR_RETURN(Tensor x2, F::MulScalar(in[0], 2.0));
  ASSIGN_OR_RETURN(r, F::Mul(g, x2));
})
OFL_GRAD(RPowScalar, {  // g * y * log(base)
  ASSIGN_OR_RETURN(Tensor gy, F::Mul(g, out[0]));
  double base = opdefs::ReadAttrs<opdefs::RPowScalarAttrs>(c.attrs).scalar;
  ASSIGN_OR_RETURN(r, F::MulScalar(gy, std::log(base)));
})
#undef OFL_GRAD

// The table's OpDefs: kName for each op, backward ops first (the forward ops' gradients name
// them). grad column -> gradient function and what it saves.
// clang-format off
#define OFL_GRAD_bw_in(Name) .Grad(&ViaBackwardOp<k##Name##Grad, kIn, k##Name##GradDeriv>).SaveInputs()
#define OFL_GRAD_bw_out(Name) .Grad(&ViaBackwardOp<k##Name##Grad, kOut, k##Name##GradDeriv>).SaveOutputs()
#define OFL_GRAD_fn_in(Name) .Grad(&Grad##Name).SaveInputs()
#define OFL_GRAD_fn_out(Name) .Grad(&Grad##Name).SaveOutputs()
#define OFL_GRAD_fn_none(Name) .Grad(&Grad##Name)
#define OFL_GRAD_none(Name)
#define OFL_ATTRS(...)
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(name, Name, ...)                                              \
  const OpDef k##Name = Unary(#name, &InferUnaryGrad<k##Name>)                       \
                            .Grad(&GradOfBackwardOp<k##Name, k##Name##Deriv>)        \
                            .SaveInputs();
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#define OFL_UNARY(name, Name, types, Attrs, grad, ...) \
  const OpDef k##Name = Unary(#name) OFL_GRAD_##grad(Name);
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
// clang-format on
const OpDef kLogicalNot = Unary("logical_not", InferBool);
const OpDef kLogicalNotInplace = Unary("logical_not");

// Integers are rejected by float-only ops; f16/bf16 compute in f32 (Dispatch casts).
StatusOr<Tensor> Run(const OpDef& op, const Tensor& x, const AttrMap& attrs = {},
                     bool float_only = false) {
  if (IsComplex(x.dtype())) return functional::ComplexUnary(op.name, x);
  if (float_only && !IsFloating(x.dtype()))
    return TypeError("[%s] expected a floating point tensor, got %s", op.name, x.meta_string());
  if (!float_only && x.dtype() == DType::kBool && &op != &kLogicalNot && &op != &kBitwiseNot)
    return TypeError("[%s] not supported for bool tensors (%s)", op.name, x.meta_string());
  return Dispatch1(op, {x}, attrs);
}
StatusOr<Tensor> RunFloat(const OpDef& op, const Tensor& x, const AttrMap& attrs = {}) {
  return Run(op, x, attrs, true);
}
// The float-only math functions (api gen / gen_ip / special) take integer and bool tensors as
// PyTorch does, computed in float32; the activations (RunFloat) and every in-place form keep
// rejecting them.
StatusOr<Tensor> RunToFloat(const OpDef& op, const Tensor& x, const AttrMap& attrs) {
  if (IsComplex(x.dtype())) return functional::ComplexUnary(op.name, x);
  if (IsFloating(x.dtype())) return Dispatch1(op, {x}, attrs);
  ASSIGN_OR_RETURN(Tensor f, functional::Cast(x, DType::kF32));
  return Dispatch1(op, {f}, attrs);
}

Status RunInplace(const OpDef& op, const Tensor& x, const AttrMap& attrs = {},
                  bool float_only = false) {
  if (IsComplex(x.dtype())) {  // in place on complex: out of place, then copied into x
    const std::string name = std::string(op.name) + "_";
    return functional::ComplexInplace(name.c_str(), x, [&](const Tensor& s) -> StatusOr<Tensor> {
      ASSIGN_OR_RETURN(Tensor r, functional::ComplexUnary(op.name, s));
      if (r.dtype() != x.dtype())  // abs_, angle_: torch refuses them for complex too
        return TypeError("[%s] in-place %s is not supported for %s tensors (%s)", name.c_str(),
                         op.name, DTypeLongName(x.dtype()), x.meta_string());
      return r;
    });
  }
  if (float_only && !IsFloating(x.dtype()))
    return TypeError("[%s_] expected a floating point tensor, got %s", op.name, x.meta_string());
  return DispatchInplace(op, {x}, attrs, x);
}

bool IsIntegralValue(double v) {
  return std::isfinite(v) && v == std::floor(v);
}

// Clamp on an integer tensor with fractional bounds computes in f32 (PyTorch's promotion).
StatusOr<AttrMap> ClampAttrs(const Tensor& x, std::optional<double> lo, std::optional<double> hi,
                             bool* to_float) {
  if (!lo && !hi)
    return InvalidArgument("[clamp] at least one of min and max must be given (input %s)",
                           x.meta_string());
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double a = lo ? *lo : -kInf, b = hi ? *hi : kInf;
  *to_float =
      !IsFloating(x.dtype()) && ((lo && !IsIntegralValue(a)) || (hi && !IsIntegralValue(b)));
  return AttrMap{{"min", a}, {"max", b}};
}

}  // namespace

namespace functional {

// Generated entries (api gen / gen_ip / fn_only / special): float-only ops compute integer
// tensors in float32; their in-place forms reject them.
// clang-format off
#define OFL_UNARY_DEFINE_gen(Name, Attrs, is_float)                                    \
  StatusOr<Tensor> Name(const Tensor& x, const opdefs::Attrs& attrs) {                 \
    if (is_float) return RunToFloat(k##Name, x, opdefs::ToAttrMap(attrs));             \
    return Run(k##Name, x, opdefs::ToAttrMap(attrs));                                  \
  }
#define OFL_UNARY_DEFINE_gen_ip(Name, Attrs, is_float)                                 \
  OFL_UNARY_DEFINE_gen(Name, Attrs, is_float)                                          \
  Status Name##_(const Tensor& x, const opdefs::Attrs& attrs) {                        \
    return RunInplace(k##Name, x, opdefs::ToAttrMap(attrs), is_float);                 \
  }
#define OFL_UNARY_DEFINE_fn_only OFL_UNARY_DEFINE_gen_ip
#define OFL_UNARY_DEFINE_custom(Name, Attrs, is_float)
#define OFL_UNARY_DEFINE_special OFL_UNARY_DEFINE_gen
#define OFL_IS_FLOAT_Float true
#define OFL_IS_FLOAT_Numeric false
#define OFL_IS_FLOAT_IntBool false
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) \
  OFL_UNARY_DEFINE_##api(Name, Attrs, OFL_IS_FLOAT_##types)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> Gelu(const Tensor& x, const opdefs::GeluAttrs& a) {
  return RunFloat(kGelu, x, opdefs::ToAttrMap(a));
}
StatusOr<Tensor> LeakyRelu(const Tensor& x, const opdefs::LeakyReluAttrs& a) {
  return RunFloat(kLeakyRelu, x, opdefs::ToAttrMap(a));
}
StatusOr<Tensor> Elu(const Tensor& x, const opdefs::EluAttrs& a) {
  return RunFloat(kElu, x, opdefs::ToAttrMap(a));
}
Status Elu_(const Tensor& x, const opdefs::EluAttrs& a) {
  return RunInplace(kElu, x, opdefs::ToAttrMap(a), true);
}
StatusOr<Tensor> Softplus(const Tensor& x, const opdefs::SoftplusAttrs& a) {
  if (a.beta == 0)
    return InvalidArgument("[softplus] beta must be non-zero (input %s)", x.meta_string());
  return RunFloat(kSoftplus, x, opdefs::ToAttrMap(a));
}
StatusOr<Tensor> Clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  bool to_float = false;
  ASSIGN_OR_RETURN(AttrMap attrs, ClampAttrs(x, lo, hi, &to_float));
  if (to_float) {
    ASSIGN_OR_RETURN(Tensor f, Cast(x, DType::kF32));
    return Run(kClamp, f, attrs);
  }
  return Run(kClamp, x, attrs);
}
StatusOr<Tensor> Hardtanh(const Tensor& x, double lo, double hi) {
  if (lo > hi) return InvalidArgument("[hardtanh] min_val %g must not exceed max_val %g", lo, hi);
  return RunFloat(kClamp, x, {{"min", lo}, {"max", hi}});
}
StatusOr<Tensor> PowScalar(const Tensor& x, double p) {
  if (IsComplex(x.dtype())) return ComplexPowScalar(x, p, 0.0);
  if (!IsFloating(x.dtype())) {
    if (!IsIntegralValue(p)) {
      ASSIGN_OR_RETURN(Tensor f, Cast(x, DType::kF32));
      return Run(kPowScalar, f, {{"exponent", p}});
    }
    if (p < 0)
      return InvalidArgument("[pow] integers to negative integer powers are not allowed (%s ** %g)",
                             x.meta_string(), p);
  }
  return Run(kPowScalar, x, {{"exponent", p}});
}
StatusOr<Tensor> RPowScalar(const Tensor& x, double base) {
  Tensor f = x;
  if (!IsFloating(x.dtype())) {
    ASSIGN_OR_RETURN(f, Cast(x, DType::kF32));
  }
  return RunFloat(kRPowScalar, f, {{"scalar", base}});
}
StatusOr<Tensor> LogicalNot(const Tensor& x) {
  return Run(kLogicalNot, x);
}
StatusOr<Tensor> BitwiseNot(const Tensor& x) {
  if (IsFloating(x.dtype()))
    return TypeError("[bitwise_not] expected a bool or integer tensor, got %s", x.meta_string());
  return Run(kBitwiseNot, x);
}
Status Clamp_(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  bool to_float = false;
  ASSIGN_OR_RETURN(AttrMap attrs, ClampAttrs(x, lo, hi, &to_float));
  if (to_float)
    return TypeError("[clamp_] fractional bounds can't be applied in place to %s", x.meta_string());
  return RunInplace(kClamp, x, attrs);
}
Status Hardtanh_(const Tensor& x, double lo, double hi) {
  return RunInplace(kClamp, x, {{"min", lo}, {"max", hi}}, true);
}
Status PowScalar_(const Tensor& x, double p) {
  if (!IsFloating(x.dtype()) && (!IsIntegralValue(p) || p < 0))
    return TypeError("[pow_] exponent %g can't be applied in place to %s", p, x.meta_string());
  return RunInplace(kPowScalar, x, {{"exponent", p}});
}
Status LogicalNot_(const Tensor& x) {
  return RunInplace(kLogicalNotInplace, x);
}

}  // namespace functional
}  // namespace oneflow_like
