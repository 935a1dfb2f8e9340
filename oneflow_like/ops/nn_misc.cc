// NN miscellany: the OpDefs of oneflow_like/opdefs/nn_misc.def with their Run<Name> entries
// (generated below), the gradient formulas and the functional entries. Kernels:
// kernels/cpu/nn_misc.cc, kernels/cuda/nn_misc.*; dropout's lowering: lazy/lowering/nn_misc.cc.
#include "oneflow_like/ops/nn_misc.h"

#include <cmath>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/softmax.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace {

using opdefs::AttnBiasAttrs;
using opdefs::DropoutAttrs;
using opdefs::EmbeddingAttrs;
using opdefs::EmbeddingGradAttrs;

// ---- the table's out column ---------------------------------------------------------------------

// embedding(weight [V, D], indices (i64)) -> [*indices, D].
Status Infer_rows(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  DimVector d = in[1].shape().dims();
  d.push_back(in[0].dim(1));
  out->push_back(TensorMeta{Shape(d), in[0].dtype(), in[0].device()});
  return Status();
}
// embedding_grad(dy [*, D], indices; num_rows, padding_idx (-1: none)) -> dweight [V, D].
Status Infer_weight_grad(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const Tensor& dy = in[0];
  out->push_back(
      TensorMeta{Shape{opdefs::ReadAttrs<EmbeddingGradAttrs>(m).num_rows, dy.dim(dy.ndim() - 1)},
                 dy.dtype(), dy.device()});
  return Status();
}
// dropout(x; p, seed): x * keep(seed, i) / (1 - p).
Status Infer_x(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  return ops::InferSameAsInput(in, m, out);
}
// attn_bias(scores [, mask]; L, S, is_causal) -> additive bias [L, S] (or the mask's broadcast
// shape).
Status Infer_bias(TensorSpan in, const AttrMap& m, std::vector<TensorMeta>* out) {
  const AttnBiasAttrs a = opdefs::ReadAttrs<AttnBiasAttrs>(m);
  Shape s{a.L, a.S};
  if (in.size() > 1) {
    ASSIGN_OR_RETURN(s, BroadcastShapes("scaled_dot_product_attention", in[1].shape(), s));
  }
  out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
  return Status();
}

// The table's grad column: the formulas run the ops, so they are defined below them.
constexpr GradFn NoGrad = nullptr;
StatusOr<TensorList> EmbeddingGradFn(const GradContext& c);
StatusOr<TensorList> DropoutGradFn(const GradContext& c);

// Where the grad column says none: embedding_grad is the backward op of embedding, whose own
// gradient is not implemented, so a gradient required through it fails (double backward);
// attn_bias builds a mask bias (no gradient).
#define OFL_NN_MISC(name, Name, ...) extern const OpDef k##Name;
#define OFL_ATTRS(...)
#define OFL_NN_MISC_API(...)
#include "oneflow_like/opdefs/nn_misc.def"
#undef OFL_NN_MISC
#undef OFL_NN_MISC_API
#undef OFL_ATTRS
template <const OpDef& Self>
GradFn GradOrUnsupported(GradFn declared) {
  if (declared == nullptr && &Self == &kEmbeddingGrad) return &ops::NoDoubleBackward<Self>;
  return declared;
}

// ---- the OpDefs and Run<Name> (generated from nn_misc.def) ------------------------------------
// Run<Name>(inputs, attrs) -> the output (a braced input list avoids a heap vector, as
// Dispatch1's).

#define OFL_NN_MISC_SAVE_IN_inputs true
#define OFL_NN_MISC_SAVE_OUT_inputs false
#define OFL_NN_MISC_SAVE_IN_none false
#define OFL_NN_MISC_SAVE_OUT_none false
// clang-format off
#define OFL_ATTRS(...)
#define OFL_NN_MISC_API(...)
#define OFL_NN_MISC(name, Name, Attrs, out, grad, save)                      \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                           \
                            .Grad(GradOrUnsupported<k##Name>(grad))          \
                            .SaveInputs(OFL_NN_MISC_SAVE_IN_##save)          \
                            .SaveOutputs(OFL_NN_MISC_SAVE_OUT_##save);       \
  OFL_DEFINE_RUN1(Name, Attrs)
#include "oneflow_like/opdefs/nn_misc.def"
#undef OFL_NN_MISC
#undef OFL_NN_MISC_API
#undef OFL_ATTRS
// clang-format on

// ---- gradient formulas (the table's grad column) ------------------------------------------------

// The weight gets dy summed into its rows (padding_idx's none); the indices no gradient.
StatusOr<TensorList> EmbeddingGradFn(const GradContext& c) {
  EmbeddingGradAttrs a;
  a.padding_idx = opdefs::ReadAttrs<EmbeddingAttrs>(c.attrs).padding_idx;
  a.num_rows = c.inputs[0].dim(0);
  ASSIGN_OR_RETURN(Tensor g, RunEmbeddingGrad({c.grad_outputs[0], c.inputs[1]}, a));
  return TensorList{g, Tensor()};
}

// Linear in x, so its gradient is itself: dropout of dy with the same p and seed (the same mask).
StatusOr<TensorList> DropoutGradFn(const GradContext& c) {
  ASSIGN_OR_RETURN(Tensor g, Dispatch1(kDropout, {c.grad_outputs[0]}, c.attrs));
  return TensorList{g};
}

}  // namespace

namespace functional {

StatusOr<Tensor> Embedding(const Tensor& indices, const Tensor& weight,
                           std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  RETURN_IF_ERROR(CheckFloating(op, weight));
  if (weight.ndim() != 2)
    return InvalidArgument("[%s] expected a 2-d weight [rows, dim], got %s", op,
                           weight.meta_string());
  if (IsFloating(indices.dtype()) || indices.dtype() == DType::kBool)
    return TypeError("[%s] expected integer indices, got %s", op, indices.meta_string());
  ASSIGN_OR_RETURN(Tensor idx, Cast(indices, DType::kI64));
  EmbeddingAttrs a;  // padding_idx -1: none
  if (padding_idx) {
    int64_t v = weight.dim(0);
    if (*padding_idx < -v || *padding_idx >= v)
      return OutOfRange("[%s] padding_idx %d out of range for %d rows", op, *padding_idx, v);
    a.padding_idx = *padding_idx < 0 ? *padding_idx + v : *padding_idx;
  }
  return RunEmbedding({weight, idx}, a);
}

StatusOr<Tensor> Dropout(const Tensor& x, double p, bool training) {
  if (p < 0.0 || p > 1.0)
    return InvalidArgument("[dropout] probability must be in [0, 1], got %g", p);
  RETURN_IF_ERROR(CheckFloating("dropout", x));
  if (!training || p == 0.0) return x;
  DropoutAttrs a;
  a.p = p;
  a.seed = static_cast<int64_t>(NextSeed(x.device()));
  return RunDropout({x}, a);
}

StatusOr<Tensor> ScaledDotProductAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const Tensor& attn_mask, double dropout_p,
                                           bool is_causal, std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  RETURN_IF_ERROR(CheckFloating(op, q));
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2 || q.dim(q.ndim() - 1) != k.dim(k.ndim() - 1) ||
      k.dim(k.ndim() - 2) != v.dim(v.ndim() - 2))
    return InvalidArgument(
        "[%s] expected query [..., L, E], key [..., S, E], value [..., S, Ev], got %s, %s, %s", op,
        q.meta_string(), k.meta_string(), v.meta_string());
  int64_t L = q.dim(q.ndim() - 2), S = k.dim(k.ndim() - 2), E = q.dim(q.ndim() - 1);
  double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  ASSIGN_OR_RETURN(Tensor kt, Transpose(k, k.ndim() - 2, k.ndim() - 1));
  ASSIGN_OR_RETURN(Tensor s, Matmul(q, kt));
  ASSIGN_OR_RETURN(s, MulScalar(s, sc));
  if (attn_mask.defined() || is_causal) {
    TensorList ins{s};
    if (attn_mask.defined()) {
      Tensor m = attn_mask;
      if (m.dtype() != DType::kBool) {
        ASSIGN_OR_RETURN(m, Cast(m, s.dtype()));
      }
      ins.push_back(m);
    }
    AttnBiasAttrs a;
    a.L = L;
    a.S = S;
    a.is_causal = is_causal;
    ASSIGN_OR_RETURN(Tensor bias, RunAttnBias(ins, a));
    ASSIGN_OR_RETURN(s, Add(s, bias));
  }
  ASSIGN_OR_RETURN(Tensor p, Softmax(s, -1));
  if (dropout_p > 0) {
    ASSIGN_OR_RETURN(p, Dropout(p, dropout_p, true));
  }
  return Matmul(p, v);
}

}  // namespace functional
}  // namespace oneflow_like
