// Loss family: nll_loss (class indices, optional class weights, ignore_index, label smoothing),
// cross_entropy = nll_loss(log_softmax(x, 1)), mse_loss, binary_cross_entropy_with_logits.
// Reductions: "mean" (nll: weighted mean over non-ignored targets), "sum", "none".
#pragma once
#include <string>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

struct NllOptions {
  Tensor weight;  // [C] or undefined
  int64_t ignore_index = -100;
  std::string reduction = "mean";
  double label_smoothing = 0.0;
};

// input: log-probabilities [N, C, d...] or [C]; target: integer class indices [N, d...] or [].
StatusOr<Tensor> NllLoss(const Tensor& input, const Tensor& target, const NllOptions& opt = {});
// target: class indices (integer) or class probabilities (same shape as input).
StatusOr<Tensor> CrossEntropy(const Tensor& input, const Tensor& target,
                              const NllOptions& opt = {});
StatusOr<Tensor> MseLoss(const Tensor& input, const Tensor& target,
                         const std::string& reduction = "mean");
// weight and pos_weight may be undefined; both broadcast to the input's shape.
StatusOr<Tensor> BinaryCrossEntropyWithLogits(const Tensor& input, const Tensor& target,
                                              const Tensor& weight, const Tensor& pos_weight,
                                              const std::string& reduction = "mean");

}  // namespace functional
}  // namespace oneflow_like
