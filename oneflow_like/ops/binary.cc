// Binary elementwise family: schemas, gradient hookup and functional entries, generated from
// oneflow_like/opdefs/binary.def (this file holds the gradient formulas, the promotion rules of
// each api kind and the entries with extra rules). Kernels see inputs of one dtype (promotion
// happens here) broadcast to the output's shape.
#include "oneflow_like/ops/binary.h"

#include <cmath>

#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/ternary.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {
namespace F = functional;

// Output meta of a table op: the broadcast shape, in the inputs' common dtype or bool.
template <typename Fn>
Status InferTable(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  if (in[0].dtype() != in[1].dtype())
    return TypeError("[%s] expected inputs of one dtype after promotion, got %s and %s", Fn::kName,
                     in[0].meta_string(), in[1].meta_string());
  ASSIGN_OR_RETURN(Shape s, BroadcastShapes(Fn::kName, in[0].shape(), in[1].shape()));
  out->push_back(
      TensorMeta{std::move(s), Fn::kBoolOut ? DType::kBool : in[0].dtype(), in[0].device()});
  return Status();
}
template <typename Fn>
Status InferScalarTable(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(
      TensorMeta{in[0].shape(), Fn::kBoolOut ? DType::kBool : in[0].dtype(), in[0].device()});
  return Status();
}

// Gradients (grad column fn_*): g is the incoming gradient, r[i] the gradient of input i
// (left empty where !c.needs_input_grad[i]).
#define OFL_GRAD(Name, body)                              \
  StatusOr<TensorList> Grad##Name(const GradContext& c) { \
    const Tensor& g = c.grad_outputs[0];                  \
    [[maybe_unused]] const TensorList& in = c.inputs;     \
    [[maybe_unused]] const TensorList& out = c.outputs;   \
    TensorList r(c.needs_input_grad.size());              \
    body;                                                 \
    return r;                                             \
  }
OFL_GRAD(Add, {  // a + alpha b
  r[0] = g;
  double alpha = opdefs::ReadAttrs<opdefs::AlphaAttrs>(c.attrs).alpha;
  r[1] = g;
  if (c.needs_input_grad[1] && alpha != 1.0) {
    ASSIGN_OR_RETURN(r[1], F::MulScalar(g, alpha));
  }
})
OFL_GRAD(Sub, {  // a - alpha b
  r[0] = g;
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(r[1], F::MulScalar(g, -opdefs::ReadAttrs<opdefs::AlphaAttrs>(c.attrs).alpha));
  }
})
OFL_GRAD(Mul, {
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(r[0], F::Mul(g, in[1]));
  }
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(r[1], F::Mul(g, in[0]));
  }
})
OFL_GRAD(Div, {
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(r[0], F::Div(g, in[1]));
  }
  if (c.needs_input_grad[1]) {  // -g * a / b^2
    ASSIGN_OR_RETURN(Tensor q, F::Div(in[0], in[1]));
    ASSIGN_OR_RETURN(Tensor gq, F::Mul(g, q));
    ASSIGN_OR_RETURN(Tensor t, F::Div(gq, in[1]));
    ASSIGN_OR_RETURN(r[1], F::Neg(t));
  }
})
OFL_GRAD(Pow, {  // da = g * b * a^(b-1); db = g * a^b * log(a)
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor bm1, F::AddScalar(in[1], -1.0));
    ASSIGN_OR_RETURN(Tensor p, F::Pow(in[0], bm1));
    ASSIGN_OR_RETURN(Tensor gb, F::Mul(g, in[1]));
    ASSIGN_OR_RETURN(r[0], F::Mul(gb, p));
  }
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(Tensor la, F::Log(in[0]));
    ASSIGN_OR_RETURN(Tensor go, F::Mul(g, out[0]));
    ASSIGN_OR_RETURN(r[1], F::Mul(go, la));
  }
})
// remainder/fmod: da = g; db = -g * q with q = (a - r) / b the rounded quotient.
OFL_GRAD(Remainder, {
  r[0] = g;
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(Tensor d, F::Sub(in[0], out[0]));
    ASSIGN_OR_RETURN(Tensor q, F::Div(d, in[1]));
    ASSIGN_OR_RETURN(Tensor gq, F::Mul(g, q));
    ASSIGN_OR_RETURN(r[1], F::Neg(gq));
  }
})
OFL_GRAD(Fmod, { ASSIGN_OR_RETURN(r, GradRemainder(c)); })
// xlogy: da = g * xlogy(a != 0, b) (log b where a != 0, else 0 unless b is NaN); db = g * a / b.
OFL_GRAD(Xlogy, {
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(Tensor nz, F::CompareScalar(F::CompareOp::kNe, in[0], 0.0));
    ASSIGN_OR_RETURN(Tensor l, F::Xlogy(nz, in[1]));
    ASSIGN_OR_RETURN(r[0], F::Mul(g, l));
  }
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(Tensor q, F::Div(in[0], in[1]));
    ASSIGN_OR_RETURN(r[1], F::Mul(g, q));
  }
})
// igamma(a, x) / igammac(a, x): d/dx = +- exp(-x) x^(a-1) / Gamma(a), computed in logs; no
// derivative for a (PyTorch raises too).
Status IgammaXGrad(const GradContext& c, TensorSpan in, const Tensor& g, bool upper,
                   TensorList& r) {
  if (c.needs_input_grad[0])
    return Unimplemented("[%s] the derivative with respect to input (a) is not implemented",
                         upper ? "igammac" : "igamma");
  if (!c.needs_input_grad[1]) return Status();
  ASSIGN_OR_RETURN(Tensor am1, F::AddScalar(in[0], -1.0));
  ASSIGN_OR_RETURN(Tensor t, F::Xlogy(am1, in[1]));  // (a - 1) log x, 0 where a == 1
  ASSIGN_OR_RETURN(t, F::Sub(t, in[1]));
  ASSIGN_OR_RETURN(Tensor lg, F::Lgamma(in[0]));
  ASSIGN_OR_RETURN(t, F::Sub(t, lg));
  ASSIGN_OR_RETURN(Tensor d, F::Exp(t));
  if (upper) {
    ASSIGN_OR_RETURN(d, F::Neg(d));
  }
  ASSIGN_OR_RETURN(r[1], F::Mul(g, d));
  return Status();
}
OFL_GRAD(Igamma, RETURN_IF_ERROR(IgammaXGrad(c, in, g, false, r)))
OFL_GRAD(Igammac, RETURN_IF_ERROR(IgammaXGrad(c, in, g, true, r)))
OFL_GRAD(AddScalar, r[0] = g)
OFL_GRAD(MulScalar,
         ASSIGN_OR_RETURN(r[0],
                          F::MulScalar(g, opdefs::ReadAttrs<opdefs::ScalarAttrs>(c.attrs).scalar)))
OFL_GRAD(RSubScalar, ASSIGN_OR_RETURN(r[0], F::Neg(g)))
OFL_GRAD(RDivScalar, {  // d(s/a) = -s/a^2 = -out/a
  ASSIGN_OR_RETURN(Tensor q, F::Div(out[0], in[0]));
  ASSIGN_OR_RETURN(Tensor gq, F::Mul(g, q));
  ASSIGN_OR_RETURN(r[0], F::Neg(gq));
})
#undef OFL_GRAD

// maximum/minimum backward: minmax_grad(g, a, b; is_max, side) = g where the `side` operand
// won, g/2 at ties, else 0 (the ternary table's; shaped like g, Dispatch reduces it to the
// operand's shape).
template <bool kIsMax>
StatusOr<TensorList> MinMaxGrad(const GradContext& c) {
  TensorList r(2);
  for (int side = 0; side < 2; ++side) {
    if (!c.needs_input_grad[side]) continue;
    ASSIGN_OR_RETURN(r[side], F::MinmaxGrad(c.grad_outputs[0], c.inputs[0], c.inputs[1],
                                            opdefs::MinmaxGradAttrs{kIsMax, side}));
  }
  return r;
}
StatusOr<TensorList> GradMaximum(const GradContext& c) {
  return MinMaxGrad<true>(c);
}
StatusOr<TensorList> GradMinimum(const GradContext& c) {
  return MinMaxGrad<false>(c);
}

// The table's OFL_READS lines: kReads<Name##Fn>, the inputs' readers (0: all inputs saved).
template <typename Fn>
constexpr uint64_t kReads = 0;
// clang-format off
#define OFL_ATTRS(...)
#define OFL_BINARY(...)
#define OFL_BINARY_SCALAR(...)
#define OFL_READS(Name, ...) template <> constexpr uint64_t kReads<opdefs::Name##Fn> = ReadBy({__VA_ARGS__});
#include "oneflow_like/opdefs/binary.def"
#undef OFL_READS
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on

// The table's OpDefs, kName for each op. grad column -> gradient function and what it saves.
// clang-format off
#define OFL_BGRAD_fn_none(Name) .Grad(&Grad##Name).SaveInputs(false).SaveOutputs(false)
#define OFL_BGRAD_fn_in(Name) .Grad(&Grad##Name).SaveOutputs(false)
#define OFL_BGRAD_fn_out(Name) .Grad(&Grad##Name).SaveInputs(false)
#define OFL_BGRAD_fn_both(Name) .Grad(&Grad##Name)
#define OFL_BGRAD_none(Name) .SaveInputs(false).SaveOutputs(false)
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, ...) \
  const OpDef k##Name = OpSpec(#name, &InferTable<opdefs::Name##Fn>).StridedInputs().InputReaders(kReads<opdefs::Name##Fn>) OFL_BGRAD_##grad(Name);
#define OFL_BINARY_SCALAR(name, Name, types, out, Base, order, grad, ...) \
  const OpDef k##Name = OpSpec(#name, &InferScalarTable<opdefs::Name##Fn>).StridedInputs().InputReaders(kReads<opdefs::Name##Fn>) OFL_BGRAD_##grad(Name);
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on
const OpDef* const kCompare[] = {&kEq, &kNe, &kLt, &kLe, &kGt, &kGe};  // CompareOp order
const OpDef* const kCompareScalar[] = {&kEqScalar, &kNeScalar, &kLtScalar,
                                       &kLeScalar, &kGtScalar, &kGeScalar};

StatusOr<std::pair<Tensor, Tensor>> Promote(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return std::make_pair(a, b);  // the common case: nothing to cast
  ASSIGN_OR_RETURN(TensorList ab, functional::PromoteOperands({a, b}));
  return std::make_pair(ab[0], ab[1]);
}

StatusOr<Tensor> PromotedOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  if (IsComplex(a.dtype()) || IsComplex(b.dtype())) return functional::ComplexBinary(op.name, a, b);
  if (a.dtype() == b.dtype()) return Dispatch1(op, {a, b});  // no pair of handle copies
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  return Dispatch1(op, {ab.first, ab.second});
}
StatusOr<Tensor> LogicalOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Tensor x, F::Cast(a, DType::kBool));
  ASSIGN_OR_RETURN(Tensor y, functional::Cast(b, DType::kBool));
  return Dispatch1(op, {x, y});
}
StatusOr<Tensor> BitwiseOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  if (IsFloating(a.dtype()) || IsFloating(b.dtype()))
    return TypeError("[%s] expected bool or integer tensors, got %s and %s", op.name,
                     a.meta_string(), b.meta_string());
  return PromotedOp(op, a, b);
}
// True division: integer operands divide as float32.
StatusOr<Tensor> TrueDivOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  if (IsComplex(a.dtype()) || IsComplex(b.dtype())) return functional::ComplexBinary(op.name, a, b);
  Tensor x = a, y = b;
  if (!IsFloating(a.dtype()) && !IsFloating(b.dtype())) {
    ASSIGN_OR_RETURN(x, F::Cast(a, DType::kF32));
    ASSIGN_OR_RETURN(y, F::Cast(b, DType::kF32));
  }
  return PromotedOp(op, x, y);
}
StatusOr<Tensor> DivisionOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::kBool && b.dtype() == DType::kBool)
    return TypeError("[%s] not supported for bool tensors (%s, %s)", op.name, a.meta_string(),
                     b.meta_string());
  return PromotedOp(op, a, b);
}

// In place, the promoted result must fit the target's category (no float into an integer tensor).
Status CheckInplaceResult(const char* op, const Tensor& a, const Tensor& b) {
  auto category = [](DType t) {
    return t == DType::kBool ? 0 : IsIntegral(t) ? 1 : IsComplex(t) ? 3 : 2;
  };
  if (category(b.dtype()) > category(a.dtype()))
    return TypeError("[%s] result type %s can't be cast to the desired output type %s", op,
                     DTypeLongName(b.dtype()), DTypeLongName(a.dtype()));
  return Status();
}

StatusOr<Tensor> ScalarOp(const OpDef& op, const Tensor& a, double s) {
  if (IsComplex(a.dtype())) {  // "add_scalar" -> add, "rsub_scalar" -> s - a
    std::string name(op.name);
    name = name.substr(0, name.size() - 7);
    const bool reverse = name == "rsub" || name == "rdiv";
    if (reverse) name = name.substr(1);
    return functional::ComplexScalar(name.c_str(), a, s, 0.0, reverse);
  }
  bool is_float = !std::isfinite(s) || s != std::floor(s);
  DType t = PromoteWithScalar(a.dtype(), is_float);
  ASSIGN_OR_RETURN(Tensor x, functional::Cast(a, t));
  return Dispatch1(op, {x}, {{"scalar", s}});
}

// PyTorch's arithmetic on bool operands (the promoted or in-place result `r` is bool): + is
// logical or, * logical and, - (or + with a negative alpha) an error. Returns the op to run
// instead of `op` (`op` itself when r is not bool; nullptr when alpha == 0 leaves r as it is).
StatusOr<const OpDef*> ForBool(const char* name, const OpDef& op, const Tensor& r, double alpha) {
  if (r.dtype() != DType::kBool) return &op;
  if (&op == &kSub || alpha < 0)
    return TypeError(
        "[%s] subtraction of bool tensors (%s) is not supported; use the ^ operator or "
        "logical_xor() instead",
        name, r.meta_string());
  if (&op == &kMul) return &kLogicalAnd;
  return alpha == 0 ? nullptr : &kLogicalOr;
}

}  // namespace

namespace functional {

StatusOr<Tensor> Add(const Tensor& a, const Tensor& b, double alpha) {
  if (IsComplex(a.dtype()) || IsComplex(b.dtype())) return ComplexBinary("add", a, b, alpha);
  if (a.dtype() != b.dtype()) {  // promoted, then the operands' own path (no handle copies)
    ASSIGN_OR_RETURN(auto ab, Promote(a, b));
    return Add(ab.first, ab.second, alpha);
  }
  ASSIGN_OR_RETURN(const OpDef* op, ForBool("add", kAdd, a, alpha));
  if (op == nullptr) return a;  // bool + 0 * b
  if (op != &kAdd) return Dispatch1(*op, {a, b});
  // alpha defaults to 1 in the kernels, the gradient and the lowering: no attribute then.
  if (alpha == 1.0) return Dispatch1(kAdd, {a, b});
  return Dispatch1(kAdd, {a, b}, {{"alpha", alpha}});
}
StatusOr<Tensor> Sub(const Tensor& a, const Tensor& b, double alpha) {
  if (IsComplex(a.dtype()) || IsComplex(b.dtype())) return ComplexBinary("sub", a, b, alpha);
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  RETURN_IF_ERROR(ForBool("sub", kSub, ab.first, alpha).status());
  return Dispatch1(kSub, {ab.first, ab.second}, {{"alpha", alpha}});
}
StatusOr<Tensor> Mul(const Tensor& a, const Tensor& b) {
  if (IsComplex(a.dtype()) || IsComplex(b.dtype())) return ComplexBinary("mul", a, b);
  if (a.dtype() != b.dtype()) {
    ASSIGN_OR_RETURN(auto ab, Promote(a, b));
    return Mul(ab.first, ab.second);
  }
  ASSIGN_OR_RETURN(const OpDef* op, ForBool("mul", kMul, a, 1.0));
  return Dispatch1(*op, {a, b});
}
StatusOr<Tensor> Div(const Tensor& a, const Tensor& b) {
  return TrueDivOp(kDiv, a, b);
}
StatusOr<Tensor> AddScalar(const Tensor& a, double s) {
  return ScalarOp(kAddScalar, a, s);
}
StatusOr<Tensor> MulScalar(const Tensor& a, double s) {
  return ScalarOp(kMulScalar, a, s);
}
StatusOr<Tensor> RSubScalar(const Tensor& a, double s) {
  return ScalarOp(kRSubScalar, a, s);
}
StatusOr<Tensor> RDivScalar(const Tensor& a, double s) {
  Tensor x = a;
  if (!IsFloating(a.dtype())) {
    ASSIGN_OR_RETURN(x, Cast(a, DType::kF32));
  }
  return ScalarOp(kRDivScalar, x, s);
}

StatusOr<Tensor> Pow(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::kBool && b.dtype() == DType::kBool)
    return TypeError("[pow] not supported for bool tensors (%s, %s)", a.meta_string(),
                     b.meta_string());
  return PromotedOp(kPow, a, b);
}
StatusOr<Tensor> Compare(CompareOp op, const Tensor& a, const Tensor& b) {
  return PromotedOp(*kCompare[static_cast<int>(op)], a, b);
}
StatusOr<Tensor> CompareScalar(CompareOp op, const Tensor& a, double s) {
  return ScalarOp(*kCompareScalar[static_cast<int>(op)], a, s);
}
// Generated entries (api promote / division / true_div / special / logical / bitwise).
// clang-format off
#define OFL_BINARY_ENTRY_promote(Name) PromotedOp(k##Name, a, b)
#define OFL_BINARY_ENTRY_division(Name) DivisionOp(k##Name, a, b)
#define OFL_BINARY_ENTRY_true_div(Name) TrueDivOp(k##Name, a, b)
#define OFL_BINARY_ENTRY_special(Name) TrueDivOp(k##Name, a, b)
#define OFL_BINARY_ENTRY_logical(Name) LogicalOp(k##Name, a, b)
#define OFL_BINARY_ENTRY_bitwise(Name) BitwiseOp(k##Name, a, b)
#define OFL_BINARY_DEFINE_custom(Name, api)
#define OFL_BINARY_DEFINE_gen(Name, api)                               \
  StatusOr<Tensor> Name(const Tensor& a, const Tensor& b) {            \
    return OFL_BINARY_ENTRY_##api(Name);                               \
  }
#define OFL_BINARY_DEFINE_promote(Name, api) OFL_BINARY_DEFINE_gen(Name, api)
#define OFL_BINARY_DEFINE_division(Name, api) OFL_BINARY_DEFINE_gen(Name, api)
#define OFL_BINARY_DEFINE_true_div(Name, api) OFL_BINARY_DEFINE_gen(Name, api)
#define OFL_BINARY_DEFINE_special(Name, api) OFL_BINARY_DEFINE_gen(Name, api)
#define OFL_BINARY_DEFINE_logical(Name, api) OFL_BINARY_DEFINE_gen(Name, api)
#define OFL_BINARY_DEFINE_bitwise(Name, api) OFL_BINARY_DEFINE_gen(Name, api)
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, ...) OFL_BINARY_DEFINE_##api(Name, api)
#define OFL_BINARY_SCALAR(...)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on

StatusOr<TensorList> PromoteOperands(const TensorList& ts) {
  auto category = [](DType t) { return t == DType::kBool ? 0 : IsIntegral(t) ? 1 : 2; };
  bool have_dim = false, have_zero = false;
  DType dim_t = DType::kBool, zero_t = DType::kBool;
  for (const Tensor& t : ts) {
    if (t.ndim() > 0) {
      if (have_dim) {
        ASSIGN_OR_RETURN(dim_t, PromoteTypesChecked("result_type", dim_t, t.dtype()));
      } else {
        dim_t = t.dtype();
      }
      have_dim = true;
    } else {
      if (have_zero) {
        ASSIGN_OR_RETURN(zero_t, PromoteTypesChecked("result_type", zero_t, t.dtype()));
      } else {
        zero_t = t.dtype();
      }
      have_zero = true;
    }
  }
  if (have_dim && have_zero) {  // torch's refusals hold across a 0-d operand too
    RETURN_IF_ERROR(PromoteTypesChecked("result_type", dim_t, zero_t).status());
  }
  DType r = !have_dim                            ? zero_t
            : !have_zero                         ? dim_t
            : category(zero_t) > category(dim_t) ? zero_t
                                                 : dim_t;
  TensorList out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) {
    if (t.dtype() == r) {
      out.push_back(t);
      continue;
    }
    ASSIGN_OR_RETURN(Tensor c, Cast(t, r));
    out.push_back(c);
  }
  return out;
}

Status Add_(const Tensor& a, const Tensor& b, double alpha) {
  RETURN_IF_ERROR(CheckInplaceResult("add_", a, b));
  if (IsComplex(a.dtype())) {  // out of place, then copied into a
    return ComplexInplace(
        alpha < 0 ? "sub_" : "add_", a,
        [&](const Tensor& s) { return ComplexBinary("add", s, b, alpha); }, b);
  }
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  ASSIGN_OR_RETURN(const OpDef* op, ForBool(alpha < 0 ? "sub_" : "add_", kAdd, a, alpha));
  if (op == nullptr) return Status();
  if (op != &kAdd) return DispatchInplace(*op, {a, y}, {}, a);
  return DispatchInplace(kAdd, {a, y}, {{"alpha", alpha}}, a);
}
Status Mul_(const Tensor& a, const Tensor& b) {
  RETURN_IF_ERROR(CheckInplaceResult("mul_", a, b));
  if (IsComplex(a.dtype())) {
    return ComplexInplace(
        "mul_", a, [&](const Tensor& s) { return ComplexBinary("mul", s, b); }, b);
  }
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  ASSIGN_OR_RETURN(const OpDef* op, ForBool("mul_", kMul, a, 1.0));
  return DispatchInplace(*op, {a, y}, {}, a);
}
Status Div_(const Tensor& a, const Tensor& b) {
  if (IsComplex(a.dtype())) {
    return ComplexInplace(
        "div_", a, [&](const Tensor& s) { return ComplexBinary("div", s, b); }, b);
  }
  if (!IsFloating(a.dtype()))
    return TypeError("[div_] true division can't be written in place into %s", a.meta_string());
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  return DispatchInplace(kDiv, {a, y}, {}, a);
}
Status MulScalar_(const Tensor& a, double s) {
  if (IsComplex(a.dtype())) {
    return ComplexInplace("mul_", a,
                          [&](const Tensor& t) { return ComplexScalar("mul", t, s, 0.0); });
  }
  return DispatchInplace(kMulScalar, {a}, {{"scalar", s}}, a);
}
Status AddScalar_(const Tensor& a, double s) {
  if (IsComplex(a.dtype())) {
    return ComplexInplace("add_", a,
                          [&](const Tensor& t) { return ComplexScalar("add", t, s, 0.0); });
  }
  return DispatchInplace(kAddScalar, {a}, {{"scalar", s}}, a);
}

}  // namespace functional
}  // namespace oneflow_like
