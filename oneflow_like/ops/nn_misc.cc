// NN miscellany: schemas, gradient formulas and functional entries.
#include "oneflow_like/ops/nn_misc.h"

#include <cmath>

#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/softmax.h"

namespace oneflow_like {
namespace {

// embedding_grad(dy [*, D], indices; num_rows, padding_idx (-1: none)) -> dweight [V, D].
const OpDef kEmbeddingGrad =
    OpSpec("embedding_grad",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             const Tensor& dy = in[0];
             out->push_back(TensorMeta{Shape{a.Int("num_rows"), dy.dim(dy.ndim() - 1)}, dy.dtype(),
                                       dy.device()});
             return Status();
           })
        .SaveInputs(false)
        .SaveOutputs(false);

// embedding(weight [V, D], indices (i64)) -> [*indices, D].
const OpDef kEmbedding =
    OpSpec("embedding",
           [](const TensorList& in, const AttrMap&, std::vector<TensorMeta>* out) {
             DimVector d = in[1].shape().dims();
             d.push_back(in[0].dim(1));
             out->push_back(TensorMeta{Shape(d), in[0].dtype(), in[0].device()});
             return Status();
           })
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          AttrMap a = c.attrs;
          a.Set("num_rows", c.inputs[0].dim(0));
          ASSIGN_OR_RETURN(Tensor g,
                           Dispatch1(kEmbeddingGrad, {c.grad_outputs[0], c.inputs[1]}, a));
          return TensorList{g, Tensor()};
        })
        .SaveOutputs(false);

// dropout(x; p, seed): x * keep(seed, i) / (1 - p). Linear in x, so its gradient is itself.
const OpDef kDropout =
    OpSpec("dropout", ops::InferSameAsInput)
        .Grad([](const GradContext& c) -> StatusOr<TensorList> {
          ASSIGN_OR_RETURN(Tensor g, Dispatch1(kDropout, {c.grad_outputs[0]}, c.attrs));
          return TensorList{g};
        })
        .SaveInputs(false)
        .SaveOutputs(false);

// attn_bias(q [, mask]; L, S, is_causal) -> additive bias [L, S] (or the mask's broadcast shape):
// -inf where a bool mask is false or (causal) j > i, plus a float mask's values.
const OpDef kAttnBias =
    OpSpec("attn_bias",
           [](const TensorList& in, const AttrMap& a, std::vector<TensorMeta>* out) {
             Shape s{a.Int("L"), a.Int("S")};
             if (in.size() > 1) {
               ASSIGN_OR_RETURN(s,
                                BroadcastShapes("scaled_dot_product_attention", in[1].shape(), s));
             }
             out->push_back(TensorMeta{s, in[0].dtype(), in[0].device()});
             return Status();
           })
        .SaveInputs(false)
        .SaveOutputs(false);

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
  int64_t pad = -1;
  if (padding_idx) {
    int64_t v = weight.dim(0);
    if (*padding_idx < -v || *padding_idx >= v)
      return OutOfRange("[%s] padding_idx %d out of range for %d rows", op, *padding_idx, v);
    pad = *padding_idx < 0 ? *padding_idx + v : *padding_idx;
  }
  return Dispatch1(kEmbedding, {weight, idx}, {{"padding_idx", pad}});
}

StatusOr<Tensor> Dropout(const Tensor& x, double p, bool training) {
  if (p < 0.0 || p > 1.0)
    return InvalidArgument("[dropout] probability must be in [0, 1], got %g", p);
  RETURN_IF_ERROR(CheckFloating("dropout", x));
  if (!training || p == 0.0) return x;
  uint64_t seed = NextSeed(x.device());
  return Dispatch1(kDropout, {x}, {{"p", p}, {"seed", static_cast<int64_t>(seed)}});
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
    ASSIGN_OR_RETURN(Tensor bias,
                     Dispatch1(kAttnBias, ins, {{"L", L}, {"S", S}, {"is_causal", is_causal}}));
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
