// Loss family: nll_loss (class indices, optional class weights, ignore_index, label smoothing),
// cross_entropy = nll_loss(log_softmax(x, 1)), mse_loss, binary_cross_entropy_with_logits.
// Reductions: "mean" (nll: weighted mean over non-ignored targets), "sum", "none". The ops, their
// attributes (NllLossAttrs; the default reduction LossReductionAttrs) and the Python signatures are
// declared in oneflow_like/opdefs/loss.def.
#pragma once
#include <string>

#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/loss.h"

namespace oneflow_like {
namespace functional {

// The table's NllLossAttrs defaults (built once).
inline const opdefs::NllLossAttrs& NllDefaults() {
  static const opdefs::NllLossAttrs d;
  return d;
}
// The reduction the other losses default to: LossReductionAttrs' ("mean").
inline const char* DefaultReduction() {
  return opdefs::ReductionName(opdefs::LossReductionAttrs{}.reduction);
}

// nll_loss's attributes under their API spellings (reduction as "none" | "mean" | "sum"), with the
// table's defaults, plus the optional class weights.
struct NllOptions {
  Tensor weight;  // [C] or undefined
  int64_t ignore_index = NllDefaults().ignore_index;
  std::string reduction = opdefs::ReductionName(NllDefaults().reduction);
  double label_smoothing = NllDefaults().label_smoothing;
};

// input: log-probabilities [N, C, d...] or [C]; target: integer class indices [N, d...] or [].
StatusOr<Tensor> NllLoss(const Tensor& input, const Tensor& target, const NllOptions& opt = {});
// target: class indices (integer) or class probabilities (same shape as input).
StatusOr<Tensor> CrossEntropy(const Tensor& input, const Tensor& target,
                              const NllOptions& opt = {});
StatusOr<Tensor> MseLoss(const Tensor& input, const Tensor& target,
                         const std::string& reduction = DefaultReduction());
// weight and pos_weight may be undefined; both broadcast to the input's shape.
StatusOr<Tensor> BinaryCrossEntropyWithLogits(const Tensor& input, const Tensor& target,
                                              const Tensor& weight, const Tensor& pos_weight,
                                              const std::string& reduction = DefaultReduction());

}  // namespace functional
}  // namespace oneflow_like
