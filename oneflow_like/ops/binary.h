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
StatusOr<Tensor> Pow(const Tensor& a, const Tensor& b);  // a ** b (integers: b >= 0)
// NaN-propagating; at ties the gradient is split evenly, as in PyTorch.
StatusOr<Tensor> Maximum(const Tensor& a, const Tensor& b);
StatusOr<Tensor> Minimum(const Tensor& a, const Tensor& b);
// Integer division by zero fails the instruction (no SIGFPE). No gradient for floor_divide.
StatusOr<Tensor> FloorDivide(const Tensor& a, const Tensor& b);  // floor(a / b)
StatusOr<Tensor> Remainder(const Tensor& a, const Tensor& b);    // sign of b (Python's %)
StatusOr<Tensor> Fmod(const Tensor& a, const Tensor& b);         // sign of a (C's fmod)

// Comparisons: bool results, no gradient. Scalar variants compare in the tensor's dtype
// (an integer tensor against a fractional scalar compares in float32).
enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };
StatusOr<Tensor> Compare(CompareOp op, const Tensor& a, const Tensor& b);
StatusOr<Tensor> CompareScalar(CompareOp op, const Tensor& a, double s);
// Logical ops on truth values of any dtype -> bool; bitwise ops on bool/integer tensors.
StatusOr<Tensor> LogicalAnd(const Tensor& a, const Tensor& b);
StatusOr<Tensor> LogicalOr(const Tensor& a, const Tensor& b);
StatusOr<Tensor> LogicalXor(const Tensor& a, const Tensor& b);
StatusOr<Tensor> BitwiseAnd(const Tensor& a, const Tensor& b);
StatusOr<Tensor> BitwiseOr(const Tensor& a, const Tensor& b);
StatusOr<Tensor> BitwiseXor(const Tensor& a, const Tensor& b);

// The operands cast to their common dtype: NumPy/PyTorch category rules, where 0-dim tensors
// only lift the category (bool < int < float) of dimensioned ones, never their width.
StatusOr<TensorList> PromoteOperands(const TensorList& ts);
// In place: a += alpha * b (used by optimizers and grad accumulation).
Status Add_(const Tensor& a, const Tensor& b, double alpha = 1.0);
Status Mul_(const Tensor& a, const Tensor& b);
Status Div_(const Tensor& a, const Tensor& b);
Status MulScalar_(const Tensor& a, double s);
Status AddScalar_(const Tensor& a, double s);

}  // namespace functional
}  // namespace oneflow_like
