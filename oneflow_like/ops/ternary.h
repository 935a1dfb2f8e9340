// Ternary elementwise family: where (with scalar branches), addcmul/addcdiv (the optimizers'
// fused updates) and lerp. All broadcast NumPy-style and promote like the binary family.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// cond ? x : y; a non-bool condition is tested against zero.
StatusOr<Tensor> Where(const Tensor& cond, const Tensor& x, const Tensor& y);
StatusOr<Tensor> WhereScalarOther(const Tensor& cond, const Tensor& x, double y);  // cond ? x : y
StatusOr<Tensor> WhereScalarInput(const Tensor& cond, double x, const Tensor& y);  // cond ? x : y
// input + value * t1 * t2 and input + value * t1 / t2.
StatusOr<Tensor> Addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2,
                         double value = 1.0);
StatusOr<Tensor> Addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2,
                         double value = 1.0);
// start + weight * (end - start).
StatusOr<Tensor> Lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
StatusOr<Tensor> LerpScalar(const Tensor& start, const Tensor& end, double weight);

// In place into `input` (its shape must hold the broadcast result; others are cast to its dtype).
Status Addcmul_(const Tensor& input, const Tensor& t1, const Tensor& t2, double value = 1.0);
Status Addcdiv_(const Tensor& input, const Tensor& t1, const Tensor& t2, double value = 1.0);
Status Lerp_(const Tensor& start, const Tensor& end, const Tensor& weight);
Status LerpScalar_(const Tensor& start, const Tensor& end, double weight);

}  // namespace functional
}  // namespace oneflow_like
