// Normalization family: the OpDefs of oneflow_like/opdefs/norm.def (generated below), their
// gradient formulas and the functional entries. layer_norm and group_norm share one
// row-normalisation kernel (RowNormAttrs in norm.def). Kernels: kernels/cpu/norm.cc, kernels/cuda.
#include "oneflow_like/ops/norm.h"

#include <limits>
#include <string_view>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/norm.h"

namespace oneflow_like {
namespace {

using opdefs::BatchNormAttrs;
using opdefs::RmsNormAttrs;
using opdefs::RowNormAttrs;

// layer_norm's native bfloat16 CPU kernel takes float32 parameters with a bfloat16 input (torch's
// mixed-type layer_norm: autocast keeps the parameters in float32); functional::LayerNorm sends
// that pair nowhere else.
bool MixedBf16LayerNorm(const char* op, const Tensor& p, const Tensor& x) {
  return x.dtype() == DType::kBF16 && p.dtype() == DType::kF32 &&
         std::string_view(op) == "layer_norm";
}

Status CheckParam(const char* op, const Tensor& p, const char* what, const Tensor& x,
                  int64_t numel) {
  if (p.numel() != numel || (p.dtype() != x.dtype() && !MixedBf16LayerNorm(op, p, x)))
    return InvalidArgument("[%s] expected %s of %d elements and %s's dtype, got %s", op, what,
                           numel, x.meta_string(), p.meta_string());
  return Status();
}

// ---- the table's out column: every output in x's dtype ------------------------------------------

TensorMeta Like(const Tensor& x, Shape shape) {
  return TensorMeta{std::move(shape), x.dtype(), x.device()};
}

// layer_norm / group_norm(x [, w] [, b]) -> (y, mean [rows], rstd [rows]).
Status Infer_rows(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  auto a = opdefs::ReadAttrs<RowNormAttrs>(m);
  int64_t len = a.channels_per_group * a.inner;
  int64_t rows = len > 0 ? in[0].numel() / len : 0;
  // bfloat16 inputs (layer_norm's native CPU kernel) keep the statistics in float32.
  const DType stats = in[0].dtype() == DType::kBF16 ? DType::kF32 : in[0].dtype();
  *out = {Like(in[0], in[0].shape()), TensorMeta{Shape{rows}, stats, in[0].device()},
          TensorMeta{Shape{rows}, stats, in[0].device()}};
  return Status();
}
// *_norm_grad(dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]).
Status Infer_rows_grad(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const Tensor& x = in[1];
  auto a = opdefs::ReadAttrs<RowNormAttrs>(m);
  Shape naff{a.groups * a.channels_per_group};
  out->push_back(Like(x, x.shape()));
  // The parameters' gradients in the weight's dtype (float32 beside a bfloat16 x), else the
  // statistics' (RowNormGrad casts a bias gradient to the bias's dtype).
  const DType p = a.has_weight ? in[4].dtype() : in[2].dtype();
  if (a.has_weight) out->push_back(TensorMeta{naff, p, x.device()});
  if (a.has_bias) out->push_back(TensorMeta{naff, p, x.device()});
  return Status();
}
// batch_norm(x, w, b, running_mean, running_var) -> (y, mean, invstd, unbiased batch var).
Status Infer_channels(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  *out = {Like(x, x.shape()), Like(x, Shape{x.dim(1)}), Like(x, Shape{x.dim(1)}),
          Like(x, Shape{x.dim(1)})};
  return Status();
}
// batch_norm_grad(dy, x, w, mean, invstd) -> (dx, dw, db).
Status Infer_channels_grad(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& x = in[1];
  *out = {Like(x, x.shape()), Like(x, Shape{x.dim(1)}), Like(x, Shape{x.dim(1)})};
  return Status();
}
// rms_norm(x [, w]) -> (y, rstd [rows]).
Status Infer_rms_rows(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  int64_t len = opdefs::ReadAttrs<RmsNormAttrs>(m).len, rows = len > 0 ? in[0].numel() / len : 0;
  *out = {Like(in[0], in[0].shape()), Like(in[0], Shape{rows})};
  return Status();
}
// rms_norm_grad(dy, x, rstd [, w]) -> (dx [, dw]).
Status Infer_rms_grad(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const Tensor& x = in[1];
  out->push_back(Like(x, x.shape()));
  if (in.size() > 3) out->push_back(Like(x, Shape{opdefs::ReadAttrs<RmsNormAttrs>(m).len}));
  return Status();
}

#define OFL_NORM_SAVE_IN_both true
#define OFL_NORM_SAVE_OUT_both true
#define OFL_NORM_SAVE_IN_stats true
#define OFL_NORM_SAVE_OUT_stats true
#define OFL_NORM_SAVE_IN_inputs true
#define OFL_NORM_SAVE_OUT_inputs false
#define OFL_NORM_SAVE_IN_none false
#define OFL_NORM_SAVE_OUT_none false
// Outputs the formula never reads (OpSpec::UnreadOutputs): stats leaves y (output 0) unsaved.
#define OFL_NORM_UNREAD_both 0u
#define OFL_NORM_UNREAD_stats 1u
#define OFL_NORM_UNREAD_inputs 0u
#define OFL_NORM_UNREAD_none 0u
// clang-format off
#define OFL_ATTRS(...)
#define OFL_NORM(...)
#define OFL_NORM_API(...)
#define OFL_NORM_GRAD(name, Name, Attrs, out)                                               \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                                           \
                            .Grad(&ops::NoDoubleBackward<k##Name>)                           \
                            .SaveInputs(false)                                               \
                            .SaveOutputs(false);
#include "oneflow_like/opdefs/norm.def"
#undef OFL_NORM_GRAD
#undef OFL_NORM
// clang-format on

// ---- gradient formulas (the table's grad column) ---------------------------------------------

// Double backward: with grad mode on and something to differentiate, each formula recomputes the
// statistics from x and writes the gradients with differentiable ops (the saved mean/rstd outputs
// are not read: their own gradients would not reach x through this node's formula).
// In a view xv of x (gv: the gradient, wv: the weight broadcast in the view, or undefined) with
// normalized `dims`: xhat = (x - mean) * rstd (no centering for rms_norm) and
// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dxhat = g * w.
StatusOr<Tensor> NormBackwardComposite(const Tensor& xv, const Tensor& gv, const Tensor& wv,
                                       const std::vector<int64_t>& dims, double eps, bool center,
                                       Tensor* xhat) {
  namespace F = functional;
  Tensor xc = xv;
  if (center) {
    ASSIGN_OR_RETURN(Tensor mean, F::Mean(xv, dims, true));
    ASSIGN_OR_RETURN(xc, F::Sub(xv, mean));
  }
  ASSIGN_OR_RETURN(Tensor sq, F::Mul(xc, xc));
  ASSIGN_OR_RETURN(Tensor var, F::Mean(sq, dims, true));
  ASSIGN_OR_RETURN(Tensor ve, F::AddScalar(var, eps));
  ASSIGN_OR_RETURN(Tensor rstd, F::Rsqrt(ve));
  ASSIGN_OR_RETURN(*xhat, F::Mul(xc, rstd));
  Tensor dxhat = gv;
  if (wv.defined()) {
    ASSIGN_OR_RETURN(dxhat, F::Mul(gv, wv));
  }
  ASSIGN_OR_RETURN(Tensor dx_xhat, F::Mul(dxhat, *xhat));
  ASSIGN_OR_RETURN(Tensor m2, F::Mean(dx_xhat, dims, true));
  ASSIGN_OR_RETURN(Tensor proj, F::Mul(*xhat, m2));
  ASSIGN_OR_RETURN(Tensor t, F::Sub(dxhat, proj));
  if (center) {
    ASSIGN_OR_RETURN(Tensor m1, F::Mean(dxhat, dims, true));
    ASSIGN_OR_RETURN(t, F::Sub(t, m1));
  }
  return F::Mul(t, rstd);
}
// sum(t over `dims`) in `shape` (a parameter's gradient).
StatusOr<Tensor> SumAs(const Tensor& t, const std::vector<int64_t>& dims, const Shape& shape) {
  ASSIGN_OR_RETURN(Tensor s, functional::Sum(t, dims));
  return functional::Reshape(s, shape);
}

// layer_norm / group_norm: x viewed as [N, groups, channels_per_group, inner], normalized over
// the last two, the affine parameters per (group, channel).
StatusOr<TensorList> RowNormComposite(const GradContext& c) {
  namespace F = functional;
  const RowNormAttrs a = opdefs::ReadAttrs<RowNormAttrs>(c.attrs);
  const Tensor& x = c.inputs[0];
  const int64_t gc = a.groups * a.channels_per_group;
  const int64_t len = gc * a.inner;
  Shape view{len > 0 ? x.numel() / len : 0, a.groups, a.channels_per_group, a.inner};
  ASSIGN_OR_RETURN(Tensor xv, F::Reshape(x, view));
  ASSIGN_OR_RETURN(Tensor gv, F::Reshape(c.grad_outputs[0], view));
  Tensor wv;
  if (a.has_weight) {
    ASSIGN_OR_RETURN(wv, F::Reshape(c.inputs[1], Shape{1, a.groups, a.channels_per_group, 1}));
  }
  Tensor xhat;
  ASSIGN_OR_RETURN(Tensor dxv, NormBackwardComposite(xv, gv, wv, {2, 3}, a.eps, true, &xhat));
  TensorList r(c.inputs.size());
  ASSIGN_OR_RETURN(r[0], F::Reshape(dxv, x.shape()));
  size_t i = 1;
  if (a.has_weight) {
    ASSIGN_OR_RETURN(Tensor gx, F::Mul(gv, xhat));
    ASSIGN_OR_RETURN(r[i], SumAs(gx, {0, 3}, c.inputs[i].shape()));
    ++i;
  }
  if (a.has_bias) {
    ASSIGN_OR_RETURN(r[i], SumAs(gv, {0, 3}, c.inputs[i].shape()));
  }
  return r;
}

// batch_norm(x, w, b, running_mean, running_var): x viewed as [N, C, S]; training: batch
// statistics over N and S; eval: the running ones (constants).
StatusOr<TensorList> BatchNormComposite(const GradContext& c) {
  namespace F = functional;
  const BatchNormAttrs a = opdefs::ReadAttrs<BatchNormAttrs>(c.attrs);
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const int64_t ch = x.dim(1);
  const int64_t nc = x.dim(0) * ch;
  Shape view{x.dim(0), ch, nc > 0 ? x.numel() / nc : 0}, pview{1, ch, 1};
  ASSIGN_OR_RETURN(Tensor xv, F::Reshape(x, view));
  ASSIGN_OR_RETURN(Tensor gv, F::Reshape(c.grad_outputs[0], view));
  ASSIGN_OR_RETURN(Tensor wv, F::Reshape(w, pview));
  Tensor xhat, dxv;
  if (a.training) {
    ASSIGN_OR_RETURN(dxv, NormBackwardComposite(xv, gv, wv, {0, 2}, a.eps, true, &xhat));
  } else {
    ASSIGN_OR_RETURN(Tensor rm, F::Reshape(c.inputs[3].detach(), pview));
    ASSIGN_OR_RETURN(Tensor rv, F::Reshape(c.inputs[4].detach(), pview));
    ASSIGN_OR_RETURN(Tensor ve, F::AddScalar(rv, a.eps));
    ASSIGN_OR_RETURN(Tensor rstd, F::Rsqrt(ve));
    ASSIGN_OR_RETURN(Tensor xc, F::Sub(xv, rm));
    ASSIGN_OR_RETURN(xhat, F::Mul(xc, rstd));
    ASSIGN_OR_RETURN(Tensor gw, F::Mul(gv, wv));
    ASSIGN_OR_RETURN(dxv, F::Mul(gw, rstd));
  }
  TensorList r(c.inputs.size());
  ASSIGN_OR_RETURN(r[0], F::Reshape(dxv, x.shape()));
  ASSIGN_OR_RETURN(Tensor gx, F::Mul(gv, xhat));
  ASSIGN_OR_RETURN(r[1], SumAs(gx, {0, 2}, w.shape()));
  ASSIGN_OR_RETURN(r[2], SumAs(gv, {0, 2}, c.inputs[2].shape()));
  return r;
}

// rms_norm(x [, w]): x viewed as [rows, len], no centering.
StatusOr<TensorList> RmsNormComposite(const GradContext& c) {
  namespace F = functional;
  const RmsNormAttrs a = opdefs::ReadAttrs<RmsNormAttrs>(c.attrs);
  const Tensor& x = c.inputs[0];
  Shape view{a.len > 0 ? x.numel() / a.len : 0, a.len};
  ASSIGN_OR_RETURN(Tensor xv, F::Reshape(x, view));
  ASSIGN_OR_RETURN(Tensor gv, F::Reshape(c.grad_outputs[0], view));
  Tensor wv;
  if (c.inputs.size() > 1) {
    ASSIGN_OR_RETURN(wv, F::Reshape(c.inputs[1], Shape{1, a.len}));
  }
  Tensor xhat;
  ASSIGN_OR_RETURN(Tensor dxv, NormBackwardComposite(xv, gv, wv, {1}, a.eps, false, &xhat));
  TensorList r(c.inputs.size());
  ASSIGN_OR_RETURN(r[0], F::Reshape(dxv, x.shape()));
  if (c.inputs.size() > 1) {
    ASSIGN_OR_RETURN(Tensor gx, F::Mul(gv, xhat));
    ASSIGN_OR_RETURN(r[1], SumAs(gx, {0}, c.inputs[1].shape()));
  }
  return r;
}

// Whether the formula's result is to be differentiated (the gradient or an input requires grad).
bool Differentiable(const GradContext& c) {
  for (const Tensor& t : c.inputs)
    if (ops::DifferentiableBackward({t})) return true;
  return ops::DifferentiableBackward({c.grad_outputs[0]});
}

StatusOr<TensorList> RowNormGrad(const OpDef& grad_op, const GradContext& c) {
  if (Differentiable(c)) return RowNormComposite(c);
  TensorList ins{c.grad_outputs[0], c.inputs[0], c.outputs[1], c.outputs[2]};
  if (opdefs::ReadAttrs<RowNormAttrs>(c.attrs).has_weight) ins.push_back(c.inputs[1]);
  ASSIGN_OR_RETURN(TensorList g, Dispatch(grad_op, ins, c.attrs));
  // Affine grads come out flat; reshape to the parameters' shapes.
  TensorList r{g[0]};
  for (size_t i = 1; i < g.size(); ++i) {
    ASSIGN_OR_RETURN(Tensor t, functional::Reshape(g[i], c.inputs[i].shape()));
    if (t.dtype() != c.inputs[i].dtype()) {
      ASSIGN_OR_RETURN(t, functional::Cast(t, c.inputs[i].dtype()));
    }
    r.push_back(t);
  }
  return r;
}
StatusOr<TensorList> LayerNormGradFn(const GradContext& c) {
  return RowNormGrad(kLayerNormGrad, c);
}
StatusOr<TensorList> GroupNormGradFn(const GradContext& c) {
  return RowNormGrad(kGroupNormGrad, c);
}

// The running statistics get no gradient.
StatusOr<TensorList> BatchNormGradFn(const GradContext& c) {
  if (Differentiable(c)) {
    ASSIGN_OR_RETURN(TensorList r, BatchNormComposite(c));
    return TensorList{r[0], r[1], r[2], Tensor(), Tensor()};
  }
  ASSIGN_OR_RETURN(
      TensorList g,
      Dispatch(kBatchNormGrad,
               {c.grad_outputs[0], c.inputs[0], c.inputs[1], c.outputs[1], c.outputs[2]}, c.attrs));
  return TensorList{g[0], g[1], g[2], Tensor(), Tensor()};
}

StatusOr<TensorList> RmsNormGradFn(const GradContext& c) {
  if (Differentiable(c)) return RmsNormComposite(c);
  TensorList ins{c.grad_outputs[0], c.inputs[0], c.outputs[1]};
  if (c.inputs.size() > 1) ins.push_back(c.inputs[1]);
  ASSIGN_OR_RETURN(TensorList g, Dispatch(kRmsNormGrad, ins, c.attrs));
  TensorList r{g[0]};
  if (g.size() > 1) {
    ASSIGN_OR_RETURN(Tensor dw, functional::Reshape(g[1], c.inputs[1].shape()));
    r.push_back(dw);
  }
  return r;
}

// ---- the table's params column: the inputs after x --------------------------------------------

Status Check_affine(const char* op, TensorSpan in, const RowNormAttrs& a) {
  int64_t n = a.groups * a.channels_per_group;
  size_t i = 1;
  if (a.has_weight) RETURN_IF_ERROR(CheckParam(op, in[i++], "weight", in[0], n));
  if (a.has_bias) RETURN_IF_ERROR(CheckParam(op, in[i++], "bias", in[0], n));
  return Status();
}
Status Check_weight(const char* op, TensorSpan in, const RmsNormAttrs& a) {
  if (in.size() > 1) RETURN_IF_ERROR(CheckParam(op, in[1], "weight", in[0], a.len));
  return Status();
}
Status Check_channels(const char* op, TensorSpan in, const BatchNormAttrs&) {
  const char* names[] = {"weight", "bias", "running_mean", "running_var"};
  for (size_t i = 1; i < in.size(); ++i)
    RETURN_IF_ERROR(CheckParam(op, in[i], names[i - 1], in[0], in[0].dim(1)));
  return Status();
}

// clang-format off
#define OFL_NORM_GRAD(...)
#define OFL_NORM(name, Name, Attrs, out, grad, save, params)                                \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                                        \
                            .Grad(grad)                                                   \
                            .SaveInputs(OFL_NORM_SAVE_IN_##save)                          \
                            .SaveOutputs(OFL_NORM_SAVE_OUT_##save)                        \
                            .UnreadOutputs(OFL_NORM_UNREAD_##save);                       \
  StatusOr<TensorList> Run##Name(TensorSpan in, const opdefs::Attrs& a) {          \
    RETURN_IF_ERROR(CheckFloating(#name, in[0]));                                         \
    RETURN_IF_ERROR(Check_##params(#name, in, a));                                        \
    return Dispatch(k##Name, in, opdefs::ToAttrMap(a));                                   \
  }
#include "oneflow_like/opdefs/norm.def"
#undef OFL_NORM
#undef OFL_NORM_GRAD
#undef OFL_NORM_API
#undef OFL_ATTRS
// clang-format on

Status CheckNormalizedShape(const char* op, const Tensor& x,
                            const std::vector<int64_t>& normalized_shape, int64_t* len) {
  int64_t k = normalized_shape.size();
  bool ok = k <= x.ndim();
  *len = 1;
  for (int64_t i = 0; ok && i < k; ++i) {
    ok = x.dim(x.ndim() - k + i) == normalized_shape[i];
    *len *= normalized_shape[i];
  }
  if (ok) return Status();
  return InvalidArgument("[%s] normalized_shape %s does not match the trailing dims of input %s",
                         op, Shape(absl::MakeConstSpan(normalized_shape)).ToString(),
                         x.meta_string());
}

RowNormAttrs Affine(const Tensor& weight, const Tensor& bias, double eps) {
  RowNormAttrs a;
  a.eps = eps;
  a.has_weight = weight.defined();
  a.has_bias = bias.defined();
  return a;
}
// (x [, weight] [, bias]): the row norms' inputs.
TensorList AffineInputs(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  TensorList ins{x};
  if (weight.defined()) ins.push_back(weight);
  if (bias.defined()) ins.push_back(bias);
  return ins;
}

}  // namespace

namespace functional {

StatusOr<Tensor> RmsNorm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                         const Tensor& weight, std::optional<double> eps) {
  RmsNormAttrs a;
  RETURN_IF_ERROR(CheckNormalizedShape("rms_norm", x, normalized_shape, &a.len));
  // eps=None: the machine epsilon of x's dtype (PyTorch's default).
  a.eps = eps ? *eps
              : (x.dtype() == DType::kF64 ? std::numeric_limits<double>::epsilon()
                                          : std::numeric_limits<float>::epsilon());
  TensorList ins{x};
  if (weight.defined()) ins.push_back(weight);
  ASSIGN_OR_RETURN(TensorList outs, RunRmsNorm(ins, a));
  return outs[0];
}

StatusOr<Tensor> BatchNorm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                           const Tensor& weight, const Tensor& bias, bool training, double momentum,
                           double eps) {
  const char* op = "batch_norm";
  if (x.ndim() < 2)
    return InvalidArgument("[%s] expected input [N, C, *], got %s", op, x.meta_string());
  int64_t c = x.dim(1);
  if (training && x.numel() / c <= 1)
    return InvalidArgument(
        "[%s] expected more than 1 value per channel when training, got input %s", op,
        x.meta_string());
  if (!training && (!running_mean.defined() || !running_var.defined()))
    return InvalidArgument("[%s] running_mean and running_var are required in eval mode", op);
  Tensor w = weight, b = bias, rm = running_mean, rv = running_var;
  if (!w.defined()) {
    ASSIGN_OR_RETURN(w, Ones(Shape{c}, x.dtype(), x.device()));
  }
  if (!b.defined()) {
    ASSIGN_OR_RETURN(b, Zeros(Shape{c}, x.dtype(), x.device()));
  }
  if (!training) {
    ASSIGN_OR_RETURN(rm, Cast(running_mean, x.dtype()));
    ASSIGN_OR_RETURN(rv, Cast(running_var, x.dtype()));
  } else {
    rm = w;  // unread in training; any [C] tensor of x's dtype
    rv = w;
  }
  BatchNormAttrs a;
  a.training = training;
  a.eps = eps;
  ASSIGN_OR_RETURN(TensorList outs, RunBatchNorm({x, w, b, rm, rv}, a));
  if (training && running_mean.defined() && running_var.defined()) {
    NoGradGuard ng;
    RETURN_IF_ERROR(MulScalar_(running_mean, 1.0 - momentum));
    RETURN_IF_ERROR(Add_(running_mean, outs[1].detach(), momentum));
    RETURN_IF_ERROR(MulScalar_(running_var, 1.0 - momentum));
    RETURN_IF_ERROR(Add_(running_var, outs[3].detach(), momentum));
  }
  return outs[0];
}

StatusOr<Tensor> LayerNorm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                           const Tensor& weight, const Tensor& bias, double eps) {
  RowNormAttrs a = Affine(weight, bias, eps);
  RETURN_IF_ERROR(CheckNormalizedShape("layer_norm", x, normalized_shape, &a.channels_per_group));
  // A low-precision x with float32 parameters (autocast): bfloat16 on the CPU runs the native
  // mixed-type kernel (framework/autocast.cc kCpuBf16Ops); elsewhere x is computed in float32 and
  // the result cast back, as torch's layer_norm under autocast.
  const bool mixed = (x.dtype() == DType::kBF16 || x.dtype() == DType::kF16) &&
                     ((weight.defined() && weight.dtype() == DType::kF32) ||
                      (bias.defined() && bias.dtype() == DType::kF32));
  if (mixed &&
      !(x.dtype() == DType::kBF16 && x.device().is_cpu() && !x.is_lazy() && !TracingActive())) {
    ASSIGN_OR_RETURN(Tensor xf, Cast(x, DType::kF32));
    ASSIGN_OR_RETURN(TensorList outs, RunLayerNorm(AffineInputs(xf, weight, bias), a));
    return Cast(outs[0], x.dtype());
  }
  ASSIGN_OR_RETURN(TensorList outs, RunLayerNorm(AffineInputs(x, weight, bias), a));
  return outs[0];
}

StatusOr<Tensor> GroupNorm(const Tensor& x, int64_t num_groups, const Tensor& weight,
                           const Tensor& bias, double eps) {
  const char* op = "group_norm";
  if (x.ndim() < 2)
    return InvalidArgument("[%s] expected input [N, C, *], got %s", op, x.meta_string());
  int64_t c = x.dim(1);
  if (num_groups < 1 || c % num_groups != 0)
    return InvalidArgument("[%s] channels %d of input %s are not divisible by num_groups %d", op, c,
                           x.meta_string(), num_groups);
  RowNormAttrs a = Affine(weight, bias, eps);
  a.groups = num_groups;
  a.channels_per_group = c / num_groups;
  for (int64_t i = 2; i < x.ndim(); ++i) a.inner *= x.dim(i);
  ASSIGN_OR_RETURN(TensorList outs, RunGroupNorm(AffineInputs(x, weight, bias), a));
  return outs[0];
}

}  // namespace functional
}  // namespace oneflow_like
