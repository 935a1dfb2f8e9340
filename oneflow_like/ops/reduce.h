// Reduction family: sum, mean, prod, amax/amin, max/min (values and indices), argmax/argmin,
// var/std, norm, logsumexp, nansum, nanmedian over any dims with keepdim. `dims` empty = all dims.
// Floating inputs keep their dtype; integer/bool sums and products give int64; indices are int64.
#pragma once
#include <optional>
#include <utility>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Sum(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
StatusOr<Tensor> Mean(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// Sums broadcast dims away so the result has `shape` (the reverse of broadcasting).
StatusOr<Tensor> SumToShape(const Tensor& x, const Shape& shape);
StatusOr<Tensor> Prod(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// The extreme values; the gradient is shared evenly between ties (like PyTorch's amax).
StatusOr<Tensor> Amax(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
StatusOr<Tensor> Amin(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// (values, indices) along `dim`; the first index of the extreme (of the first NaN) wins, and
// the gradient flows to that index only.
StatusOr<std::pair<Tensor, Tensor>> MaxDim(const Tensor& x, int64_t dim, bool keepdim = false);
StatusOr<std::pair<Tensor, Tensor>> MinDim(const Tensor& x, int64_t dim, bool keepdim = false);
// max()/min() of every element (amax over all dims, named max/min in errors).
StatusOr<Tensor> Max(const Tensor& x);
StatusOr<Tensor> Min(const Tensor& x);
// No dim: the index into the flattened input.
StatusOr<Tensor> Argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt,
                        bool keepdim = false);
StatusOr<Tensor> Argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt,
                        bool keepdim = false);
// sum((x - mean)^2) / (N - correction); correction 1 = unbiased.
StatusOr<Tensor> Var(const Tensor& x, std::vector<int64_t> dims = {}, double correction = 1.0,
                     bool keepdim = false);
StatusOr<Tensor> Std(const Tensor& x, std::vector<int64_t> dims = {}, double correction = 1.0,
                     bool keepdim = false);
// Vector norm over `dims`: p = 2 ('fro'), 1, +-inf, 0 (count of non-zeros) or any other p.
StatusOr<Tensor> Norm(const Tensor& x, double p = 2.0, std::vector<int64_t> dims = {},
                      bool keepdim = false);
StatusOr<Tensor> LogSumExp(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// Sum with NaN counted as zero (sum(where(isnan(x), 0, x))); its gradient is zero at NaNs. Integer
// and bool inputs: Sum.
StatusOr<Tensor> NanSum(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// The lower median of the non-NaN values along `dim` (NaN where there are none) and its index;
// the gradient flows to that index. NanMedian: over the flattened input.
StatusOr<std::pair<Tensor, Tensor>> NanMedianDim(const Tensor& x, int64_t dim,
                                                 bool keepdim = false);
StatusOr<Tensor> NanMedian(const Tensor& x);

}  // namespace functional
}  // namespace oneflow_like
