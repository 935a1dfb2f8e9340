// Index family: index_select, gather, scatter/scatter_add, masked_fill/masked_select, nonzero,
// one_hot, and NumPy advanced indexing (index / index_put). Index tensors are int64 (int32 is
// cast); index values live in tensors, so out-of-range indices are found by the kernel, which
// fails its instruction with "[op] index 7 out of range for dim 1 of size 5" (raised at the next
// sync). In-place variants (trailing _) are not differentiable: they refuse tensors that
// require grad while grad mode is on.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> IndexSelect(const Tensor& x, int64_t dim, const Tensor& index);
// x with src's slices added at `index` along `dim` (out of place).
StatusOr<Tensor> IndexAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
StatusOr<Tensor> Gather(const Tensor& x, int64_t dim, const Tensor& index);
StatusOr<Tensor> Scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
StatusOr<Tensor> ScatterValue(const Tensor& x, int64_t dim, const Tensor& index, double value);
StatusOr<Tensor> ScatterAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Status Scatter_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Status ScatterValue_(const Tensor& x, int64_t dim, const Tensor& index, double value);
Status ScatterAdd_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

// mask is bool, broadcastable to x's shape.
StatusOr<Tensor> MaskedFill(const Tensor& x, const Tensor& mask, double value);
Status MaskedFill_(const Tensor& x, const Tensor& mask, double value);
StatusOr<Tensor> MaskedSelect(const Tensor& x, const Tensor& mask);
// [count, ndim] int64 coordinates of the non-zero elements (reads x on the host).
StatusOr<Tensor> Nonzero(const Tensor& x);
// int64 [..., num_classes]; num_classes < 0: max(index) + 1 (reads index on the host).
StatusOr<Tensor> OneHot(const Tensor& index, int64_t num_classes = -1);

// NumPy advanced indexing. `indices[i]` indexes x's dims from the left; an undefined entry is a
// full slice; a bool entry of m dims covers m dims (as its nonzero coordinates). Integer entries
// broadcast together; the result dims go where the first index was if the indexed dims are
// adjacent, else first.
StatusOr<Tensor> Index(const Tensor& x, const TensorList& indices);
// x[indices] = values (accumulate: +=), out of place / in place; values broadcast.
StatusOr<Tensor> IndexPut(const Tensor& x, const TensorList& indices, const Tensor& values,
                          bool accumulate = false);
Status IndexPut_(const Tensor& x, const TensorList& indices, const Tensor& values,
                 bool accumulate = false);

}  // namespace functional
}  // namespace oneflow_like
