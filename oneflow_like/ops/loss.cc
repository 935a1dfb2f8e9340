// Loss family: the OpDefs of oneflow_like/opdefs/loss.def with their Run<Name> entries (generated
// below), the gradient formulas and the functional entries. Kernels: kernels/cpu/loss.cc,
// kernels/cuda/loss.*.
#include "oneflow_like/ops/loss.h"

#include "oneflow_like/framework/autocast.h"

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/softmax.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/loss.h"

namespace oneflow_like {
namespace {

using opdefs::BceWithLogitsAttrs;
using opdefs::kReductionMean;
using opdefs::kReductionNone;
using opdefs::kReductionSum;
using opdefs::NllLossAttrs;

// A reduction's code from its API spelling (opdefs::ReductionName).
StatusOr<int64_t> ParseReduction(const char* op, const std::string& r) {
  for (int64_t code : {kReductionNone, kReductionMean, kReductionSum})
    if (r == opdefs::ReductionName(code)) return code;
  return InvalidArgument("[%s] reduction must be 'none', 'mean' or 'sum', got '%s'", op, r);
}

// ---- the table's out column ---------------------------------------------------------------------

// nll_loss(logp [N,C,d...], target [N,d...] (i64) [, weight [C]]) -> loss. Kernels fail on a
// target outside [0, C) other than ignore_index.
Status Infer_nll(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const NllLossAttrs a = opdefs::ReadAttrs<NllLossAttrs>(m);
  const Tensor &x = in[0], &t = in[1];
  bool batched = x.ndim() >= 2;
  Shape want_t;
  if (batched) {
    DimVector d{x.dim(0)};
    for (int64_t i = 2; i < x.ndim(); ++i) d.push_back(x.dim(i));
    want_t = Shape(d);
  }
  if (x.ndim() < 1 || t.shape() != want_t)
    return InvalidArgument("[nll_loss] expected target of shape %s for input %s, got %s",
                           want_t.ToString(), x.meta_string(), t.meta_string());
  int64_t c = batched ? x.dim(1) : x.dim(0);
  if (a.has_weight && (in[2].ndim() != 1 || in[2].dim(0) != c || in[2].dtype() != x.dtype()))
    return InvalidArgument("[nll_loss] expected weight of shape [%d] and dtype of %s, got %s", c,
                           x.meta_string(), in[2].meta_string());
  Shape s = a.reduction == kReductionNone ? t.shape() : Shape();
  out->push_back(TensorMeta{s, x.dtype(), x.device()});
  return Status();
}

// Elementwise (1 - y) x + (1 + (pw - 1) y) softplus(-x); inputs (x, y [, pw]) of one shape.
Status Infer_elementwise(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].shape() != in[0].shape() || in[i].dtype() != in[0].dtype())
      return InvalidArgument(
          "[binary_cross_entropy_with_logits] expected target/pos_weight like input %s, got %s",
          in[0].meta_string(), in[i].meta_string());
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  return Status();
}

// nll_loss_grad(dy, logp, target [, weight]) -> dlogp.
Status Infer_like_input(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  out->push_back(TensorMeta{in[1].shape(), in[1].dtype(), in[1].device()});
  return Status();
}
// bce_with_logits_grad(dy, x, y [, pw]) -> (dx, dy_target [, dpw]).
Status Infer_per_input(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  for (size_t i = 1; i < in.size(); ++i)
    out->push_back(TensorMeta{in[1].shape(), in[1].dtype(), in[1].device()});
  return Status();
}

#define OFL_LOSS_SAVE_IN_inputs true
#define OFL_LOSS_SAVE_OUT_inputs false
// clang-format off
#define OFL_ATTRS(...)
#define OFL_LOSS(...)
#define OFL_LOSS_API(...)
#define OFL_LOSS_GRAD(name, Name, Attrs, out) \
  extern const OpDef k##Name;                 \
  StatusOr<TensorList> Name##Double(const GradContext& c);
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS_GRAD
// The backward ops' own gradients (double backward) read their inputs: saved only when a backward
// with create_graph=True records them.
#define OFL_LOSS_GRAD(name, Name, Attrs, out) \
  const OpDef k##Name = OpSpec(#name, Infer_##out).Grad(&Name##Double).SaveOutputs(false);
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS_GRAD
#undef OFL_LOSS
// clang-format on

// ---- gradient formulas (the table's grad column) ------------------------------------------------

// The class weights get no gradient, nor do the targets.
StatusOr<TensorList> NllLossGradFn(const GradContext& c) {
  TensorList ins{c.grad_outputs[0], c.inputs[0], c.inputs[1]};
  if (opdefs::ReadAttrs<NllLossAttrs>(c.attrs).has_weight) ins.push_back(c.inputs[2]);
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNllLossGrad, ins, c.attrs));
  TensorList r(c.inputs.size());
  r[0] = g;
  return r;
}

// nll_loss is linear in logp (label smoothing too), so nll_loss_grad(dy, logp, target [, weight])
// is linear in dy and constant in logp: its gradient w.r.t. dy is nll_loss of the incoming one.
extern const OpDef kNllLoss;
StatusOr<TensorList> NllLossGradDouble(const GradContext& c) {
  TensorList ins{c.grad_outputs[0], c.inputs[2]};
  if (opdefs::ReadAttrs<NllLossAttrs>(c.attrs).has_weight) ins.push_back(c.inputs[3]);
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kNllLoss, ins, c.attrs));
  TensorList r(c.inputs.size());
  r[0] = g;
  return r;
}

// bce_with_logits_grad's own gradient is not implemented: the forward's gradient below uses
// differentiable ops whenever it is to be differentiated, so only a direct use gets here.
StatusOr<TensorList> BceWithLogitsGradDouble(const GradContext&) {
  return ops::DoubleBackwardUnsupported(kBceWithLogitsGrad.name);
}

// l = (1 - y) x + (1 + (pw - 1) y) softplus(-x): dl/dx = (1 - y) - (1 + (pw - 1) y) sigmoid(-x),
// dl/dy = (pw - 1) softplus(-x) - x, dl/dpw = y softplus(-x). The fused backward op on the
// first-order path; the same formulas with differentiable ops under create_graph=True.
StatusOr<TensorList> BceWithLogitsGradFn(const GradContext& c) {
  const Tensor& g = c.grad_outputs[0];
  const bool has_pw = c.inputs.size() > 2;
  const Tensor &x = c.inputs[0], &y = c.inputs[1], pw = has_pw ? c.inputs[2] : Tensor();
  if (!ops::DifferentiableBackward({g, x, y, pw})) {
    TensorList ins{g};
    ins.insert(ins.end(), c.inputs.begin(), c.inputs.end());
    return Dispatch(kBceWithLogitsGrad, ins, c.attrs);
  }
  namespace F = functional;
  ASSIGN_OR_RETURN(Tensor nx, F::Neg(x));
  ASSIGN_OR_RETURN(Tensor sp, F::Softplus(nx));
  ASSIGN_OR_RETURN(Tensor sg, F::Sigmoid(nx));
  Tensor coef = Tensor();  // 1 + (pw - 1) y
  if (has_pw) {
    ASSIGN_OR_RETURN(Tensor pm1, F::AddScalar(pw, -1.0));
    ASSIGN_OR_RETURN(Tensor t, F::Mul(pm1, y));
    ASSIGN_OR_RETURN(coef, F::AddScalar(t, 1.0));
  }
  ASSIGN_OR_RETURN(Tensor one_m_y, F::RSubScalar(y, 1.0));
  Tensor term = sg;
  if (has_pw) {
    ASSIGN_OR_RETURN(term, F::Mul(coef, sg));
  }
  ASSIGN_OR_RETURN(Tensor dx, F::Sub(one_m_y, term));
  TensorList r(c.inputs.size());
  if (c.needs_input_grad[0]) {
    ASSIGN_OR_RETURN(r[0], F::Mul(g, dx));
  }
  if (c.needs_input_grad[1]) {
    Tensor dy;
    if (has_pw) {
      ASSIGN_OR_RETURN(Tensor pm1, F::AddScalar(pw, -1.0));
      ASSIGN_OR_RETURN(Tensor t, F::Mul(pm1, sp));
      ASSIGN_OR_RETURN(dy, F::Sub(t, x));
    } else {
      ASSIGN_OR_RETURN(dy, F::Neg(x));
    }
    ASSIGN_OR_RETURN(r[1], F::Mul(g, dy));
  }
  if (has_pw && c.needs_input_grad[2]) {
    ASSIGN_OR_RETURN(Tensor ysp, F::Mul(y, sp));
    ASSIGN_OR_RETURN(r[2], F::Mul(g, ysp));
  }
  return r;
}

// The forward ops and Run<Name>(inputs, attrs).
// clang-format off
#define OFL_LOSS_GRAD(...)
#define OFL_LOSS(name, Name, Attrs, out, grad, save)                                 \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                                   \
                            .Grad(grad)                                              \
                            .SaveInputs(OFL_LOSS_SAVE_IN_##save)                     \
                            .SaveOutputs(OFL_LOSS_SAVE_OUT_##save);                  \
  OFL_DEFINE_RUN1(Name, Attrs)
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS
#undef OFL_LOSS_GRAD
#undef OFL_LOSS_API
#undef OFL_ATTRS
// clang-format on

StatusOr<Tensor> Reduce(const Tensor& loss, int64_t reduction) {
  if (reduction == kReductionMean) return functional::Mean(loss);
  if (reduction == kReductionSum) return functional::Sum(loss);
  return loss;
}

StatusOr<Tensor> IndexTarget(const char* op, const Tensor& target) {
  if (target.dtype() == DType::kI64) return target;
  if (target.dtype() == DType::kI32 || target.dtype() == DType::kU8 || target.dtype() == DType::kI8)
    return functional::Cast(target, DType::kI64);
  return TypeError("[%s] expected an integer class-index target, got %s", op, target.meta_string());
}

}  // namespace

namespace functional {

StatusOr<Tensor> NllLoss(const Tensor& input, const Tensor& target, const NllOptions& opt) {
  RETURN_IF_ERROR(CheckFloating("nll_loss", input));
  ASSIGN_OR_RETURN(int64_t red, ParseReduction("nll_loss", opt.reduction));
  ASSIGN_OR_RETURN(Tensor t, IndexTarget("nll_loss", target));
  if (opt.label_smoothing < 0.0 || opt.label_smoothing > 1.0)
    return InvalidArgument("[cross_entropy] label_smoothing must be in [0, 1], got %g",
                           opt.label_smoothing);
  NllLossAttrs a;
  a.reduction = red;
  a.ignore_index = opt.ignore_index;
  a.label_smoothing = opt.label_smoothing;
  a.has_weight = opt.weight.defined();
  TensorList ins{input, t};
  if (a.has_weight) ins.push_back(opt.weight);
  return RunNllLoss(ins, a);
}

StatusOr<Tensor> CrossEntropy(const Tensor& input_, const Tensor& target_, const NllOptions& opt) {
  // A composite: autocast's f32 list names it (PyTorch's cross_entropy_loss).
  ASSIGN_OR_RETURN(TensorList args, AutocastArgs("cross_entropy_loss", {input_, target_}));
  const Tensor &input = args[0], &target = args[1];
  RETURN_IF_ERROR(CheckFloating("cross_entropy", input));
  if (input.ndim() < 1)
    return InvalidArgument("[cross_entropy] expected input with a class dim, got %s",
                           input.meta_string());
  int64_t cdim = input.ndim() >= 2 ? 1 : 0;
  ASSIGN_OR_RETURN(Tensor logp, LogSoftmax(input, cdim));
  if (!IsFloating(target.dtype())) return NllLoss(logp, target, opt);
  // Class probabilities: -sum_c w_c p_c log q_c, with p smoothed towards uniform.
  if (target.shape() != input.shape())
    return InvalidArgument("[cross_entropy] probability target %s must match input %s",
                           target.meta_string(), input.meta_string());
  ASSIGN_OR_RETURN(int64_t red, ParseReduction("cross_entropy", opt.reduction));
  Tensor p = target;
  if (opt.label_smoothing > 0) {
    ASSIGN_OR_RETURN(p, MulScalar(target, 1.0 - opt.label_smoothing));
    ASSIGN_OR_RETURN(p, AddScalar(p, opt.label_smoothing / static_cast<double>(input.dim(cdim))));
  }
  ASSIGN_OR_RETURN(Tensor prod, Mul(logp, p));
  if (opt.weight.defined()) {
    DimVector ws(input.ndim(), 1);
    ws[cdim] = input.dim(cdim);
    ASSIGN_OR_RETURN(Tensor w, Reshape(opt.weight, Shape(ws)));
    ASSIGN_OR_RETURN(prod, Mul(prod, w));
  }
  ASSIGN_OR_RETURN(Tensor s, Sum(prod, {cdim}));
  ASSIGN_OR_RETURN(Tensor loss, Neg(s));
  return Reduce(loss, red);
}

StatusOr<Tensor> MseLoss(const Tensor& input_, const Tensor& target_,
                         const std::string& reduction) {
  ASSIGN_OR_RETURN(TensorList args, AutocastArgs("mse_loss", {input_, target_}));
  const Tensor &input = args[0], &target = args[1];
  RETURN_IF_ERROR(CheckFloating("mse_loss", input));
  ASSIGN_OR_RETURN(int64_t red, ParseReduction("mse_loss", reduction));
  if (input.shape() != target.shape())
    return InvalidArgument("[mse_loss] target %s must match input %s", target.meta_string(),
                           input.meta_string());
  ASSIGN_OR_RETURN(Tensor d, Sub(input, target));
  ASSIGN_OR_RETURN(Tensor sq, Mul(d, d));
  return Reduce(sq, red);
}

StatusOr<Tensor> BinaryCrossEntropyWithLogits(const Tensor& input, const Tensor& target,
                                              const Tensor& weight, const Tensor& pos_weight,
                                              const std::string& reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  RETURN_IF_ERROR(CheckFloating(op, input));
  ASSIGN_OR_RETURN(int64_t red, ParseReduction(op, reduction));
  if (target.shape() != input.shape())
    return InvalidArgument("[%s] target %s must match input %s", op, target.meta_string(),
                           input.meta_string());
  ASSIGN_OR_RETURN(Tensor y, Cast(target, input.dtype()));
  TensorList ins{input, y};
  if (pos_weight.defined()) {
    ASSIGN_OR_RETURN(Shape s, BroadcastShapes(op, pos_weight.shape(), input.shape()));
    if (s != input.shape())
      return InvalidArgument("[%s] pos_weight %s does not broadcast to input %s", op,
                             pos_weight.meta_string(), input.meta_string());
    ASSIGN_OR_RETURN(Tensor pw, Cast(pos_weight, input.dtype()));
    ASSIGN_OR_RETURN(pw, Expand(pw, input.shape()));
    ins.push_back(pw);
  }
  ASSIGN_OR_RETURN(Tensor loss, RunBceWithLogits(ins, BceWithLogitsAttrs{}));
  if (weight.defined()) {
    ASSIGN_OR_RETURN(loss, Mul(loss, weight));
  }
  return Reduce(loss, red);
}

}  // namespace functional
}  // namespace oneflow_like
