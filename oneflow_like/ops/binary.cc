// Binary elementwise family: schemas, gradient formulas and functional entries.
// Kernels see inputs of one dtype (promotion happens here) broadcast to the output's shape.
#include "oneflow_like/ops/binary.h"

#include <cmath>

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {

Status InferBroadcast(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out,
                      const char* op) {
  if (in[0].dtype() != in[1].dtype())
    return TypeError("[%s] expected inputs of one dtype after promotion, got %s and %s", op,
                     in[0].meta_string(), in[1].meta_string());
  ASSIGN_OR_RETURN(Shape s, BroadcastShapes(op, in[0].shape(), in[1].shape()));
  out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
  return Status();
}

#define OFL_BROADCAST_INFER(name)                                            \
  [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) { \
    return InferBroadcast(in, a, out, name);                                 \
  }

// add(a, b; alpha): a + alpha * b
const OpDef kAdd = OpSpec("add", OFL_BROADCAST_INFER("add"))
                       .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                         const Tensor& g = c.grad_outputs[0];
                         double alpha = c.attrs.Float("alpha", 1.0);
                         Tensor gb = g;
                         if (c.needs_input_grad[1] && alpha != 1.0) {
                           ASSIGN_OR_RETURN(gb, functional::MulScalar(g, alpha));
                         }
                         return TensorList{g, gb};
                       })
                       .StridedInputs()
                       .SaveInputs(false)
                       .SaveOutputs(false);

// sub(a, b; alpha): a - alpha * b (its own op so errors and traces say "sub").
const OpDef kSub =
    OpSpec("sub", OFL_BROADCAST_INFER("sub"))
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          const Tensor& g = c.grad_outputs[0];
          Tensor gb;
          if (c.needs_input_grad[1]) {
            ASSIGN_OR_RETURN(gb, functional::MulScalar(g, -c.attrs.Float("alpha", 1.0)));
          }
          return TensorList{g, gb};
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);

const OpDef kMul = OpSpec("mul", OFL_BROADCAST_INFER("mul"))
                       .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                         const Tensor& g = c.grad_outputs[0];
                         TensorList r(2);
                         if (c.needs_input_grad[0]) {
                           ASSIGN_OR_RETURN(r[0], functional::Mul(g, c.inputs[1]));
                         }
                         if (c.needs_input_grad[1]) {
                           ASSIGN_OR_RETURN(r[1], functional::Mul(g, c.inputs[0]));
                         }
                         return r;
                       })
                       .StridedInputs()
                       .SaveOutputs(false);

const OpDef kDiv = OpSpec("div", OFL_BROADCAST_INFER("div"))
                       .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                         const Tensor& g = c.grad_outputs[0];
                         TensorList r(2);
                         if (c.needs_input_grad[0]) {
                           ASSIGN_OR_RETURN(r[0], functional::Div(g, c.inputs[1]));
                         }
                         if (c.needs_input_grad[1]) {  // -g * a / b^2
                           ASSIGN_OR_RETURN(Tensor q, functional::Div(c.inputs[0], c.inputs[1]));
                           ASSIGN_OR_RETURN(Tensor gq, functional::Mul(g, q));
                           ASSIGN_OR_RETURN(Tensor t, functional::Div(gq, c.inputs[1]));
                           ASSIGN_OR_RETURN(r[1], functional::Neg(t));
                         }
                         return r;
                       })
                       .StridedInputs()
                       .SaveOutputs(false);

// Scalar variants: attr "scalar"; op = a*scalar, a+scalar, scalar-a, scalar/a.
const OpDef kMulScalar =
    OpSpec("mul_scalar", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g,
                           functional::MulScalar(c.grad_outputs[0], c.attrs.Float("scalar")));
          return TensorList{g};
        })
        .StridedInputs()
        .SaveInputs(false)
        .SaveOutputs(false);
const OpDef kAddScalar = OpSpec("add_scalar", ops::InferSameAsInput)
                             .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                               return TensorList{c.grad_outputs[0]};
                             })
                             .StridedInputs()
                             .SaveInputs(false)
                             .SaveOutputs(false);
const OpDef kRSubScalar = OpSpec("rsub_scalar", ops::InferSameAsInput)
                              .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                                ASSIGN_OR_RETURN(Tensor g, functional::Neg(c.grad_outputs[0]));
                                return TensorList{g};
                              })
                              .StridedInputs()
                              .SaveInputs(false)
                              .SaveOutputs(false);
const OpDef kRDivScalar =
    OpSpec("rdiv_scalar", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {  // d(s/a) = -s/a^2 = -out/a
          ASSIGN_OR_RETURN(Tensor q, functional::Div(c.outputs[0], c.inputs[0]));
          ASSIGN_OR_RETURN(Tensor g, functional::Mul(c.grad_outputs[0], q));
          ASSIGN_OR_RETURN(Tensor n, functional::Neg(g));
          return TensorList{n};
        })
        .StridedInputs();

StatusOr<std::pair<Tensor, Tensor>> Promote(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return std::make_pair(a, b);  // the common case: nothing to cast
  ASSIGN_OR_RETURN(TensorList ab, functional::PromoteOperands({a, b}));
  return std::make_pair(ab[0], ab[1]);
}

Status InferBroadcastBool(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out,
                          const char* op) {
  RETURN_IF_ERROR(InferBroadcast(in, a, out, op));
  out->back().dtype = DType::kBool;
  return Status();
}
Status InferBoolSameShape(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[0].shape(), DType::kBool, in[0].device()});
  return Status();
}

// pow: da = g * b * a^(b-1); db = g * a^b * log(a).
const OpDef kPow = OpSpec("pow", OFL_BROADCAST_INFER("pow"))
                       .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                         namespace F = functional;
                         const Tensor &g = c.grad_outputs[0], &a = c.inputs[0], &b = c.inputs[1];
                         TensorList r(2);
                         if (c.needs_input_grad[0]) {
                           ASSIGN_OR_RETURN(Tensor bm1, F::AddScalar(b, -1.0));
                           ASSIGN_OR_RETURN(Tensor p, F::Pow(a, bm1));
                           ASSIGN_OR_RETURN(Tensor gb, F::Mul(g, b));
                           ASSIGN_OR_RETURN(r[0], F::Mul(gb, p));
                         }
                         if (c.needs_input_grad[1]) {
                           ASSIGN_OR_RETURN(Tensor la, F::Log(a));
                           ASSIGN_OR_RETURN(Tensor go, F::Mul(g, c.outputs[0]));
                           ASSIGN_OR_RETURN(r[1], F::Mul(go, la));
                         }
                         return r;
                       })
                       .StridedInputs();

// maximum/minimum backward: minmax_grad(g, a, b; is_max, side) = g where the `side` operand
// won, g/2 at ties, else 0 (shaped like g; Dispatch reduces it to the operand's shape).
const OpDef kMinMaxGrad =
    OpSpec("minmax_grad",
           [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
             out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(
              Tensor g,
              Dispatch1(kMinMaxGrad, {c.grad_outputs[0], c.inputs[1], c.inputs[2]}, c.attrs));
          return TensorList{g, Tensor(), Tensor()};
        })
        .StridedInputs()
        .SaveOutputs(false);
template <bool kIsMax>
StatusOr<TensorList> MinMaxGrad(const GradContext& c) {
  TensorList r(2);
  for (int side = 0; side < 2; ++side) {
    if (!c.needs_input_grad[side]) continue;
    ASSIGN_OR_RETURN(r[side], Dispatch1(kMinMaxGrad, {c.grad_outputs[0], c.inputs[0], c.inputs[1]},
                                        {{"is_max", kIsMax}, {"side", int64_t(side)}}));
  }
  return r;
}
const OpDef kMaximum = OpSpec("maximum", OFL_BROADCAST_INFER("maximum"))
                           .Grad(&MinMaxGrad<true>)
                           .StridedInputs()
                           .SaveOutputs(false);
const OpDef kMinimum = OpSpec("minimum", OFL_BROADCAST_INFER("minimum"))
                           .Grad(&MinMaxGrad<false>)
                           .StridedInputs()
                           .SaveOutputs(false);

// remainder/fmod: da = g; db = -g * q with q = (a - r) / b the rounded quotient.
StatusOr<TensorList> RemainderGrad(const GradContext& c) {
  namespace F = functional;
  const Tensor& g = c.grad_outputs[0];
  TensorList r{g, Tensor()};
  if (c.needs_input_grad[1]) {
    ASSIGN_OR_RETURN(Tensor d, F::Sub(c.inputs[0], c.outputs[0]));
    ASSIGN_OR_RETURN(Tensor q, F::Div(d, c.inputs[1]));
    ASSIGN_OR_RETURN(Tensor gq, F::Mul(g, q));
    ASSIGN_OR_RETURN(r[1], F::Neg(gq));
  }
  return r;
}
const OpDef kFloorDivide = OpSpec("floor_divide", OFL_BROADCAST_INFER("floor_divide"))
                               .StridedInputs()
                               .SaveInputs(false)
                               .SaveOutputs(false);
const OpDef kRemainder =
    OpSpec("remainder", OFL_BROADCAST_INFER("remainder")).Grad(&RemainderGrad).StridedInputs();
const OpDef kFmod =
    OpSpec("fmod", OFL_BROADCAST_INFER("fmod")).Grad(&RemainderGrad).StridedInputs();

#define OFL_BOOL_INFER(name)                                                 \
  [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) { \
    return InferBroadcastBool(in, a, out, name);                             \
  }
const OpDef kCompare[] = {
    OpSpec("eq", OFL_BOOL_INFER("eq")).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("ne", OFL_BOOL_INFER("ne")).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("lt", OFL_BOOL_INFER("lt")).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("le", OFL_BOOL_INFER("le")).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("gt", OFL_BOOL_INFER("gt")).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("ge", OFL_BOOL_INFER("ge")).StridedInputs().SaveInputs(false).SaveOutputs(false),
};
const OpDef kCompareScalar[] = {
    OpSpec("eq_scalar", InferBoolSameShape).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("ne_scalar", InferBoolSameShape).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("lt_scalar", InferBoolSameShape).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("le_scalar", InferBoolSameShape).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("gt_scalar", InferBoolSameShape).StridedInputs().SaveInputs(false).SaveOutputs(false),
    OpSpec("ge_scalar", InferBoolSameShape).StridedInputs().SaveInputs(false).SaveOutputs(false),
};
const OpDef kLogicalAnd = OpSpec("logical_and", OFL_BOOL_INFER("logical_and"))
                              .StridedInputs()
                              .SaveInputs(false)
                              .SaveOutputs(false);
const OpDef kLogicalOr = OpSpec("logical_or", OFL_BOOL_INFER("logical_or"))
                             .StridedInputs()
                             .SaveInputs(false)
                             .SaveOutputs(false);
const OpDef kLogicalXor = OpSpec("logical_xor", OFL_BOOL_INFER("logical_xor"))
                              .StridedInputs()
                              .SaveInputs(false)
                              .SaveOutputs(false);
const OpDef kBitwiseAnd = OpSpec("bitwise_and", OFL_BROADCAST_INFER("bitwise_and"))
                              .StridedInputs()
                              .SaveInputs(false)
                              .SaveOutputs(false);
const OpDef kBitwiseOr = OpSpec("bitwise_or", OFL_BROADCAST_INFER("bitwise_or"))
                             .StridedInputs()
                             .SaveInputs(false)
                             .SaveOutputs(false);
const OpDef kBitwiseXor = OpSpec("bitwise_xor", OFL_BROADCAST_INFER("bitwise_xor"))
                              .StridedInputs()
                              .SaveInputs(false)
                              .SaveOutputs(false);

StatusOr<Tensor> PromotedOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  return Dispatch1(op, {ab.first, ab.second});
}
StatusOr<Tensor> LogicalOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Tensor x, functional::Cast(a, DType::kBool));
  ASSIGN_OR_RETURN(Tensor y, functional::Cast(b, DType::kBool));
  return Dispatch1(op, {x, y});
}
StatusOr<Tensor> BitwiseOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  if (IsFloating(a.dtype()) || IsFloating(b.dtype()))
    return TypeError("[%s] expected bool or integer tensors, got %s and %s", op.name,
                     a.meta_string(), b.meta_string());
  return PromotedOp(op, a, b);
}
StatusOr<Tensor> DivisionOp(const OpDef& op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::kBool && b.dtype() == DType::kBool)
    return TypeError("[%s] not supported for bool tensors (%s, %s)", op.name, a.meta_string(),
                     b.meta_string());
  return PromotedOp(op, a, b);
}

// In place, the promoted result must fit the target's category (no float into an integer tensor).
Status CheckInplaceResult(const char* op, const Tensor& a, const Tensor& b) {
  auto category = [](DType t) { return t == DType::kBool ? 0 : IsIntegral(t) ? 1 : 2; };
  if (category(b.dtype()) > category(a.dtype()))
    return TypeError("[%s] result type %s can't be cast to the desired output type %s", op,
                     DTypeLongName(b.dtype()), DTypeLongName(a.dtype()));
  return Status();
}

StatusOr<Tensor> ScalarOp(const OpDef& op, const Tensor& a, double s) {
  bool is_float = !std::isfinite(s) || s != std::floor(s);
  DType t = PromoteWithScalar(a.dtype(), is_float);
  ASSIGN_OR_RETURN(Tensor x, functional::Cast(a, t));
  return Dispatch1(op, {x}, {{"scalar", s}});
}

}  // namespace

namespace functional {

StatusOr<Tensor> Add(const Tensor& a, const Tensor& b, double alpha) {
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  // alpha defaults to 1 in the kernels, the gradient and the lowering: no attribute then.
  if (alpha == 1.0) return Dispatch1(kAdd, {ab.first, ab.second});
  return Dispatch1(kAdd, {ab.first, ab.second}, {{"alpha", alpha}});
}
StatusOr<Tensor> Sub(const Tensor& a, const Tensor& b, double alpha) {
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  return Dispatch1(kSub, {ab.first, ab.second}, {{"alpha", alpha}});
}
StatusOr<Tensor> Mul(const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  return Dispatch1(kMul, {ab.first, ab.second});
}
StatusOr<Tensor> Div(const Tensor& a, const Tensor& b) {
  // True division: integers divide as floats.
  Tensor x = a, y = b;
  if (!IsFloating(a.dtype()) && !IsFloating(b.dtype())) {
    ASSIGN_OR_RETURN(x, Cast(a, DType::kF32));
    ASSIGN_OR_RETURN(y, Cast(b, DType::kF32));
  }
  ASSIGN_OR_RETURN(auto ab, Promote(x, y));
  return Dispatch1(kDiv, {ab.first, ab.second});
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
StatusOr<Tensor> Maximum(const Tensor& a, const Tensor& b) {
  return PromotedOp(kMaximum, a, b);
}
StatusOr<Tensor> Minimum(const Tensor& a, const Tensor& b) {
  return PromotedOp(kMinimum, a, b);
}
StatusOr<Tensor> FloorDivide(const Tensor& a, const Tensor& b) {
  return DivisionOp(kFloorDivide, a, b);
}
StatusOr<Tensor> Remainder(const Tensor& a, const Tensor& b) {
  return DivisionOp(kRemainder, a, b);
}
StatusOr<Tensor> Fmod(const Tensor& a, const Tensor& b) {
  return DivisionOp(kFmod, a, b);
}

StatusOr<Tensor> Compare(CompareOp op, const Tensor& a, const Tensor& b) {
  return PromotedOp(kCompare[static_cast<int>(op)], a, b);
}
StatusOr<Tensor> CompareScalar(CompareOp op, const Tensor& a, double s) {
  return ScalarOp(kCompareScalar[static_cast<int>(op)], a, s);
}
StatusOr<Tensor> LogicalAnd(const Tensor& a, const Tensor& b) {
  return LogicalOp(kLogicalAnd, a, b);
}
StatusOr<Tensor> LogicalOr(const Tensor& a, const Tensor& b) {
  return LogicalOp(kLogicalOr, a, b);
}
StatusOr<Tensor> LogicalXor(const Tensor& a, const Tensor& b) {
  return LogicalOp(kLogicalXor, a, b);
}
StatusOr<Tensor> BitwiseAnd(const Tensor& a, const Tensor& b) {
  return BitwiseOp(kBitwiseAnd, a, b);
}
StatusOr<Tensor> BitwiseOr(const Tensor& a, const Tensor& b) {
  return BitwiseOp(kBitwiseOr, a, b);
}
StatusOr<Tensor> BitwiseXor(const Tensor& a, const Tensor& b) {
  return BitwiseOp(kBitwiseXor, a, b);
}

StatusOr<TensorList> PromoteOperands(const TensorList& ts) {
  auto category = [](DType t) { return t == DType::kBool ? 0 : IsIntegral(t) ? 1 : 2; };
  bool have_dim = false, have_zero = false;
  DType dim_t = DType::kBool, zero_t = DType::kBool;
  for (const Tensor& t : ts) {
    if (t.ndim() > 0) {
      dim_t = have_dim ? PromoteTypes(dim_t, t.dtype()) : t.dtype();
      have_dim = true;
    } else {
      zero_t = have_zero ? PromoteTypes(zero_t, t.dtype()) : t.dtype();
      have_zero = true;
    }
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
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  return DispatchInplace(kAdd, {a, y}, {{"alpha", alpha}}, a);
}
Status Mul_(const Tensor& a, const Tensor& b) {
  RETURN_IF_ERROR(CheckInplaceResult("mul_", a, b));
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  return DispatchInplace(kMul, {a, y}, {}, a);
}
Status Div_(const Tensor& a, const Tensor& b) {
  if (!IsFloating(a.dtype()))
    return TypeError("[div_] true division can't be written in place into %s", a.meta_string());
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  return DispatchInplace(kDiv, {a, y}, {}, a);
}
Status MulScalar_(const Tensor& a, double s) {
  return DispatchInplace(kMulScalar, {a}, {{"scalar", s}}, a);
}
Status AddScalar_(const Tensor& a, double s) {
  return DispatchInplace(kAddScalar, {a}, {{"scalar", s}}, a);
}

}  // namespace functional
}  // namespace oneflow_like
