// Linear algebra family: matmul with NumPy semantics (1-D, 2-D, batched with broadcast batch
// dims), mm, bmm, addmm and linear. All run one op, "matmul": out = beta * bias + alpha * (a @ b)
// over operands of >= 2 dims; its kernel maps transposed views to BLAS transpose flags, so
// gradients (g @ b^T, a^T @ g) and linear's weight^T never copy.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

StatusOr<Tensor> Matmul(const Tensor& a, const Tensor& b);
StatusOr<Tensor> Mm(const Tensor& a, const Tensor& b);   // 2-D x 2-D
StatusOr<Tensor> Bmm(const Tensor& a, const Tensor& b);  // [B,M,K] x [B,K,N]
// beta * input + alpha * (m1 @ m2); `input` broadcasts to [M, N].
StatusOr<Tensor> Addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta = 1.0,
                       double alpha = 1.0);
// x @ weight^T + bias; weight is [out, in], bias (may be undefined) is [out].
StatusOr<Tensor> Linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace functional
}  // namespace oneflow_like
