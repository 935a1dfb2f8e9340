// Unary elementwise family: schemas, gradient formulas and functional entries.
// Kernels (kernels/cpu/unary.cc) see one dtype in and out (bool out for logical_not) and any
// input strides. Activations whose derivative costs more than one op have a dedicated backward
// op (<name>_grad(dy, saved)); those are linear in dy, so their own gradient is the same op.
#include "oneflow_like/ops/unary.h"

#include <cmath>
#include <limits>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"

namespace oneflow_like {
namespace {
namespace F = functional;

OpDef Def(const char* name, InferFn infer, GradFn grad, bool save_in, bool save_out) {
  OpDef d{name, infer, grad};
  d.strided_inputs = true;
  d.save_inputs = save_in;
  d.save_outputs = save_out;
  return d;
}

Status InferBool(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
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
#define OFL_BACKWARD_OP(var, name) \
  const OpDef var = Def(name, ops::InferSameAsInput, &LinearInDy<var>, /*in=*/true, /*out=*/false)

OFL_BACKWARD_OP(kReluGrad, "relu_grad");              // dy * (y > 0)
OFL_BACKWARD_OP(kSigmoidGrad, "sigmoid_grad");        // dy * y * (1 - y)
OFL_BACKWARD_OP(kTanhGrad, "tanh_grad");              // dy * (1 - y^2)
OFL_BACKWARD_OP(kRsqrtGrad, "rsqrt_grad");            // dy * -0.5 y^3
OFL_BACKWARD_OP(kReciprocalGrad, "reciprocal_grad");  // dy * -y^2
OFL_BACKWARD_OP(kEluGrad, "elu_grad");                // y > 0 ? dy : dy * (y + alpha)
OFL_BACKWARD_OP(kGeluGrad, "gelu_grad");              // from x; attr approximate
OFL_BACKWARD_OP(kSiluGrad, "silu_grad");              // from x
OFL_BACKWARD_OP(kSoftplusGrad, "softplus_grad");      // from x; attrs beta, threshold
OFL_BACKWARD_OP(kLeakyReluGrad, "leaky_relu_grad");   // from x; attr negative_slope
OFL_BACKWARD_OP(kErfGrad, "erf_grad");                // from x
OFL_BACKWARD_OP(kClampGrad, "clamp_grad");            // from x; dy where min <= x <= max
OFL_BACKWARD_OP(kPowScalarGrad, "pow_scalar_grad");   // from x; dy * p * x^(p-1)

// Gradient from a backward op fed with the saved output (kOut) or input (kIn).
enum Saved { kIn, kOut };
template <const OpDef& Bw, Saved S>
StatusOr<TensorList> ViaBackwardOp(const GradContext& c) {
  const Tensor& s = S == kOut ? c.outputs[0] : c.inputs[0];
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(Bw, {c.grad_outputs[0], s}, c.attrs));
  return TensorList{g};
}
#define OFL_ACTIVATION(var, name, Bw, S) \
  const OpDef var = Def(name, ops::InferSameAsInput, &ViaBackwardOp<Bw, S>, S == kIn, S == kOut)

OFL_ACTIVATION(kRelu, "relu", kReluGrad, kOut);
OFL_ACTIVATION(kSigmoid, "sigmoid", kSigmoidGrad, kOut);
OFL_ACTIVATION(kTanh, "tanh", kTanhGrad, kOut);
OFL_ACTIVATION(kRsqrt, "rsqrt", kRsqrtGrad, kOut);
OFL_ACTIVATION(kReciprocal, "reciprocal", kReciprocalGrad, kOut);
OFL_ACTIVATION(kElu, "elu", kEluGrad, kOut);
OFL_ACTIVATION(kGelu, "gelu", kGeluGrad, kIn);
OFL_ACTIVATION(kSilu, "silu", kSiluGrad, kIn);
OFL_ACTIVATION(kSoftplus, "softplus", kSoftplusGrad, kIn);
OFL_ACTIVATION(kLeakyRelu, "leaky_relu", kLeakyReluGrad, kIn);
OFL_ACTIVATION(kErf, "erf", kErfGrad, kIn);
OFL_ACTIVATION(kClamp, "clamp", kClampGrad, kIn);
OFL_ACTIVATION(kPowScalar, "pow_scalar", kPowScalarGrad, kIn);

// Ops whose gradient composes one or two functional ops.
#define OFL_GRAD(body)                                  \
  [](const GradContext& c) -> StatusOr<TensorList> {    \
    const Tensor& g = c.grad_outputs[0];                \
    [[maybe_unused]] const TensorList& in = c.inputs;   \
    [[maybe_unused]] const TensorList& out = c.outputs; \
    Tensor r;                                           \
    body;                                               \
    return TensorList{r};                               \
  }

const OpDef kNeg =
    Def("neg", ops::InferSameAsInput, OFL_GRAD(ASSIGN_OR_RETURN(r, F::Neg(g))), false, false);
const OpDef kExp = Def("exp", ops::InferSameAsInput,
                       OFL_GRAD(ASSIGN_OR_RETURN(r, F::Mul(g, out[0]))), false, true);
const OpDef kLog =
    Def("log", ops::InferSameAsInput, OFL_GRAD(ASSIGN_OR_RETURN(r, F::Div(g, in[0]))), true, false);
const OpDef kLog1p = Def("log1p", ops::InferSameAsInput, OFL_GRAD({
                           ASSIGN_OR_RETURN(Tensor xp1, F::AddScalar(in[0], 1.0));
                           ASSIGN_OR_RETURN(r, F::Div(g, xp1));
                         }),
                         true, false);
const OpDef kSqrt = Def("sqrt", ops::InferSameAsInput, OFL_GRAD({  // g / (2 y)
                          ASSIGN_OR_RETURN(Tensor h, F::MulScalar(g, 0.5));
                          ASSIGN_OR_RETURN(r, F::Div(h, out[0]));
                        }),
                        false, true);
const OpDef kSin = Def("sin", ops::InferSameAsInput, OFL_GRAD({
                         ASSIGN_OR_RETURN(Tensor cx, F::Cos(in[0]));
                         ASSIGN_OR_RETURN(r, F::Mul(g, cx));
                       }),
                       true, false);
const OpDef kCos = Def("cos", ops::InferSameAsInput, OFL_GRAD({
                         ASSIGN_OR_RETURN(Tensor sx, F::Sin(in[0]));
                         ASSIGN_OR_RETURN(Tensor gs, F::Mul(g, sx));
                         ASSIGN_OR_RETURN(r, F::Neg(gs));
                       }),
                       true, false);
const OpDef kAbs = Def("abs", ops::InferSameAsInput, OFL_GRAD({
                         ASSIGN_OR_RETURN(Tensor sx, F::Sign(in[0]));
                         ASSIGN_OR_RETURN(r, F::Mul(g, sx));
                       }),
                       true, false);
const OpDef kSquare = Def("square", ops::InferSameAsInput, OFL_GRAD({
                            ASSIGN_OR_RETURN(Tensor x2, F::MulScalar(in[0], 2.0));
                            ASSIGN_OR_RETURN(r, F::Mul(g, x2));
                          }),
                          true, false);
const OpDef kRPowScalar =
    Def("rpow_scalar", ops::InferSameAsInput, OFL_GRAD({  // g * y * log(base)
          ASSIGN_OR_RETURN(Tensor gy, F::Mul(g, out[0]));
          ASSIGN_OR_RETURN(r, F::MulScalar(gy, std::log(c.attrs.Float("scalar"))));
        }),
        false, true);

// Piecewise constant: no gradient (outputs don't require grad).
const OpDef kSign = Def("sign", ops::InferSameAsInput, nullptr, false, false);
const OpDef kFloor = Def("floor", ops::InferSameAsInput, nullptr, false, false);
const OpDef kCeil = Def("ceil", ops::InferSameAsInput, nullptr, false, false);
const OpDef kRound = Def("round", ops::InferSameAsInput, nullptr, false, false);
const OpDef kLogicalNot = Def("logical_not", InferBool, nullptr, false, false);
const OpDef kLogicalNotInplace = Def("logical_not", ops::InferSameAsInput, nullptr, false, false);
const OpDef kBitwiseNot = Def("bitwise_not", ops::InferSameAsInput, nullptr, false, false);

// f16/bf16 compute in f32 and cast back; integers are rejected by float-only ops.
StatusOr<Tensor> Run(const OpDef& op, const Tensor& x, const AttrMap& attrs = {},
                     bool float_only = false) {
  if (x.dtype() == DType::kF16 || x.dtype() == DType::kBF16) {
    ASSIGN_OR_RETURN(Tensor f, F::Cast(x, DType::kF32));
    ASSIGN_OR_RETURN(Tensor y, Dispatch1(op, {f}, attrs));
    return F::Cast(y, x.dtype());
  }
  if (float_only && !IsFloating(x.dtype()))
    return TypeError("[%s] expected a floating point tensor, got %s", op.name, x.meta_string());
  if (!float_only && x.dtype() == DType::kBool && &op != &kLogicalNot && &op != &kBitwiseNot)
    return TypeError("[%s] not supported for bool tensors (%s)", op.name, x.meta_string());
  return Dispatch1(op, {x}, attrs);
}
StatusOr<Tensor> RunFloat(const OpDef& op, const Tensor& x, const AttrMap& attrs = {}) {
  return Run(op, x, attrs, true);
}

Status RunInplace(const OpDef& op, const Tensor& x, const AttrMap& attrs = {},
                  bool float_only = false) {
  if (float_only && !IsFloating(x.dtype()))
    return TypeError("[%s_] expected a floating point tensor, got %s", op.name, x.meta_string());
  if (x.dtype() == DType::kF16 || x.dtype() == DType::kBF16) {
    ASSIGN_OR_RETURN(Tensor y, Run(op, x, attrs, float_only));
    return F::CopyInto(x, y);
  }
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

StatusOr<Tensor> Neg(const Tensor& x) {
  return Run(kNeg, x);
}
StatusOr<Tensor> Abs(const Tensor& x) {
  return Run(kAbs, x);
}
StatusOr<Tensor> Square(const Tensor& x) {
  return Run(kSquare, x);
}
StatusOr<Tensor> Sign(const Tensor& x) {
  return Run(kSign, x);
}
StatusOr<Tensor> Floor(const Tensor& x) {
  return Run(kFloor, x);
}
StatusOr<Tensor> Ceil(const Tensor& x) {
  return Run(kCeil, x);
}
StatusOr<Tensor> Round(const Tensor& x) {
  return Run(kRound, x);
}
StatusOr<Tensor> Relu(const Tensor& x) {
  return Run(kRelu, x);
}
StatusOr<Tensor> LeakyRelu(const Tensor& x, double slope) {
  return RunFloat(kLeakyRelu, x, {{"negative_slope", slope}});
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

StatusOr<Tensor> Exp(const Tensor& x) {
  return RunFloat(kExp, x);
}
StatusOr<Tensor> Log(const Tensor& x) {
  return RunFloat(kLog, x);
}
StatusOr<Tensor> Log1p(const Tensor& x) {
  return RunFloat(kLog1p, x);
}
StatusOr<Tensor> Sqrt(const Tensor& x) {
  return RunFloat(kSqrt, x);
}
StatusOr<Tensor> Rsqrt(const Tensor& x) {
  return RunFloat(kRsqrt, x);
}
StatusOr<Tensor> Sin(const Tensor& x) {
  return RunFloat(kSin, x);
}
StatusOr<Tensor> Cos(const Tensor& x) {
  return RunFloat(kCos, x);
}
StatusOr<Tensor> Tanh(const Tensor& x) {
  return RunFloat(kTanh, x);
}
StatusOr<Tensor> Sigmoid(const Tensor& x) {
  return RunFloat(kSigmoid, x);
}
StatusOr<Tensor> Gelu(const Tensor& x, bool tanh_approx) {
  return RunFloat(kGelu, x, {{"approximate", tanh_approx}});
}
StatusOr<Tensor> Silu(const Tensor& x) {
  return RunFloat(kSilu, x);
}
StatusOr<Tensor> Softplus(const Tensor& x, double beta, double threshold) {
  if (beta == 0)
    return InvalidArgument("[softplus] beta must be non-zero (input %s)", x.meta_string());
  return RunFloat(kSoftplus, x, {{"beta", beta}, {"threshold", threshold}});
}
StatusOr<Tensor> Elu(const Tensor& x, double alpha) {
  return RunFloat(kElu, x, {{"alpha", alpha}});
}
StatusOr<Tensor> Erf(const Tensor& x) {
  return RunFloat(kErf, x);
}
StatusOr<Tensor> Reciprocal(const Tensor& x) {
  return RunFloat(kReciprocal, x);
}

Status Neg_(const Tensor& x) {
  return RunInplace(kNeg, x);
}
Status Abs_(const Tensor& x) {
  return RunInplace(kAbs, x);
}
Status Square_(const Tensor& x) {
  return RunInplace(kSquare, x);
}
Status Sign_(const Tensor& x) {
  return RunInplace(kSign, x);
}
Status Floor_(const Tensor& x) {
  return RunInplace(kFloor, x);
}
Status Ceil_(const Tensor& x) {
  return RunInplace(kCeil, x);
}
Status Round_(const Tensor& x) {
  return RunInplace(kRound, x);
}
Status Relu_(const Tensor& x) {
  return RunInplace(kRelu, x);
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
Status Exp_(const Tensor& x) {
  return RunInplace(kExp, x, {}, true);
}
Status Log_(const Tensor& x) {
  return RunInplace(kLog, x, {}, true);
}
Status Sqrt_(const Tensor& x) {
  return RunInplace(kSqrt, x, {}, true);
}
Status Rsqrt_(const Tensor& x) {
  return RunInplace(kRsqrt, x, {}, true);
}
Status Sin_(const Tensor& x) {
  return RunInplace(kSin, x, {}, true);
}
Status Cos_(const Tensor& x) {
  return RunInplace(kCos, x, {}, true);
}
Status Tanh_(const Tensor& x) {
  return RunInplace(kTanh, x, {}, true);
}
Status Sigmoid_(const Tensor& x) {
  return RunInplace(kSigmoid, x, {}, true);
}
Status Elu_(const Tensor& x, double alpha) {
  return RunInplace(kElu, x, {{"alpha", alpha}}, true);
}
Status Reciprocal_(const Tensor& x) {
  return RunInplace(kReciprocal, x, {}, true);
}
Status LogicalNot_(const Tensor& x) {
  return RunInplace(kLogicalNotInplace, x);
}

}  // namespace functional
}  // namespace oneflow_like
