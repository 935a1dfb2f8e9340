// Scans and orderings along one dim: cumsum, cumprod, logcumsumexp, cummax/cummin, sort, argsort,
// topk, kthvalue. A 0-d input is treated as one element along dim 0 (or -1), as in PyTorch.
// Integer and bool cumsum/cumprod give int64; sort/topk keep the dtype and give int64 indices.
// NaN orders above every number (last ascending, first descending), as in PyTorch.
#pragma once
#include <optional>
#include <utility>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// Running sum / product along `dim`; `dtype` casts the input first (PyTorch's dtype=).
StatusOr<Tensor> Cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
StatusOr<Tensor> Cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// log(cumsum(exp(x))) computed stably (floating inputs).
StatusOr<Tensor> LogCumSumExp(const Tensor& x, int64_t dim);
// Running max / min with the index where it was attained (the last of equal values, as PyTorch).
StatusOr<std::pair<Tensor, Tensor>> Cummax(const Tensor& x, int64_t dim);
StatusOr<std::pair<Tensor, Tensor>> Cummin(const Tensor& x, int64_t dim);
// (values, indices) sorted along `dim`; equal values keep their order (always stable).
StatusOr<std::pair<Tensor, Tensor>> Sort(const Tensor& x, int64_t dim = -1,
                                         bool descending = false);
StatusOr<Tensor> Argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along `dim`, sorted by value (ties: lower index first).
StatusOr<std::pair<Tensor, Tensor>> Topk(const Tensor& x, int64_t k, int64_t dim = -1,
                                         bool largest = true, bool sorted = true);
// The k-th smallest (1-based) along `dim`, with its index.
StatusOr<std::pair<Tensor, Tensor>> Kthvalue(const Tensor& x, int64_t k, int64_t dim = -1,
                                             bool keepdim = false);

}  // namespace functional
}  // namespace oneflow_like
