// Normalization family: schemas, gradient formulas and functional entries.
// layer_norm and group_norm share one row-normalisation kernel: x is `rows` rows of
// Cr * S elements; element j of row r uses affine index (r % G) * Cr + j / S
// (layer_norm: G = 1, Cr = row length, S = 1; group_norm: G groups, Cr = C / G, S = spatial).
#include "oneflow_like/ops/norm.h"

#include <limits>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"

namespace oneflow_like {
namespace {

Status CheckParam(const char* op, const Tensor& p, const char* what, const Tensor& x,
                  int64_t numel) {
  if (p.numel() != numel || p.dtype() != x.dtype())
    return InvalidArgument("[%s] expected %s of %d elements and %s's dtype, got %s", op, what,
                           numel, x.meta_string(), p.meta_string());
  return Status();
}

// ---- layer_norm / group_norm: inputs (x [, w] [, b]); outputs (y, mean [rows], rstd [rows]) ----

Status InferRowNorm(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  int64_t len = a.Int("channels_per_group") * a.Int("inner");
  int64_t rows = len > 0 ? in[0].numel() / len : 0;
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  out->push_back(TensorMeta{Shape{rows}, in[0].dtype(), in[0].device()});
  out->push_back(TensorMeta{Shape{rows}, in[0].dtype(), in[0].device()});
  return Status();
}

// row_norm_grad(dy, x, mean, rstd [, w]) -> (dx [, dw] [, db]).
Status InferRowNormGrad(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const Tensor& x = in[1];
  int64_t naff = a.Int("groups") * a.Int("channels_per_group");
  out->push_back(TensorMeta{x.shape(), x.dtype(), x.device()});
  if (a.Bool("has_weight")) out->push_back(TensorMeta{Shape{naff}, x.dtype(), x.device()});
  if (a.Bool("has_bias")) out->push_back(TensorMeta{Shape{naff}, x.dtype(), x.device()});
  return Status();
}

StatusOr<TensorList> RowNormGrad(const OpDef& grad_op, const GradContext& c) {
  TensorList ins{c.grad_outputs[0], c.inputs[0], c.outputs[1], c.outputs[2]};
  bool hw = c.attrs.Bool("has_weight");
  if (hw) ins.push_back(c.inputs[1]);
  ASSIGN_OR_RETURN(TensorList g, Dispatch(grad_op, ins, c.attrs));
  // Affine grads come out flat; reshape to the parameters' shapes.
  TensorList r{g[0]};
  for (size_t i = 1; i < g.size(); ++i) {
    ASSIGN_OR_RETURN(Tensor t, functional::Reshape(g[i], c.inputs[i].shape()));
    r.push_back(t);
  }
  return r;
}

const OpDef kLayerNormGrad =
    OpSpec("layer_norm_grad", InferRowNormGrad).SaveInputs(false).SaveOutputs(false);
const OpDef kGroupNormGrad =
    OpSpec("group_norm_grad", InferRowNormGrad).SaveInputs(false).SaveOutputs(false);

const OpDef kLayerNorm = OpSpec("layer_norm", InferRowNorm).Grad([](const GradContext& c) {
  return RowNormGrad(kLayerNormGrad, c);
});
const OpDef kGroupNorm = OpSpec("group_norm", InferRowNorm).Grad([](const GradContext& c) {
  return RowNormGrad(kGroupNormGrad, c);
});

// ---- batch_norm: inputs (x, w, b, running_mean, running_var) (missing ones filled in);
// outputs (y, mean, invstd, unbiased batch var) ----------------------------------------------

Status InferBatchNorm(const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor& x = in[0];
  Shape c{x.dim(1)};
  out->push_back(TensorMeta{x.shape(), x.dtype(), x.device()});
  for (int i = 0; i < 3; ++i) out->push_back(TensorMeta{c, x.dtype(), x.device()});
  return Status();
}

// batch_norm_grad(dy, x, w, mean, invstd) -> (dx, dw, db); attr "training".
const OpDef kBatchNormGrad =
    OpSpec("batch_norm_grad",
           [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
             const Tensor& x = in[1];
             out->push_back(TensorMeta{x.shape(), x.dtype(), x.device()});
             out->push_back(TensorMeta{Shape{x.dim(1)}, x.dtype(), x.device()});
             out->push_back(TensorMeta{Shape{x.dim(1)}, x.dtype(), x.device()});
             return Status();
           })
        .SaveInputs(false)
        .SaveOutputs(false);

const OpDef kBatchNorm =
    OpSpec("batch_norm", InferBatchNorm).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      ASSIGN_OR_RETURN(TensorList g, Dispatch(kBatchNormGrad,
                                              {c.grad_outputs[0], c.inputs[0], c.inputs[1],
                                               c.outputs[1], c.outputs[2]},
                                              c.attrs));
      return TensorList{g[0], g[1], g[2], Tensor(), Tensor()};
    });

// ---- rms_norm: inputs (x [, w]); outputs (y, rstd [rows]); attrs len (the row), eps ----------
// rms_norm_grad(dy, x, rstd [, w]) -> (dx [, dw]).
Status InferRmsNorm(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  int64_t len = a.Int("len"), rows = len > 0 ? in[0].numel() / len : 0;
  out->push_back(TensorMeta{in[0].shape(), in[0].dtype(), in[0].device()});
  out->push_back(TensorMeta{Shape{rows}, in[0].dtype(), in[0].device()});
  return Status();
}
Status InferRmsNormGrad(const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
  const Tensor& x = in[1];
  out->push_back(TensorMeta{x.shape(), x.dtype(), x.device()});
  if (in.size() > 3) out->push_back(TensorMeta{Shape{a.Int("len")}, x.dtype(), x.device()});
  return Status();
}
const OpDef kRmsNormGrad =
    OpSpec("rms_norm_grad", InferRmsNormGrad).SaveInputs(false).SaveOutputs(false);
const OpDef kRmsNorm =
    OpSpec("rms_norm", InferRmsNorm).Grad([](const GradContext& c) -> StatusOr<TensorList> {
      TensorList ins{c.grad_outputs[0], c.inputs[0], c.outputs[1]};
      if (c.inputs.size() > 1) ins.push_back(c.inputs[1]);
      ASSIGN_OR_RETURN(TensorList g, Dispatch(kRmsNormGrad, ins, c.attrs));
      TensorList r{g[0]};
      if (g.size() > 1) {
        ASSIGN_OR_RETURN(Tensor dw, functional::Reshape(g[1], c.inputs[1].shape()));
        r.push_back(dw);
      }
      return r;
    });

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

}  // namespace

namespace functional {

StatusOr<Tensor> RmsNorm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                         const Tensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm";
  RETURN_IF_ERROR(CheckFloating(op, x));
  int64_t len = 1;
  RETURN_IF_ERROR(CheckNormalizedShape(op, x, normalized_shape, &len));
  TensorList ins{x};
  if (weight.defined()) {
    RETURN_IF_ERROR(CheckParam(op, weight, "weight", x, len));
    ins.push_back(weight);
  }
  // eps=None: the machine epsilon of x's dtype (PyTorch's default).
  double e = eps ? *eps
                 : (x.dtype() == DType::kF64 ? std::numeric_limits<double>::epsilon()
                                             : std::numeric_limits<float>::epsilon());
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(kRmsNorm, ins, {{"len", len}, {"eps", e}}));
  return outs[0];
}

StatusOr<Tensor> BatchNorm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                           const Tensor& weight, const Tensor& bias, bool training, double momentum,
                           double eps) {
  const char* op = "batch_norm";
  RETURN_IF_ERROR(CheckFloating(op, x));
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
  RETURN_IF_ERROR(CheckParam(op, w, "weight", x, c));
  RETURN_IF_ERROR(CheckParam(op, b, "bias", x, c));
  RETURN_IF_ERROR(CheckParam(op, rm, "running_mean", x, c));
  RETURN_IF_ERROR(CheckParam(op, rv, "running_var", x, c));
  ASSIGN_OR_RETURN(TensorList outs,
                   Dispatch(kBatchNorm, {x, w, b, rm, rv}, {{"training", training}, {"eps", eps}}));
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
  const char* op = "layer_norm";
  RETURN_IF_ERROR(CheckFloating(op, x));
  int64_t len = 1;
  RETURN_IF_ERROR(CheckNormalizedShape(op, x, normalized_shape, &len));
  TensorList ins{x};
  if (weight.defined()) {
    RETURN_IF_ERROR(CheckParam(op, weight, "weight", x, len));
    ins.push_back(weight);
  }
  if (bias.defined()) {
    RETURN_IF_ERROR(CheckParam(op, bias, "bias", x, len));
    ins.push_back(bias);
  }
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(kLayerNorm, ins,
                                             {{"groups", int64_t(1)},
                                              {"channels_per_group", len},
                                              {"inner", int64_t(1)},
                                              {"eps", eps},
                                              {"has_weight", weight.defined()},
                                              {"has_bias", bias.defined()}}));
  return outs[0];
}

StatusOr<Tensor> GroupNorm(const Tensor& x, int64_t num_groups, const Tensor& weight,
                           const Tensor& bias, double eps) {
  const char* op = "group_norm";
  RETURN_IF_ERROR(CheckFloating(op, x));
  if (x.ndim() < 2)
    return InvalidArgument("[%s] expected input [N, C, *], got %s", op, x.meta_string());
  int64_t c = x.dim(1);
  if (num_groups < 1 || c % num_groups != 0)
    return InvalidArgument("[%s] channels %d of input %s are not divisible by num_groups %d", op, c,
                           x.meta_string(), num_groups);
  int64_t inner = 1;
  for (int64_t i = 2; i < x.ndim(); ++i) inner *= x.dim(i);
  TensorList ins{x};
  if (weight.defined()) {
    RETURN_IF_ERROR(CheckParam(op, weight, "weight", x, c));
    ins.push_back(weight);
  }
  if (bias.defined()) {
    RETURN_IF_ERROR(CheckParam(op, bias, "bias", x, c));
    ins.push_back(bias);
  }
  ASSIGN_OR_RETURN(TensorList outs, Dispatch(kGroupNorm, ins,
                                             {{"groups", num_groups},
                                              {"channels_per_group", c / num_groups},
                                              {"inner", inner},
                                              {"eps", eps},
                                              {"has_weight", weight.defined()},
                                              {"has_bias", bias.defined()}}));
  return outs[0];
}

}  // namespace functional
}  // namespace oneflow_like
