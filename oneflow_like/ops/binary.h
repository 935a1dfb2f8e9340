// Binary elementwise family (oneflow_like/opdefs/binary.def): arithmetic with NumPy broadcasting
// and type promotion, scalar variants that never materialise the scalar, comparisons and logical
// ops. The table's entries of api promote / division / true_div / logical / bitwise are declared
// from it below; the rest (api custom) by hand.
#pragma once
#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/binary.h"

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

// Generated from the table: StatusOr<Tensor> Name(const Tensor& a, const Tensor& b) for
// Maximum, Minimum (NaN-propagating; at ties the gradient is split evenly, as in PyTorch),
// FloorDivide (floor(a / b), no gradient), Remainder (sign of b, Python's %), Fmod (sign of a,
// C's fmod) (integer division by zero fails the instruction, no SIGFPE), LogicalAnd/Or/Xor (truth
// values of any dtype -> bool), BitwiseAnd/Or/Xor (bool/integer tensors) and Xlogy (a * log(b),
// 0 where a == 0 and b is not NaN; integers compute in float32).
// clang-format off
#define OFL_BINARY_DECLARE_custom(Name)
#define OFL_BINARY_DECLARE_gen(Name) StatusOr<Tensor> Name(const Tensor& a, const Tensor& b);
#define OFL_BINARY_DECLARE_promote OFL_BINARY_DECLARE_gen
#define OFL_BINARY_DECLARE_division OFL_BINARY_DECLARE_gen
#define OFL_BINARY_DECLARE_true_div OFL_BINARY_DECLARE_gen
#define OFL_BINARY_DECLARE_special OFL_BINARY_DECLARE_gen
#define OFL_BINARY_DECLARE_logical OFL_BINARY_DECLARE_gen
#define OFL_BINARY_DECLARE_bitwise OFL_BINARY_DECLARE_gen
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, ...) OFL_BINARY_DECLARE_##api(Name)
#define OFL_BINARY_SCALAR(...)
#include "oneflow_like/opdefs/binary.def"
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on

// Comparisons: bool results, no gradient. Scalar variants compare in the tensor's dtype
// (an integer tensor against a fractional scalar compares in float32).
enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };
StatusOr<Tensor> Compare(CompareOp op, const Tensor& a, const Tensor& b);
StatusOr<Tensor> CompareScalar(CompareOp op, const Tensor& a, double s);

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
