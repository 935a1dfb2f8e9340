// Shape family: views (reshape/view, expand, permute/transpose, squeeze/unsqueeze, flatten,
// slice/select/narrow, as_strided) and copies that change layout (cat, stack, split/chunk, pad,
// tril/triu, flip, roll, repeat). Views share the input's storage; their gradients scatter the
// upstream gradient back into a zero tensor of the input's shape (as_strided_scatter).
#pragma once
#include <string>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// Accepts one -1 entry. A view when `x` is contiguous, else a copy.
StatusOr<Tensor> Reshape(const Tensor& x, const Shape& shape);
StatusOr<Tensor> ReshapeInfer(const Tensor& x, const std::vector<int64_t>& shape);
StatusOr<Tensor> Expand(const Tensor& x, const Shape& shape);
StatusOr<Tensor> Permute(const Tensor& x, const std::vector<int64_t>& perm);
StatusOr<Tensor> Transpose(const Tensor& x, int64_t d0, int64_t d1);

// View ops (always views, any input strides).
StatusOr<Tensor> Squeeze(const Tensor& x,
                         std::vector<int64_t> dims = {});  // empty: every size-1 dim
StatusOr<Tensor> Unsqueeze(const Tensor& x, int64_t dim);
StatusOr<Tensor> Flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
// x[start:end:step] along `dim`; start/end are clamped like Python slices, step > 0.
StatusOr<Tensor> Slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
StatusOr<Tensor> Narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
// x[..., index, ...] (the dim is removed); negative index counts from the end.
StatusOr<Tensor> Select(const Tensor& x, int64_t dim, int64_t index);
// A view of contiguous `x` with explicit shape/strides/offset (elements, relative to x's offset).
StatusOr<Tensor> AsStrided(const Tensor& x, const Shape& shape, const DimVector& strides,
                           int64_t offset);
// zeros(shape) with `src` written into its as_strided(view_shape, strides, offset) view.
StatusOr<Tensor> AsStridedScatter(const Tensor& src, const Shape& shape, const DimVector& strides,
                                  int64_t offset);

// Copies.
StatusOr<Tensor> Cat(const TensorList& xs, int64_t dim);
StatusOr<Tensor> Stack(const TensorList& xs, int64_t dim);
StatusOr<TensorList> Split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
StatusOr<TensorList> SplitEvery(const Tensor& x, int64_t size, int64_t dim);  // chunks of `size`
StatusOr<TensorList> Chunk(const Tensor& x, int64_t chunks, int64_t dim);
StatusOr<TensorList> Unbind(const Tensor& x, int64_t dim);
StatusOr<Tensor> Repeat(const Tensor& x, const std::vector<int64_t>& repeats);
StatusOr<Tensor> Flip(const Tensor& x, const std::vector<int64_t>& dims);
StatusOr<Tensor> Roll(const Tensor& x, const std::vector<int64_t>& shifts,
                      const std::vector<int64_t>& dims);
StatusOr<Tensor> Tril(const Tensor& x, int64_t diagonal = 0);
StatusOr<Tensor> Triu(const Tensor& x, int64_t diagonal = 0);
// F.pad: `pads` = (last dim left, last dim right, 2nd-last left, ...); mode
// constant/reflect/replicate.
StatusOr<Tensor> Pad(const Tensor& x, const std::vector<int64_t>& pads,
                     const std::string& mode = "constant", double value = 0.0);

}  // namespace functional
}  // namespace oneflow_like
