// NN miscellany: the OpDefs of oneflow_like/opdefs/nn_misc.def with their Run<Name> entries
// (generated below), the gradient formulas and the functional entries. Kernels:
// kernels/cpu/nn_misc.cc, kernels/cuda/nn_misc.*; dropout's lowering: lazy/lowering/nn_misc.cc.
#include "oneflow_like/ops/nn_misc.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

#include "oneflow_like/framework/autocast.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/common.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/reduce.h"
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
using opdefs::FlashAttnAttrs;

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

// _scaled_dot_product_flash_attention(q [..., H, L, E], k [..., Hk, S, E], v [..., Hk, S, Ev]
// [, mask]) -> (out [..., H, L, Ev] in q's dtype, lse [..., H, L]: f32, f64 for f64 inputs).
Status Infer_attn(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  const Tensor &q = in[0], &v = in[2];
  DimVector d = q.shape().dims();
  d.back() = v.dim(v.ndim() - 1);
  out->push_back(TensorMeta{Shape(d), q.dtype(), q.device()});
  d.pop_back();
  out->push_back(
      TensorMeta{Shape(d), q.dtype() == DType::kF64 ? DType::kF64 : DType::kF32, q.device()});
  return Status();
}
// The backward op (dout, q, k, v, out, lse [, mask]) -> (dq, dk, dv).
Status Infer_attn_grad(TensorSpan in, const AttrMap&, std::vector<TensorMeta>* out) {
  for (int i = 1; i <= 3; ++i)
    out->push_back(TensorMeta{in[i].shape(), in[i].dtype(), in[i].device()});
  return Status();
}

// The table's grad column: the formulas run the ops, so they are defined below them.
constexpr GradFn NoGrad = nullptr;
StatusOr<TensorList> EmbeddingGradFn(const GradContext& c);
StatusOr<TensorList> DropoutGradFn(const GradContext& c);
StatusOr<TensorList> FlashAttentionGradFn(const GradContext& c);

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
  if (declared == nullptr && (&Self == &kEmbeddingGrad || &Self == &kFlashAttentionBackward))
    return &ops::NoDoubleBackward<Self>;
  return declared;
}

// ---- the OpDefs and Run<Name> (generated from nn_misc.def) ------------------------------------
// Run<Name>(inputs, attrs) -> the output (a braced input list avoids a heap vector, as
// Dispatch1's).

#define OFL_NN_MISC_SAVE_IN_inputs true
#define OFL_NN_MISC_SAVE_OUT_inputs false
#define OFL_NN_MISC_SAVE_IN_none false
#define OFL_NN_MISC_SAVE_OUT_none false
#define OFL_NN_MISC_SAVE_IN_both true
#define OFL_NN_MISC_SAVE_OUT_both true
// Run<Name> returns the one output, or every output of the attention ops.
#define OFL_NN_MISC_RUN_rows OFL_DEFINE_RUN1
#define OFL_NN_MISC_RUN_weight_grad OFL_DEFINE_RUN1
#define OFL_NN_MISC_RUN_x OFL_DEFINE_RUN1
#define OFL_NN_MISC_RUN_bias OFL_DEFINE_RUN1
#define OFL_NN_MISC_RUN_attn OFL_DEFINE_RUN_ALL
#define OFL_NN_MISC_RUN_attn_grad OFL_DEFINE_RUN_ALL
// The kernels of the attention ops take f16/bf16 themselves (f32 accumulation).
#define OFL_NN_MISC_LOW_rows 0
#define OFL_NN_MISC_LOW_weight_grad 0
#define OFL_NN_MISC_LOW_x 0
#define OFL_NN_MISC_LOW_bias 0
#define OFL_NN_MISC_LOW_attn kLowPrecisionAll
#define OFL_NN_MISC_LOW_attn_grad kLowPrecisionAll
// clang-format off
#define OFL_ATTRS(...)
#define OFL_NN_MISC_API(...)
#define OFL_NN_MISC(name, Name, Attrs, out, grad, save)                      \
  const OpDef k##Name = OpSpec(#name, Infer_##out)                           \
                            .Grad(GradOrUnsupported<k##Name>(grad))          \
                            .SaveInputs(OFL_NN_MISC_SAVE_IN_##save)          \
                            .SaveOutputs(OFL_NN_MISC_SAVE_OUT_##save)        \
                            .LowPrecision(OFL_NN_MISC_LOW_##out);            \
  OFL_NN_MISC_RUN_##out(Name, Attrs)
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

using namespace functional;  // NOLINT: the composite attention is written with the functional ops

// Heads of k/v ([..., Hk, S, E]) repeated `g` times each ([..., Hk * g, S, E], head h reading
// h / g): grouped-query attention's key/value heads for the composite.
StatusOr<Tensor> RepeatHeads(const Tensor& t, int64_t g) {
  if (g == 1) return t;
  const int64_t n = t.ndim();
  ASSIGN_OR_RETURN(Tensor u, Unsqueeze(t, n - 2));
  DimVector d = u.shape().dims();
  d[n - 2] = g;
  ASSIGN_OR_RETURN(u, Expand(u, Shape(d)));
  DimVector r = t.shape().dims();
  r[n - 3] *= g;
  return Reshape(u, Shape(r));
}
// The reverse: the gradient of RepeatHeads, summing each group of `g` heads.
StatusOr<Tensor> SumHeads(const Tensor& t, int64_t g) {
  if (g == 1) return t;
  const int64_t n = t.ndim();
  DimVector d = t.shape().dims();
  d[n - 3] /= g;
  d.insert(d.begin() + (n - 2), g);
  ASSIGN_OR_RETURN(Tensor u, Reshape(t, Shape(d)));
  return Sum(u, {n - 2});
}

// The attention probabilities softmax(q k^T * scale + bias) of the composite, k's heads repeated.
StatusOr<Tensor> AttentionProbs(const Tensor& q, const Tensor& k, const Tensor& mask, double scale,
                                bool is_causal) {
  ASSIGN_OR_RETURN(Tensor kt, Transpose(k, k.ndim() - 2, k.ndim() - 1));
  ASSIGN_OR_RETURN(Tensor s, Matmul(q, kt));
  ASSIGN_OR_RETURN(s, MulScalar(s, scale));
  const bool bool_mask = mask.defined() && mask.dtype() == DType::kBool;
  if (mask.defined() && !bool_mask) {  // added as an op of its own: the mask gets its gradient
    ASSIGN_OR_RETURN(Tensor m, Cast(mask, s.dtype()));
    ASSIGN_OR_RETURN(s, Add(s, m));
  }
  if (bool_mask || is_causal) {
    TensorList ins{s};
    if (bool_mask) ins.push_back(mask);
    AttnBiasAttrs a;
    a.L = q.dim(q.ndim() - 2);
    a.S = k.dim(k.ndim() - 2);
    a.is_causal = is_causal;
    ASSIGN_OR_RETURN(Tensor bias, RunAttnBias(ins, a));
    ASSIGN_OR_RETURN(s, Add(s, bias));
  }
  if (!mask.defined()) return Softmax(s, -1);  // causal alone leaves key 0 to every row
  // PyTorch's _safe_softmax (torch >= 2.5): a row whose every score is -inf (fully masked)
  // gives probabilities 0, so output 0 and no gradient, instead of softmax's NaN; its scores are
  // zeroed first so that the softmax's gradient there is 0, not NaN.
  ASSIGN_OR_RETURN(Tensor top, Amax(s, {s.ndim() - 1}, true));
  ASSIGN_OR_RETURN(Tensor dead, CompareScalar(CompareOp::kEq, top, -INFINITY));
  ASSIGN_OR_RETURN(s, MaskedFill(s, dead, 0.0));
  ASSIGN_OR_RETURN(Tensor p, Softmax(s, -1));
  return MaskedFill(p, dead, 0.0);
}

// The fused op's gradient written with differentiable ops (double backward): P recomputed, its
// dropout mask regenerated from the op's seed (the same element indices), then
// dV = Pd^T dO, dPd = dO V^T, dP = dropout(dPd), dS = P (dP - rowsum(dP P)) * scale,
// dQ = dS K, dK = dS^T Q (grouped heads summed).
StatusOr<TensorList> FlashAttentionComposite(const Tensor& dout, const Tensor& q, const Tensor& k,
                                             const Tensor& v, const Tensor& mask,
                                             const FlashAttnAttrs& a) {
  const int64_t g = q.ndim() >= 3 ? q.dim(q.ndim() - 3) / k.dim(k.ndim() - 3) : 1;
  ASSIGN_OR_RETURN(Tensor kr, RepeatHeads(k, g));
  ASSIGN_OR_RETURN(Tensor vr, RepeatHeads(v, g));
  ASSIGN_OR_RETURN(Tensor p, AttentionProbs(q, kr, mask, a.scale, a.is_causal));
  DropoutAttrs da;
  da.p = a.dropout_p;
  da.seed = a.seed;
  Tensor pd = p;
  if (a.dropout_p > 0) {
    ASSIGN_OR_RETURN(pd, RunDropout({p}, da));
  }
  ASSIGN_OR_RETURN(Tensor pdt, Transpose(pd, pd.ndim() - 2, pd.ndim() - 1));
  ASSIGN_OR_RETURN(Tensor dv, Matmul(pdt, dout));
  ASSIGN_OR_RETURN(Tensor vt, Transpose(vr, vr.ndim() - 2, vr.ndim() - 1));
  ASSIGN_OR_RETURN(Tensor dp, Matmul(dout, vt));
  if (a.dropout_p > 0) {
    ASSIGN_OR_RETURN(dp, RunDropout({dp}, da));
  }
  ASSIGN_OR_RETURN(Tensor dpp, Mul(dp, p));
  ASSIGN_OR_RETURN(Tensor rows, Sum(dpp, {dpp.ndim() - 1}, true));
  ASSIGN_OR_RETURN(Tensor ds, Sub(dp, rows));
  ASSIGN_OR_RETURN(ds, Mul(ds, p));
  ASSIGN_OR_RETURN(ds, MulScalar(ds, a.scale));
  ASSIGN_OR_RETURN(Tensor dq, Matmul(ds, kr));
  ASSIGN_OR_RETURN(Tensor dst, Transpose(ds, ds.ndim() - 2, ds.ndim() - 1));
  ASSIGN_OR_RETURN(Tensor dk, Matmul(dst, q));
  ASSIGN_OR_RETURN(dk, SumHeads(dk, g));
  ASSIGN_OR_RETURN(dv, SumHeads(dv, g));
  return TensorList{dq, dk, dv};
}

// dq, dk, dv by the backward op (scores recomputed tile by tile from q, k, v, out, lse), or the
// composite when the gradient must itself be differentiable. The mask gets no gradient (the
// routing sends a float mask that requires grad to the composite path).
StatusOr<TensorList> FlashAttentionGradFn(const GradContext& c) {
  if (c.grad_outputs.size() > 1 && c.grad_outputs[1].defined())
    return Unimplemented(
        "[scaled_dot_product_attention] the gradient through the fused attention's logsumexp "
        "output is not implemented");
  const Tensor &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
  const Tensor mask = c.inputs.size() > 3 ? c.inputs[3] : Tensor();
  Tensor dout = c.grad_outputs[0];
  if (!dout.defined()) {
    ASSIGN_OR_RETURN(
        dout, functional::Zeros(c.outputs[0].shape(), c.outputs[0].dtype(), c.outputs[0].device()));
  }
  TensorList g;
  if (ops::DifferentiableBackward({dout, q, k, v})) {
    ASSIGN_OR_RETURN(g, FlashAttentionComposite(dout, q, k, v, mask,
                                                opdefs::ReadAttrs<FlashAttnAttrs>(c.attrs)));
  } else {
    TensorList ins{dout, q, k, v, c.outputs[0], c.outputs[1]};
    if (mask.defined()) ins.push_back(mask);
    ASSIGN_OR_RETURN(g, Dispatch(kFlashAttentionBackward, ins, c.attrs));
  }
  if (mask.defined()) g.push_back(Tensor());
  return g;
}

// Why the fused op cannot run these (already checked and cast) operands; empty when it can.
std::string FusedUnsupported(const Tensor& q, const Tensor& k, const Tensor& v,
                             const Tensor& mask) {
  DType t = q.dtype();
  if (t != DType::kF32 && t != DType::kF64 && t != DType::kBF16 && t != DType::kF16)
    return absl::StrCat("does not take ", DTypeName(t));
  if (q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return "does not take empty operands";
  if (q.device().type() == DeviceType::kCUDA) {
    // The CUDA kernels hold 8 head dims per lane (kAttnMaxHeadDim, kernels/cuda/
    // attention_launch.h); f64's staged tiles fit the shared memory up to 128.
    const int64_t most = t == DType::kF64 ? 128 : 256;
    if (q.dim(q.ndim() - 1) > most || v.dim(v.ndim() - 1) > most)
      return absl::StrCat("takes head dims up to ", most, " for ", DTypeName(t), " on cuda");
  }
  if (mask.defined() && mask.dtype() != DType::kBool && mask.requires_grad() && GradModeEnabled())
    return "gives no gradient to attn_mask (it requires grad)";
  return "";
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

namespace {

// The checked, autocast operands of an attention call, with k/v's head group (grouped-query
// attention: query head h reads key/value head h / group) and the broadcast batch shape.
struct AttnOperands {
  Tensor q, k, v, mask;
  int64_t group = 1;
  double scale = 1.0;
};

StatusOr<AttnOperands> PrepareAttention(const char* op, const Tensor& q0, const Tensor& k0,
                                        const Tensor& v0, const Tensor& mask0, double dropout_p,
                                        std::optional<double> scale, bool enable_gqa) {
  RETURN_IF_ERROR(CheckFloating(op, q0));
  if (q0.ndim() < 2 || k0.ndim() < 2 || v0.ndim() < 2 ||
      q0.dim(q0.ndim() - 1) != k0.dim(k0.ndim() - 1) ||
      k0.dim(k0.ndim() - 2) != v0.dim(v0.ndim() - 2))
    return InvalidArgument(
        "[%s] expected query [..., L, E], key [..., S, E], value [..., S, Ev], got %s, %s, %s", op,
        q0.meta_string(), k0.meta_string(), v0.meta_string());
  if (k0.dtype() != q0.dtype() || v0.dtype() != q0.dtype())
    return TypeError("[%s] expected query, key and value of one dtype, got %s, %s, %s", op,
                     q0.meta_string(), k0.meta_string(), v0.meta_string());
  if (k0.device() != q0.device() || v0.device() != q0.device())
    return InvalidArgument("[%s] expected query, key and value on one device, got %s, %s, %s", op,
                           q0.device().ToString(), k0.device().ToString(), v0.device().ToString());
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0))
    return InvalidArgument("[%s] dropout_p must be in [0, 1], got %g", op, dropout_p);
  if (mask0.defined() && mask0.dtype() != DType::kBool && !IsFloating(mask0.dtype()))
    return TypeError("[%s] expected a bool or floating attn_mask, got %s", op, mask0.meta_string());
  ASSIGN_OR_RETURN(TensorList a,
                   AutocastArgs("scaled_dot_product_attention", TensorList{q0, k0, v0, mask0}));
  AttnOperands r{a[0], a[1], a[2], a[3]};
  if (r.mask.defined() && r.mask.dtype() != DType::kBool && r.mask.dtype() != r.q.dtype()) {
    ASSIGN_OR_RETURN(r.mask, Cast(r.mask, r.q.dtype()));
  }
  const Tensor &q = r.q, &k = r.k, &v = r.v;
  if (enable_gqa && q.ndim() >= 3 && k.ndim() >= 3 && v.ndim() >= 3 &&
      (k.dim(k.ndim() - 3) != q.dim(q.ndim() - 3) || v.dim(v.ndim() - 3) != q.dim(q.ndim() - 3))) {
    int64_t h = q.dim(q.ndim() - 3), hk = k.dim(k.ndim() - 3), hv = v.dim(v.ndim() - 3);
    if (hk != hv || hk == 0 || h % hk != 0)
      return InvalidArgument(
          "[%s] enable_gqa expects the query's heads (dim -3) to be a multiple of the key's and "
          "value's, which must be equal; got query %s, key %s, value %s",
          op, q.meta_string(), k.meta_string(), v.meta_string());
    r.group = h / hk;
  }
  r.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.dim(q.ndim() - 1)));
  return r;
}

// Routing when both backends are enabled: on the CPU, bf16/f16 attention runs faster as the math
// composite (two oneDNN bf16 batched GEMMs, f32-accumulated, around the softmax) than as the
// fused op (f32 tiles through OpenBLAS: bench_attention.py, fwd+bwd 2-2.5x slower at L = 128 and
// 512), so the composite takes it while its [..., L, S] probabilities stay within
// kMathMaxScores elements (64 MiB in bf16); longer sequences keep the fused op's memory bound.
constexpr int64_t kMathMaxScores = int64_t{1} << 25;
bool MathFasterOnCpu(const AttnOperands& r) {
  const DType t = r.q.dtype();
  if (r.q.device().type() != DeviceType::kCPU || (t != DType::kBF16 && t != DType::kF16))
    return false;
  const int64_t rows = r.q.numel() / std::max<int64_t>(r.q.dim(r.q.ndim() - 1), 1);
  return rows * r.k.dim(r.k.ndim() - 2) <= kMathMaxScores;
}

// The fused op on broadcast operands: q, k, v expanded to one batch shape (k/v keep their head
// count under grouped-query attention), the mask given the output's rank. Returns (out, lse).
StatusOr<TensorList> RunFused(const char* op, const AttnOperands& r, double dropout_p,
                              bool is_causal) {
  const Tensor &q = r.q, &k = r.k, &v = r.v;
  auto batch = [](const Tensor& t) {
    DimVector d = t.shape().dims();
    d.resize(d.size() - 2);
    return d;
  };
  DimVector qb = batch(q), kb = batch(k), vb = batch(v);
  if (r.group > 1) {  // compare k/v's heads as the query's
    kb[kb.size() - 1] *= r.group;
    vb[vb.size() - 1] *= r.group;
  }
  ASSIGN_OR_RETURN(Shape b, BroadcastShapes(op, Shape(qb), Shape(kb)));
  ASSIGN_OR_RETURN(b, BroadcastShapes(op, b, Shape(vb)));
  auto with = [&](const Tensor& t, bool kv) {
    DimVector d = b.dims();
    if (kv && r.group > 1) d.back() /= r.group;
    d.push_back(t.dim(t.ndim() - 2));
    d.push_back(t.dim(t.ndim() - 1));
    return Shape(d);
  };
  TensorList ins(3);
  ASSIGN_OR_RETURN(ins[0], Expand(q, with(q, false)));
  ASSIGN_OR_RETURN(ins[1], Expand(k, with(k, true)));
  ASSIGN_OR_RETURN(ins[2], Expand(v, with(v, true)));
  if (r.mask.defined()) {
    DimVector full = b.dims();
    full.push_back(q.dim(q.ndim() - 2));
    full.push_back(k.dim(k.ndim() - 2));
    Status bad = InvalidArgument(
        "[%s] attn_mask %s is not broadcastable to the attention's [..., L, S] = %s", op,
        r.mask.meta_string(), Shape(full).ToString());
    if (r.mask.ndim() > static_cast<int64_t>(full.size())) return bad;
    StatusOr<Shape> bs = BroadcastShapes(op, r.mask.shape(), Shape(full));
    if (!bs.ok() || *bs != Shape(full)) return bad;
    DimVector md(full.size() - r.mask.ndim(), 1);
    for (int64_t d : r.mask.shape().dims()) md.push_back(d);
    ASSIGN_OR_RETURN(Tensor m, Reshape(r.mask, Shape(md)));
    ins.push_back(m);
  }
  FlashAttnAttrs a;
  a.scale = r.scale;
  a.is_causal = is_causal;
  a.dropout_p = dropout_p;
  a.seed = dropout_p > 0 ? static_cast<int64_t>(NextSeed(q.device())) : 0;
  return RunFlashAttention(ins, a);
}

}  // namespace

StatusOr<Tensor> ScaledDotProductAttention(const Tensor& query, const Tensor& key,
                                           const Tensor& value, const Tensor& attn_mask,
                                           double dropout_p, bool is_causal,
                                           std::optional<double> scale, bool enable_gqa,
                                           SdpaBackend backend) {
  const char* op = "scaled_dot_product_attention";
  ASSIGN_OR_RETURN(AttnOperands r, PrepareAttention(op, query, key, value, attn_mask, dropout_p,
                                                    scale, enable_gqa));
  if (backend == SdpaBackend::kAuto && MathFasterOnCpu(r)) backend = SdpaBackend::kMath;
  if (backend != SdpaBackend::kMath) {
    std::string why = FusedUnsupported(r.q, r.k, r.v, r.mask);
    if (why.empty()) {
      ASSIGN_OR_RETURN(TensorList outs, RunFused(op, r, dropout_p, is_causal));
      return outs[0];
    }
    if (backend == SdpaBackend::kFused)
      return InvalidArgument(
          "[%s] No available kernel: the fused attention (FLASH_ATTENTION / EFFICIENT_ATTENTION) "
          "%s (query %s on %s); enable SDPBackend.MATH",
          op, why, r.q.meta_string(), r.q.device().ToString());
  }
  ASSIGN_OR_RETURN(Tensor k, RepeatHeads(r.k, r.group));
  ASSIGN_OR_RETURN(Tensor v, RepeatHeads(r.v, r.group));
  ASSIGN_OR_RETURN(Tensor p, AttentionProbs(r.q, k, r.mask, r.scale, is_causal));
  if (dropout_p > 0) {
    ASSIGN_OR_RETURN(p, Dropout(p, dropout_p, true));
  }
  return Matmul(p, v);
}

StatusOr<std::pair<Tensor, Tensor>> FlashAttention(const Tensor& query, const Tensor& key,
                                                   const Tensor& value, double dropout_p,
                                                   bool is_causal, std::optional<double> scale) {
  const char* op = "_scaled_dot_product_flash_attention";
  ASSIGN_OR_RETURN(AttnOperands r,
                   PrepareAttention(op, query, key, value, Tensor(), dropout_p, scale, false));
  std::string why = FusedUnsupported(r.q, r.k, r.v, r.mask);
  if (!why.empty())
    return InvalidArgument("[%s] the fused attention %s (query %s)", op, why, r.q.meta_string());
  ASSIGN_OR_RETURN(TensorList outs, RunFused(op, r, dropout_p, is_causal));
  return std::make_pair(outs[0], outs[1]);
}

}  // namespace functional
}  // namespace oneflow_like
