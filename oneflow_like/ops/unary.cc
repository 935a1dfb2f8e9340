// Unary elementwise family: schemas, gradient hookup and functional entries, generated from
// oneflow_like/opdefs/unary.def (this file holds the composite gradient formulas and the entries
// with extra checks). Kernels (kernels/cpu/unary.cc) see one dtype in and out (bool out for
// logical_not) and any input strides. Backward ops <name>_grad(dy, saved) are linear in dy, so
// their own gradient is the same op.
#include "oneflow_like/ops/unary.h"

#include <cmath>
#include <limits>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/opdefs/attrs.h"

namespace oneflow_like {
namespace {
namespace F = functional;

// Every unary kernel reads any input strides.
OpSpec Unary(const char* name, InferFn infer = ops::InferSameAsInput) {
  return OpSpec(name, infer).StridedInputs().SaveInputs(false).SaveOutputs(false);
}

Status InferBool(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), DType::kBool, in[0].device()});
  return Status();
}

// Backward ops bw(dy, saved): shape and dtype of dy. Their gradient w.r.t. dy is the op itself;
// w.r.t. the saved tensor none (double backward through the saved tensor is not supported).
template <const OpDef& Self>
StatusOr<TensorList> LinearInDy(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(Self, {c.grad_outputs[0], c.inputs[1]}, c.attrs));
  return TensorList{g, Tensor()};
}

// Gradient from a backward op fed with the saved output (kOut) or input (kIn).
enum Saved { kIn, kOut };
template <const OpDef& Bw, Saved S>
StatusOr<TensorList> ViaBackwardOp(const GradContext& c) {
  const Tensor& s = S == kOut ? c.outputs[0] : c.inputs[0];
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(Bw, {c.grad_outputs[0], s}, c.attrs));
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
#define OFL_GRAD_bw_in(Name) .Grad(&ViaBackwardOp<k##Name##Grad, kIn>).SaveInputs()
#define OFL_GRAD_bw_out(Name) .Grad(&ViaBackwardOp<k##Name##Grad, kOut>).SaveOutputs()
#define OFL_GRAD_fn_in(Name) .Grad(&Grad##Name).SaveInputs()
#define OFL_GRAD_fn_out(Name) .Grad(&Grad##Name).SaveOutputs()
#define OFL_GRAD_fn_none(Name) .Grad(&Grad##Name)
#define OFL_GRAD_none(Name)
#define OFL_ATTRS(...)
#define OFL_UNARY(...)
#define OFL_UNARY_GRAD(name, Name, ...) \
  const OpDef k##Name = Unary(#name).Grad(&LinearInDy<k##Name>).SaveInputs();
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
  if (IsFloating(x.dtype())) return Dispatch1(op, {x}, attrs);
  ASSIGN_OR_RETURN(Tensor f, functional::Cast(x, DType::kF32));
  return Dispatch1(op, {f}, attrs);
}

Status RunInplace(const OpDef& op, const Tensor& x, const AttrMap& attrs = {},
                  bool float_only = false) {
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
