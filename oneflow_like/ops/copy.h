// Copy family: contiguous, cast, in-place copy_, device transfer.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Contiguous(const Tensor& x);
StatusOr<Tensor> Cast(const Tensor& x, DType dtype);
// dst[...] = src (broadcast to dst's shape, cast to dst's dtype); dst may be a strided view.
Status CopyInto(const Tensor& dst, const Tensor& src);
StatusOr<Tensor> To(const Tensor& x, Device device);
StatusOr<Tensor> Clone(const Tensor& x);

}  // namespace functional
}  // namespace oneflow_like
