// Normalization family: batch_norm (training: batch statistics, running stats updated in
// place with momentum; eval: running statistics), layer_norm and group_norm, each with
// optional affine weight/bias. Backward ops take the saved mean and 1/std.
#pragma once
#include <optional>
#include <vector>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// x [N, C, *]; running_mean/var [C] (may be undefined in training); weight/bias [C] or undefined.
StatusOr<Tensor> BatchNorm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                           const Tensor& weight, const Tensor& bias, bool training, double momentum,
                           double eps);
// Normalises over the trailing dims `normalized_shape`; weight/bias of that shape or undefined.
StatusOr<Tensor> LayerNorm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                           const Tensor& weight, const Tensor& bias, double eps);
// x [N, C, *] in `num_groups` groups of channels; weight/bias [C] or undefined.
StatusOr<Tensor> GroupNorm(const Tensor& x, int64_t num_groups, const Tensor& weight,
                           const Tensor& bias, double eps);
// y = x / sqrt(mean(x^2 over `normalized_shape`) + eps) * weight (weight of that shape or
// undefined); eps unset: the machine epsilon of x's dtype (torch.nn.functional.rms_norm).
StatusOr<Tensor> RmsNorm(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                         const Tensor& weight, std::optional<double> eps);

}  // namespace functional
}  // namespace oneflow_like
