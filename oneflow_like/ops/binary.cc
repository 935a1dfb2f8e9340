// Binary elementwise family: schemas, gradient formulas and functional entries.
// Kernels see inputs of one dtype (promotion happens here) broadcast to the output's shape.
#include "oneflow_like/ops/binary.h"

#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {

Status InferBroadcast(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out, const char* op) {
  if (in[0].dtype() != in[1].dtype())
    return TypeError("[%s] expected inputs of one dtype after promotion, got %s and %s", op, in[0].meta_string(),
                     in[1].meta_string());
  ASSIGN_OR_RETURN(Shape s, BroadcastShapes(op, in[0].shape(), in[1].shape()));
  out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
  return Status();
}

#define OFL_BROADCAST_INFER(name)                                                             \
  [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {                  \
    return InferBroadcast(in, a, out, name);                                                   \
  }

// add(a, b; alpha): a + alpha * b
const OpDef kAdd{"add", OFL_BROADCAST_INFER("add"),
                 [](const GradContext& c) -> StatusOr<TensorList> {
                   const Tensor& g = c.grad_outputs[0];
                   double alpha = c.attrs.Float("alpha", 1.0);
                   Tensor gb = g;
                   if (c.needs_input_grad[1] && alpha != 1.0) { ASSIGN_OR_RETURN(gb, functional::MulScalar(g, alpha)); }
                   return TensorList{g, gb};
                 },
                 nullptr, true, false, /*save_inputs=*/false, /*save_outputs=*/false};

const OpDef kMul{"mul", OFL_BROADCAST_INFER("mul"),
                 [](const GradContext& c) -> StatusOr<TensorList> {
                   const Tensor& g = c.grad_outputs[0];
                   TensorList r(2);
                   if (c.needs_input_grad[0]) { ASSIGN_OR_RETURN(r[0], functional::Mul(g, c.inputs[1])); }
                   if (c.needs_input_grad[1]) { ASSIGN_OR_RETURN(r[1], functional::Mul(g, c.inputs[0])); }
                   return r;
                 },
                 nullptr, true, false, true, false};

const OpDef kDiv{"div", OFL_BROADCAST_INFER("div"),
                 [](const GradContext& c) -> StatusOr<TensorList> {
                   const Tensor& g = c.grad_outputs[0];
                   TensorList r(2);
                   if (c.needs_input_grad[0]) { ASSIGN_OR_RETURN(r[0], functional::Div(g, c.inputs[1])); }
                   if (c.needs_input_grad[1]) {  // -g * a / b^2
                     ASSIGN_OR_RETURN(Tensor q, functional::Div(c.inputs[0], c.inputs[1]));
                     ASSIGN_OR_RETURN(Tensor gq, functional::Mul(g, q));
                     ASSIGN_OR_RETURN(Tensor t, functional::Div(gq, c.inputs[1]));
                     ASSIGN_OR_RETURN(r[1], functional::Neg(t));
                   }
                   return r;
                 },
                 nullptr, true, false, true, false};

// Scalar variants: attr "scalar"; op = a*scalar, a+scalar, scalar-a, scalar/a.
const OpDef kMulScalar{"mul_scalar", ops::InferSameAsInput,
                       [](const GradContext& c) -> StatusOr<TensorList> {
                         ASSIGN_OR_RETURN(Tensor g, functional::MulScalar(c.grad_outputs[0], c.attrs.Float("scalar")));
                         return TensorList{g};
                       },
                       nullptr, true, false, false, false};
const OpDef kAddScalar{"add_scalar", ops::InferSameAsInput,
                       [](const GradContext& c) -> StatusOr<TensorList> { return TensorList{c.grad_outputs[0]}; },
                       nullptr, true, false, false, false};
const OpDef kRSubScalar{"rsub_scalar", ops::InferSameAsInput,
                        [](const GradContext& c) -> StatusOr<TensorList> {
                          ASSIGN_OR_RETURN(Tensor g, functional::Neg(c.grad_outputs[0]));
                          return TensorList{g};
                        },
                        nullptr, true, false, false, false};
const OpDef kRDivScalar{"rdiv_scalar", ops::InferSameAsInput,
                        [](const GradContext& c) -> StatusOr<TensorList> {  // d(s/a) = -s/a^2 = -out/a
                          ASSIGN_OR_RETURN(Tensor q, functional::Div(c.outputs[0], c.inputs[0]));
                          ASSIGN_OR_RETURN(Tensor g, functional::Mul(c.grad_outputs[0], q));
                          ASSIGN_OR_RETURN(Tensor n, functional::Neg(g));
                          return TensorList{n};
                        },
                        nullptr, true, false, true, true};

// Promotes both operands to their common dtype.
StatusOr<std::pair<Tensor, Tensor>> Promote(const Tensor& a, const Tensor& b) {
  DType t = PromoteTypes(a.dtype(), b.dtype());
  // A 0-dim tensor does not lift the category of a higher-dim one's dtype within a category.
  if (a.ndim() == 0 && b.ndim() > 0 && IsFloating(a.dtype()) == IsFloating(b.dtype())) t = b.dtype();
  if (b.ndim() == 0 && a.ndim() > 0 && IsFloating(a.dtype()) == IsFloating(b.dtype())) t = a.dtype();
  ASSIGN_OR_RETURN(Tensor x, functional::Cast(a, t));
  ASSIGN_OR_RETURN(Tensor y, functional::Cast(b, t));
  return std::make_pair(x, y);
}

StatusOr<Tensor> ScalarOp(const OpDef& op, const Tensor& a, double s) {
  bool is_float = s != static_cast<double>(static_cast<int64_t>(s));
  DType t = PromoteWithScalar(a.dtype(), is_float);
  ASSIGN_OR_RETURN(Tensor x, functional::Cast(a, t));
  return Dispatch1(op, {x}, {{"scalar", s}});
}

}  // namespace

namespace functional {

StatusOr<Tensor> Add(const Tensor& a, const Tensor& b, double alpha) {
  ASSIGN_OR_RETURN(auto ab, Promote(a, b));
  return Dispatch1(kAdd, {ab.first, ab.second}, {{"alpha", alpha}});
}
StatusOr<Tensor> Sub(const Tensor& a, const Tensor& b, double alpha) { return Add(a, b, -alpha); }
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
StatusOr<Tensor> AddScalar(const Tensor& a, double s) { return ScalarOp(kAddScalar, a, s); }
StatusOr<Tensor> MulScalar(const Tensor& a, double s) { return ScalarOp(kMulScalar, a, s); }
StatusOr<Tensor> RSubScalar(const Tensor& a, double s) { return ScalarOp(kRSubScalar, a, s); }
StatusOr<Tensor> RDivScalar(const Tensor& a, double s) {
  Tensor x = a;
  if (!IsFloating(a.dtype())) { ASSIGN_OR_RETURN(x, Cast(a, DType::kF32)); }
  return ScalarOp(kRDivScalar, x, s);
}

Status Add_(const Tensor& a, const Tensor& b, double alpha) {
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  return DispatchInplace(kAdd, {a, y}, {{"alpha", alpha}}, a);
}
Status Mul_(const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Tensor y, Cast(b, a.dtype()));
  return DispatchInplace(kMul, {a, y}, {}, a);
}
Status MulScalar_(const Tensor& a, double s) { return DispatchInplace(kMulScalar, {a}, {{"scalar", s}}, a); }
Status AddScalar_(const Tensor& a, double s) { return DispatchInplace(kAddScalar, {a}, {{"scalar", s}}, a); }

}  // namespace functional
}  // namespace oneflow_like
