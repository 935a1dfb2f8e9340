// Binary elementwise family: arithmetic with NumPy broadcasting and type promotion, scalar
// variants that never materialise the scalar, comparisons and logical ops.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Add(const Tensor& a, const Tensor& b, double alpha = 1.0);
StatusOr<Tensor> Sub(const Tensor& a, const Tensor& b, double alpha = 1.0);
StatusOr<Tensor> Mul(const Tensor& a, const Tensor& b);
StatusOr<Tensor> Div(const Tensor& a, const Tensor& b);
StatusOr<Tensor> AddScalar(const Tensor& a, double s);   // a + s
StatusOr<Tensor> MulScalar(const Tensor& a, double s);   // a * s
StatusOr<Tensor> RSubScalar(const Tensor& a, double s);  // s - a
StatusOr<Tensor> RDivScalar(const Tensor& a, double s);  // s / a
// In place: a += alpha * b (used by optimizers and grad accumulation).
Status Add_(const Tensor& a, const Tensor& b, double alpha = 1.0);
Status Mul_(const Tensor& a, const Tensor& b);
Status MulScalar_(const Tensor& a, double s);
Status AddScalar_(const Tensor& a, double s);

}  // namespace functional
}  // namespace oneflow_like
