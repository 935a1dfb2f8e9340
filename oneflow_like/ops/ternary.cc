// Ternary elementwise family: schemas, gradient hookup and functional entries, generated from
// oneflow_like/opdefs/ternary.def (this file holds the gradient formulas and the entries with
// extra rules, api custom). Kernels see value operands of one dtype (promotion happens here) and
// a bool condition, all broadcast to the output's shape.
#include "oneflow_like/ops/ternary.h"

#include <cmath>
#include <type_traits>

#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {
namespace F = functional;
using opdefs::Types;

// The name errors report: a scalar variant's base op (the user called `where`, not
// `where_scalar_other`).
template <typename Fn, typename = void>
struct UserName {
  static constexpr const char* value = Fn::kName;
};
template <typename Fn>
struct UserName<Fn, std::void_t<typename Fn::BaseFn>> {
  static constexpr const char* value = Fn::BaseFn::kName;
};

// Output meta of a table op: all inputs broadcast together, in the value operands' dtype (which
// the functional entries made one).
template <typename Fn>
Status InferTernary(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const char* name = UserName<Fn>::value;
  Shape s = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) {
    ASSIGN_OR_RETURN(s, BroadcastShapes(name, s, in[i].shape()));
  }
  const size_t first_value = Fn::kCond ? 1 : 0;
  for (size_t i = first_value + 1; i < in.size(); ++i)
    if (in[i].dtype() != in[first_value].dtype())
      return TypeError("[%s] expected operands of one dtype after promotion, got %s and %s", name,
                       in[first_value].meta_string(), in[i].meta_string());
  out->push_back(TensorMeta{s, in.back().dtype(), in[0].device()});
  return Status();
}

// Gradient formulas, Grad<Name> for the table's grad column (shaped like the output; Dispatch
// reduces each to its operand's shape).
#define OFL_GRAD(Name, ...)                               \
  StatusOr<TensorList> Grad##Name(const GradContext& c) { \
    const Tensor& g = c.grad_outputs[0];                  \
    const TensorList& in = c.inputs;                      \
    TensorList r(c.needs_input_grad.size());              \
    (void)in;                                             \
    __VA_ARGS__;                                          \
    return r;                                             \
  }
// where: the gradient flows to the branch that was taken.
OFL_GRAD(Where, {
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(r[1], F::WhereScalarOther(in[0], g, 0.0));
  }
  if (c.needs_input_grad[2]) {
    ASSIGN_OR_RETURN(r[2], F::WhereScalarInput(in[0], 0.0, g));
  }
})
OFL_GRAD(WhereScalarOther, { ASSIGN_OR_RETURN(r[1], F::WhereScalarOther(in[0], g, 0.0)); })
OFL_GRAD(WhereScalarInput, { ASSIGN_OR_RETURN(r[1], F::WhereScalarInput(in[0], 0.0, g)); })
// addcmul: d/dinput = g, d/dt1 = g * value * t2, d/dt2 = g * value * t1.
OFL_GRAD(Addcmul, {
  const double v = opdefs::ReadAttrs<opdefs::AddcAttrs>(c.attrs).value;
  r[0] = g;
  ASSIGN_OR_RETURN(Tensor gv, F::MulScalar(g, v));
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(r[1], F::Mul(gv, in[2]));
  }
  if (c.needs_input_grad[2]) {
    ASSIGN_OR_RETURN(r[2], F::Mul(gv, in[1]));
  }
})
// addcdiv: d/dt1 = g * value / t2, d/dt2 = -g * value * t1 / t2^2.
OFL_GRAD(Addcdiv, {
  const double v = opdefs::ReadAttrs<opdefs::AddcAttrs>(c.attrs).value;
  r[0] = g;
  if (!c.needs_input_grad[1] && !c.needs_input_grad[2]) return r;  // t1, t2 unsaved then
  ASSIGN_OR_RETURN(Tensor gv, F::MulScalar(g, v));
  ASSIGN_OR_RETURN(Tensor g1, F::Div(gv, in[2]));
  if (c.needs_input_grad[1]) r[1] = g1;
  if (c.needs_input_grad[2]) {
    ASSIGN_OR_RETURN(Tensor q, F::Div(in[1], in[2]));
    ASSIGN_OR_RETURN(Tensor t, F::Mul(g1, q));
    ASSIGN_OR_RETURN(r[2], F::Neg(t));
  }
})
// lerp: d/dstart = g (1 - w), d/dend = g w, d/dw = g (end - start).
OFL_GRAD(Lerp, {
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor omw, F::RSubScalar(in[2], 1.0));
    ASSIGN_OR_RETURN(r[0], F::Mul(g, omw));
  }
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(r[1], F::Mul(g, in[2]));
  }
  if (c.needs_input_grad[2]) {
    ASSIGN_OR_RETURN(Tensor d, F::Sub(in[1], in[0]));
    ASSIGN_OR_RETURN(r[2], F::Mul(g, d));
  }
})
OFL_GRAD(LerpScalar, {
  const double w = opdefs::ReadAttrs<opdefs::ScalarAttrs>(c.attrs).scalar;
  ASSIGN_OR_RETURN(r[0], F::MulScalar(g, 1.0 - w));
  ASSIGN_OR_RETURN(r[1], F::MulScalar(g, w));
})
// minmax_grad is linear in g: its gradient is minmax_grad of the incoming gradient.
OFL_GRAD(MinmaxGrad, {
  ASSIGN_OR_RETURN(
      r[0], F::MinmaxGrad(g, in[1], in[2], opdefs::ReadAttrs<opdefs::MinmaxGradAttrs>(c.attrs)));
})
// clamp_tensor (PyTorch's rule): input where min <= input <= max; min where input < min < max;
// max where input > max or max < min. An absent bound gets no gradient and no condition.
OFL_GRAD(ClampTensor, {
  const auto a = opdefs::ReadAttrs<opdefs::ClampTensorAttrs>(c.attrs);
  using F::CompareOp;
  const Tensor &x = in[0], &lo = in[1], &hi = in[2];
  // g where p(u, v), and (all) / or (!all) q(s, t) when `with`.
  auto masked = [&](CompareOp p, const Tensor& u, const Tensor& v, bool with, bool all, CompareOp q,
                    const Tensor& s, const Tensor& t) -> StatusOr<Tensor> {
    ASSIGN_OR_RETURN(Tensor m, F::Compare(p, u, v));
    if (with) {
      ASSIGN_OR_RETURN(Tensor n, F::Compare(q, s, t));
      ASSIGN_OR_RETURN(m, all ? F::LogicalAnd(m, n) : F::LogicalOr(m, n));
    }
    return F::WhereScalarOther(m, g, 0.0);
  };
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(
        r[0], a.has_min ? masked(CompareOp::kGe, x, lo, a.has_max, true, CompareOp::kLe, x, hi)
                        : masked(CompareOp::kLe, x, hi, false, true, CompareOp::kLe, x, hi));
  }
  if (c.needs_input_grad[1] && a.has_min) {
    ASSIGN_OR_RETURN(r[1], masked(CompareOp::kLt, x, lo, a.has_max, true, CompareOp::kLt, lo, hi));
  }
  if (c.needs_input_grad[2] && a.has_max) {
    ASSIGN_OR_RETURN(r[2], masked(CompareOp::kGt, x, hi, a.has_min, false, CompareOp::kLt, hi, lo));
  }
})
#undef OFL_GRAD

// The table's OFL_READS lines: kReads<Name##Fn>, the inputs' readers (0: all inputs saved).
template <typename Fn>
constexpr uint64_t kReads = 0;
// clang-format off
#define OFL_ATTRS(...)
#define OFL_TERNARY(...)
#define OFL_TERNARY_SCALAR(...)
#define OFL_READS(Name, ...) template <> constexpr uint64_t kReads<opdefs::Name##Fn> = ReadBy({__VA_ARGS__});
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_READS
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on

// The table's OpDefs, kName for each op. grad column -> gradient function and what it saves.
// clang-format off
#define OFL_TGRAD_fn_in(Name) .Grad(&Grad##Name).SaveOutputs(false)
#define OFL_TGRAD_fn_none(Name) .Grad(&Grad##Name).SaveInputs(false).SaveOutputs(false)
#define OFL_TGRAD_none(Name) .SaveInputs(false).SaveOutputs(false)
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, ...) \
  const OpDef k##Name = OpSpec(#name, &InferTernary<opdefs::Name##Fn>).StridedInputs().InputReaders(kReads<opdefs::Name##Fn>) OFL_TGRAD_##grad(Name);
#define OFL_TERNARY_SCALAR(name, Name, types, Base, pos, grad, ...) \
  const OpDef k##Name = OpSpec(#name, &InferTernary<opdefs::Name##Fn>).StridedInputs().InputReaders(kReads<opdefs::Name##Fn>) OFL_TGRAD_##grad(Name);
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> AsCondition(const Tensor& cond) {
  if (cond.dtype() == DType::kBool) return cond;
  return F::Cast(cond, DType::kBool);
}

// The value operand cast for a Python scalar partner (a float scalar lifts integers to f32).
StatusOr<Tensor> WithScalar(const Tensor& x, double s) {
  bool is_float = !std::isfinite(s) || s != std::floor(s);
  return F::Cast(x, PromoteWithScalar(x.dtype(), is_float));
}

Status CheckFloatOperands(const char* op, const TensorList& ts) {
  for (const Tensor& t : ts)
    if (!IsFloating(t.dtype()))
      return TypeError("[%s] expected floating point tensors, got %s", op, t.meta_string());
  return Status();
}

StatusOr<TensorList> CastAllTo(const TensorList& ts, DType t) {
  TensorList r;
  for (const Tensor& x : ts) {
    ASSIGN_OR_RETURN(Tensor c, F::Cast(x, t));
    r.push_back(c);
  }
  return r;
}

// api gen: the three operands promoted together; Float ops reject non-floating results.
template <typename Fn>
StatusOr<Tensor> GenEntry(const OpDef& op, const Tensor& x, const Tensor& y, const Tensor& z,
                          const typename Fn::Attrs& a) {
  ASSIGN_OR_RETURN(TensorList p, F::PromoteOperands({x, y, z}));
  if (Fn::kTypes == Types::Float) RETURN_IF_ERROR(CheckFloatOperands(Fn::kName, p));
  return Dispatch1(op, p, opdefs::ToAttrMap(a));
}
// api gen_ip, in place: y and z cast to x's dtype.
template <typename Fn>
Status GenInplace(const OpDef& op, const Tensor& x, const Tensor& y, const Tensor& z,
                  const typename Fn::Attrs& a) {
  if (Fn::kTypes == Types::Float)
    RETURN_IF_ERROR(CheckFloatOperands((std::string(Fn::kName) + "_").c_str(), {x}));
  ASSIGN_OR_RETURN(TensorList p, CastAllTo({y, z}, x.dtype()));
  return DispatchInplace(op, {x, p[0], p[1]}, opdefs::ToAttrMap(a), x);
}

}  // namespace

namespace functional {

// Generated entries (api gen / gen_ip / internal).
// clang-format off
#define OFL_TERNARY_DEFINE_custom(Name, Attrs)
#define OFL_TERNARY_DEFINE_gen(Name, Attrs)                                                     \
  StatusOr<Tensor> Name(const Tensor& x, const Tensor& y, const Tensor& z, const opdefs::Attrs& a) { \
    return GenEntry<opdefs::Name##Fn>(k##Name, x, y, z, a);                                     \
  }
#define OFL_TERNARY_DEFINE_gen_ip(Name, Attrs)                                                  \
  OFL_TERNARY_DEFINE_gen(Name, Attrs)                                                           \
  Status Name##_(const Tensor& x, const Tensor& y, const Tensor& z, const opdefs::Attrs& a) {   \
    return GenInplace<opdefs::Name##Fn>(k##Name, x, y, z, a);                                   \
  }
#define OFL_TERNARY_DEFINE_internal(Name, Attrs)                                                \
  StatusOr<Tensor> Name(const Tensor& x, const Tensor& y, const Tensor& z, const opdefs::Attrs& a) { \
    return Dispatch1(k##Name, {x, y, z}, opdefs::ToAttrMap(a));                                 \
  }
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, ...) \
  OFL_TERNARY_DEFINE_##api(Name, Attrs)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> Where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  ASSIGN_OR_RETURN(Tensor c, AsCondition(cond));
  if (IsComplex(x.dtype()) || IsComplex(y.dtype())) return ComplexWhere(c, x, y);
  ASSIGN_OR_RETURN(TensorList xy, PromoteOperands({x, y}));
  return Dispatch1(kWhere, {c, xy[0], xy[1]});
}
StatusOr<Tensor> WhereScalarOther(const Tensor& cond, const Tensor& x, double y) {
  ASSIGN_OR_RETURN(Tensor c, AsCondition(cond));
  if (IsComplex(x.dtype())) {
    ASSIGN_OR_RETURN(Tensor s, ComplexScalarTensor(y, 0.0, x.dtype(), x.device()));
    return ComplexWhere(c, x, s);
  }
  ASSIGN_OR_RETURN(Tensor xv, WithScalar(x, y));
  return Dispatch1(kWhereScalarOther, {c, xv}, {{"scalar", y}});
}
StatusOr<Tensor> WhereScalarInput(const Tensor& cond, double x, const Tensor& y) {
  ASSIGN_OR_RETURN(Tensor c, AsCondition(cond));
  if (IsComplex(y.dtype())) {
    ASSIGN_OR_RETURN(Tensor s, ComplexScalarTensor(x, 0.0, y.dtype(), y.device()));
    return ComplexWhere(c, s, y);
  }
  ASSIGN_OR_RETURN(Tensor yv, WithScalar(y, x));
  return Dispatch1(kWhereScalarInput, {c, yv}, {{"scalar", x}});
}

StatusOr<Tensor> Lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return GenEntry<opdefs::LerpFn>(kLerp, start, end, weight, {});
}
StatusOr<Tensor> LerpScalar(const Tensor& start, const Tensor& end, double weight) {
  ASSIGN_OR_RETURN(TensorList p, PromoteOperands({start, end}));
  RETURN_IF_ERROR(CheckFloatOperands("lerp", p));
  return Dispatch1(kLerpScalar, p, {{"scalar", weight}});
}
Status Lerp_(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return GenInplace<opdefs::LerpFn>(kLerp, start, end, weight, {});
}
Status LerpScalar_(const Tensor& start, const Tensor& end, double weight) {
  RETURN_IF_ERROR(CheckFloatOperands("lerp_", {start}));
  ASSIGN_OR_RETURN(Tensor e, Cast(end, start.dtype()));
  return DispatchInplace(kLerpScalar, {start, e}, {{"scalar", weight}}, start);
}

StatusOr<Tensor> ClampTensor(const Tensor& input, const Tensor& min, const Tensor& max) {
  if (!min.defined() && !max.defined())
    return InvalidArgument("[clamp] at least one of min and max must be given (input %s)",
                           input.meta_string());
  TensorList given{input};
  if (min.defined()) given.push_back(min);
  if (max.defined()) given.push_back(max);
  ASSIGN_OR_RETURN(TensorList p, PromoteOperands(given));
  // An absent bound's slot holds the input (not read: has_min / has_max say so).
  const Tensor& lo = min.defined() ? p[1] : p[0];
  const Tensor& hi = max.defined() ? p.back() : p[0];
  return Dispatch1(kClampTensor, {p[0], lo, hi},
                   opdefs::ToAttrMap(opdefs::ClampTensorAttrs{min.defined(), max.defined()}));
}

}  // namespace functional
}  // namespace oneflow_like
