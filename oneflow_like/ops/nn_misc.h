// NN miscellany: embedding (padding_idx; an index out of range fails the kernel's instruction,
// raised at the next sync), dropout (seeded per call from the device generator; backward
// regenerates the mask from the same seed), scaled_dot_product_attention (matmul + softmax). The
// ops, their attributes and the Python signatures are declared in oneflow_like/opdefs/nn_misc.def.
#pragma once
#include <optional>
#include <utility>

#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace functional {

// weight [V, D], indices (integer, any shape) -> [*indices.shape, D]. padding_idx rows get no
// gradient.
StatusOr<Tensor> Embedding(const Tensor& indices, const Tensor& weight,
                           std::optional<int64_t> padding_idx = {});
// Zeroes each element with probability p and scales the rest by 1 / (1 - p) when training.
StatusOr<Tensor> Dropout(const Tensor& x, double p, bool training = true);
// Which implementation ScaledDotProductAttention runs (torch.nn.attention.sdpa_kernel's choice,
// made in nn/functional.py): the fused op where the operands allow it, else the composite (kAuto);
// the composite only (kMath); the fused op or an error saying why not (kFused).
enum class SdpaBackend : int { kAuto = 0, kMath = 1, kFused = 2 };
// softmax(q k^T * scale + mask) v. mask: bool (true = attend) or additive float, broadcast to
// [..., L, S]; is_causal masks j > i. scale defaults to 1 / sqrt(E). enable_gqa: k/v may have
// fewer heads (dim -3) than q, a divisor of q's; query head h reads key/value head h / (H / Hk).
// The fused op (_scaled_dot_product_flash_attention) never materialises [..., L, S]; a float
// mask that requires grad goes to the composite. Fully masked rows (every key masked) give output
// 0 and no gradient on both paths, as PyTorch >= 2.5's SDPA does (_safe_softmax).
StatusOr<Tensor> ScaledDotProductAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const Tensor& attn_mask = Tensor(),
                                           double dropout_p = 0.0,
                                           bool is_causal = opdefs::AttnBiasAttrs{}.is_causal,
                                           std::optional<double> scale = {},
                                           bool enable_gqa = false,
                                           SdpaBackend backend = SdpaBackend::kAuto);
// The fused op itself (torch's aten._scaled_dot_product_flash_attention, its first two results):
// (out [..., L, Ev], lse [..., L], the rows' logsumexp of the scaled scores, f32 or f64).
StatusOr<std::pair<Tensor, Tensor>> FlashAttention(const Tensor& q, const Tensor& k,
                                                   const Tensor& v, double dropout_p = 0.0,
                                                   bool is_causal = false,
                                                   std::optional<double> scale = {});

}  // namespace functional
}  // namespace oneflow_like
