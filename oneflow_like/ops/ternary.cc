// Ternary elementwise family: schemas, gradient formulas and functional entries.
// Kernels (kernels/cpu/ternary.cc) see value operands of one dtype and a bool condition, all
// broadcast to the output's shape.
#include "oneflow_like/ops/ternary.h"

#include <cmath>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {
namespace F = functional;

// Output: all inputs broadcast together; dtype of the last input (a value operand). Value
// operands from `first_value` on must share one dtype (promoted by the functional entry).
Status InferBroadcastAll(const char* op, size_t first_value, const TensorList& in,
                         std::vector<TensorMeta>* out) {
  Shape s = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) {
    ASSIGN_OR_RETURN(s, BroadcastShapes(op, s, in[i].shape()));
  }
  for (size_t i = first_value + 1; i < in.size(); ++i)
    if (in[i].dtype() != in[first_value].dtype())
      return TypeError("[%s] expected operands of one dtype after promotion, got %s and %s", op,
                       in[first_value].meta_string(), in[i].meta_string());
  out->push_back(TensorMeta{s, in.back().dtype(), in[0].device()});
  return Status();
}
#define OFL_INFER(name, first_value)                                       \
  [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) { \
    return InferBroadcastAll(name, first_value, in, out);                  \
  }

// where: the gradient flows to the branch that was taken.
const OpDef kWhere =
    OpSpec("where", OFL_INFER("where", 1))
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          TensorList r(3);
          if (c.needs_input_grad[1]) {
            ASSIGN_OR_RETURN(r[1], F::WhereScalarOther(c.inputs[0], c.grad_outputs[0], 0.0));
          }
          if (c.needs_input_grad[2]) {
            ASSIGN_OR_RETURN(r[2], F::WhereScalarInput(c.inputs[0], 0.0, c.grad_outputs[0]));
          }
          return r;
        })
        .StridedInputs()
        .SaveOutputs(false);
const OpDef kWhereScalarOther =
    OpSpec("where_scalar_other", OFL_INFER("where", 1))
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          TensorList r(2);
          ASSIGN_OR_RETURN(r[1], F::WhereScalarOther(c.inputs[0], c.grad_outputs[0], 0.0));
          return r;
        })
        .StridedInputs()
        .SaveOutputs(false);
const OpDef kWhereScalarInput =
    OpSpec("where_scalar_input", OFL_INFER("where", 1))
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          TensorList r(2);
          ASSIGN_OR_RETURN(r[1], F::WhereScalarInput(c.inputs[0], 0.0, c.grad_outputs[0]));
          return r;
        })
        .StridedInputs()
        .SaveOutputs(false);

// addcmul: d/dinput = g, d/dt1 = g * value * t2, d/dt2 = g * value * t1.
const OpDef kAddcmul = OpSpec("addcmul", OFL_INFER("addcmul", 0))
                           .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                             double v = c.attrs.Float("value", 1.0);
                             const Tensor& g = c.grad_outputs[0];
                             TensorList r{g, Tensor(), Tensor()};
                             ASSIGN_OR_RETURN(Tensor gv, F::MulScalar(g, v));
                             if (c.needs_input_grad[1]) {
                               ASSIGN_OR_RETURN(r[1], F::Mul(gv, c.inputs[2]));
                             }
                             if (c.needs_input_grad[2]) {
                               ASSIGN_OR_RETURN(r[2], F::Mul(gv, c.inputs[1]));
                             }
                             return r;
                           })
                           .StridedInputs()
                           .SaveOutputs(false);
// addcdiv: d/dt1 = g * value / t2, d/dt2 = -g * value * t1 / t2^2.
const OpDef kAddcdiv = OpSpec("addcdiv", OFL_INFER("addcdiv", 0))
                           .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                             double v = c.attrs.Float("value", 1.0);
                             const Tensor& g = c.grad_outputs[0];
                             TensorList r{g, Tensor(), Tensor()};
                             ASSIGN_OR_RETURN(Tensor gv, F::MulScalar(g, v));
                             ASSIGN_OR_RETURN(Tensor g1, F::Div(gv, c.inputs[2]));
                             if (c.needs_input_grad[1]) r[1] = g1;
                             if (c.needs_input_grad[2]) {
                               ASSIGN_OR_RETURN(Tensor q, F::Div(c.inputs[1], c.inputs[2]));
                               ASSIGN_OR_RETURN(Tensor t, F::Mul(g1, q));
                               ASSIGN_OR_RETURN(r[2], F::Neg(t));
                             }
                             return r;
                           })
                           .StridedInputs()
                           .SaveOutputs(false);
// lerp: d/dstart = g (1 - w), d/dend = g w, d/dw = g (end - start).
const OpDef kLerp = OpSpec("lerp", OFL_INFER("lerp", 0))
                        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                          const Tensor &g = c.grad_outputs[0], &s = c.inputs[0], &e = c.inputs[1],
                                       &w = c.inputs[2];
                          TensorList r(3);
                          if (c.needs_input_grad[0]) {
                            ASSIGN_OR_RETURN(Tensor omw, F::RSubScalar(w, 1.0));
                            ASSIGN_OR_RETURN(r[0], F::Mul(g, omw));
                          }
                          if (c.needs_input_grad[1]) {
                            ASSIGN_OR_RETURN(r[1], F::Mul(g, w));
                          }
                          if (c.needs_input_grad[2]) {
                            ASSIGN_OR_RETURN(Tensor d, F::Sub(e, s));
                            ASSIGN_OR_RETURN(r[2], F::Mul(g, d));
                          }
                          return r;
                        })
                        .StridedInputs()
                        .SaveOutputs(false);
const OpDef kLerpScalar = OpSpec("lerp_scalar", OFL_INFER("lerp", 0))
                              .Grad([](const GradContext& c) -> StatusOr<TensorList> {
                                double w = c.attrs.Float("weight");
                                TensorList r(2);
                                ASSIGN_OR_RETURN(r[0], F::MulScalar(c.grad_outputs[0], 1.0 - w));
                                ASSIGN_OR_RETURN(r[1], F::MulScalar(c.grad_outputs[0], w));
                                return r;
                              })
                              .StridedInputs()
                              .SaveInputs(false)
                              .SaveOutputs(false);

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

}  // namespace

namespace functional {

StatusOr<Tensor> Where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  ASSIGN_OR_RETURN(Tensor c, AsCondition(cond));
  ASSIGN_OR_RETURN(TensorList xy, PromoteOperands({x, y}));
  return Dispatch1(kWhere, {c, xy[0], xy[1]});
}
StatusOr<Tensor> WhereScalarOther(const Tensor& cond, const Tensor& x, double y) {
  ASSIGN_OR_RETURN(Tensor c, AsCondition(cond));
  ASSIGN_OR_RETURN(Tensor xv, WithScalar(x, y));
  return Dispatch1(kWhereScalarOther, {c, xv}, {{"scalar", y}});
}
StatusOr<Tensor> WhereScalarInput(const Tensor& cond, double x, const Tensor& y) {
  ASSIGN_OR_RETURN(Tensor c, AsCondition(cond));
  ASSIGN_OR_RETURN(Tensor yv, WithScalar(y, x));
  return Dispatch1(kWhereScalarInput, {c, yv}, {{"scalar", x}});
}

StatusOr<Tensor> Addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, double value) {
  ASSIGN_OR_RETURN(TensorList p, PromoteOperands({input, t1, t2}));
  return Dispatch1(kAddcmul, p, {{"value", value}});
}
StatusOr<Tensor> Addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, double value) {
  ASSIGN_OR_RETURN(TensorList p, PromoteOperands({input, t1, t2}));
  RETURN_IF_ERROR(CheckFloatOperands("addcdiv", p));
  return Dispatch1(kAddcdiv, p, {{"value", value}});
}
StatusOr<Tensor> Lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  ASSIGN_OR_RETURN(TensorList p, PromoteOperands({start, end, weight}));
  RETURN_IF_ERROR(CheckFloatOperands("lerp", p));
  return Dispatch1(kLerp, p);
}
StatusOr<Tensor> LerpScalar(const Tensor& start, const Tensor& end, double weight) {
  ASSIGN_OR_RETURN(TensorList p, PromoteOperands({start, end}));
  RETURN_IF_ERROR(CheckFloatOperands("lerp", p));
  return Dispatch1(kLerpScalar, p, {{"weight", weight}});
}

Status Addcmul_(const Tensor& input, const Tensor& t1, const Tensor& t2, double value) {
  ASSIGN_OR_RETURN(TensorList p, CastAllTo({t1, t2}, input.dtype()));
  return DispatchInplace(kAddcmul, {input, p[0], p[1]}, {{"value", value}}, input);
}
Status Addcdiv_(const Tensor& input, const Tensor& t1, const Tensor& t2, double value) {
  RETURN_IF_ERROR(CheckFloatOperands("addcdiv_", {input}));
  ASSIGN_OR_RETURN(TensorList p, CastAllTo({t1, t2}, input.dtype()));
  return DispatchInplace(kAddcdiv, {input, p[0], p[1]}, {{"value", value}}, input);
}
Status Lerp_(const Tensor& start, const Tensor& end, const Tensor& weight) {
  RETURN_IF_ERROR(CheckFloatOperands("lerp_", {start}));
  ASSIGN_OR_RETURN(TensorList p, CastAllTo({end, weight}, start.dtype()));
  return DispatchInplace(kLerp, {start, p[0], p[1]}, {}, start);
}
Status LerpScalar_(const Tensor& start, const Tensor& end, double weight) {
  RETURN_IF_ERROR(CheckFloatOperands("lerp_", {start}));
  ASSIGN_OR_RETURN(Tensor e, Cast(end, start.dtype()));
  return DispatchInplace(kLerpScalar, {start, e}, {{"weight", weight}}, start);
}

}  // namespace functional
}  // namespace oneflow_like
