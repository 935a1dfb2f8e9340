// Creation family: full/zeros/ones, *_like, arange, linspace, eye, and host data -> tensor.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Full(const Shape& shape, double value, DType dtype, Device device);
StatusOr<Tensor> Zeros(const Shape& shape, DType dtype, Device device);
StatusOr<Tensor> Ones(const Shape& shape, DType dtype, Device device);
StatusOr<Tensor> FullLike(const Tensor& x, double value);
StatusOr<Tensor> ZerosLike(const Tensor& x);
StatusOr<Tensor> OnesLike(const Tensor& x);
// [start, end) in steps of `step` (size ceil((end - start) / step)).
StatusOr<Tensor> Arange(double start, double end, double step, DType dtype, Device device);
// `steps` points from start to end inclusive.
StatusOr<Tensor> Linspace(double start, double end, int64_t steps, DType dtype, Device device);
// n x m with ones on the diagonal (m < 0: m = n).
StatusOr<Tensor> Eye(int64_t n, int64_t m, DType dtype, Device device);
// x[...] = value, in place.
Status Fill_(const Tensor& x, double value);
// A tensor holding a copy of `data` (host memory, `shape` x `dtype`, contiguous).
StatusOr<Tensor> FromHost(const void* data, const Shape& shape, DType dtype, Device device);
// A CPU tensor over memory owned elsewhere (no copy); `keep_alive` is dropped when it is freed.
StatusOr<Tensor> WrapHost(void* data, const Shape& shape, DType dtype,
                          std::shared_ptr<void> keep_alive);
// Blocks until `x` is computed, then copies it (contiguous) into `dst`; raises the error of a
// failed producer.
Status CopyToHost(const Tensor& x, void* dst);

}  // namespace functional
}  // namespace oneflow_like
