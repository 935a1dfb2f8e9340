// NN miscellany: embedding (padding_idx; an index out of range fails the kernel's instruction,
// raised at the next sync), dropout (seeded per call from the device generator; backward
// regenerates the mask from the same seed), scaled_dot_product_attention (matmul + softmax). The
// ops, their attributes and the Python signatures are declared in oneflow_like/opdefs/nn_misc.def.
#pragma once
#include <optional>

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
// softmax(q k^T * scale + mask) v. mask: bool (true = attend) or additive float, broadcast to
// [..., L, S]; is_causal masks j > i. scale defaults to 1 / sqrt(E).
StatusOr<Tensor> ScaledDotProductAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           const Tensor& attn_mask = Tensor(),
                                           double dropout_p = 0.0,
                                           bool is_causal = opdefs::AttnBiasAttrs{}.is_causal,
                                           std::optional<double> scale = {});

}  // namespace functional
}  // namespace oneflow_like
