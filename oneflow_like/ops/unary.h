// Unary elementwise family: math, activations, rounding, logical not, scalar pow and clamp.
// Float-only ops raise TypeError on integer tensors; f16/bf16 inputs are computed in f32.
// In-place variants (Name_) write into `x`; those whose gradient needs the input can't be
// differentiated in place (the version check in backward says so).
#pragma once
#include <optional>

#include "oneflow_like/framework/op.h"

namespace oneflow_like {
namespace functional {

// Any numeric dtype.
StatusOr<Tensor> Neg(const Tensor& x);
StatusOr<Tensor> Abs(const Tensor& x);
StatusOr<Tensor> Square(const Tensor& x);
StatusOr<Tensor> Sign(const Tensor& x);   // no gradient
StatusOr<Tensor> Floor(const Tensor& x);  // no gradient; identity on integers
StatusOr<Tensor> Ceil(const Tensor& x);
StatusOr<Tensor> Round(const Tensor& x);  // half to even
StatusOr<Tensor> Relu(const Tensor& x);
StatusOr<Tensor> LeakyRelu(const Tensor& x, double negative_slope = 0.01);
// Scalar bounds; an absent bound is open. hardtanh = clamp on floats.
StatusOr<Tensor> Clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
StatusOr<Tensor> Hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
StatusOr<Tensor> PowScalar(const Tensor& x, double exponent);  // x ** exponent
StatusOr<Tensor> RPowScalar(const Tensor& x, double base);     // base ** x (float result)
// Any dtype -> bool / same integer type.
StatusOr<Tensor> LogicalNot(const Tensor& x);
StatusOr<Tensor> BitwiseNot(const Tensor& x);  // bool or integer

// Floating point only.
StatusOr<Tensor> Exp(const Tensor& x);
StatusOr<Tensor> Log(const Tensor& x);
StatusOr<Tensor> Log1p(const Tensor& x);
StatusOr<Tensor> Sqrt(const Tensor& x);
StatusOr<Tensor> Rsqrt(const Tensor& x);
StatusOr<Tensor> Sin(const Tensor& x);
StatusOr<Tensor> Cos(const Tensor& x);
StatusOr<Tensor> Tanh(const Tensor& x);
StatusOr<Tensor> Sigmoid(const Tensor& x);
StatusOr<Tensor> Gelu(const Tensor& x, bool tanh_approximation = false);
StatusOr<Tensor> Silu(const Tensor& x);
StatusOr<Tensor> Softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
StatusOr<Tensor> Elu(const Tensor& x, double alpha = 1.0);
StatusOr<Tensor> Erf(const Tensor& x);
StatusOr<Tensor> Reciprocal(const Tensor& x);

// In place (result written into x; its dtype must hold the result).
Status Neg_(const Tensor& x);
Status Abs_(const Tensor& x);
Status Square_(const Tensor& x);
Status Sign_(const Tensor& x);
Status Floor_(const Tensor& x);
Status Ceil_(const Tensor& x);
Status Round_(const Tensor& x);
Status Relu_(const Tensor& x);
Status Clamp_(const Tensor& x, std::optional<double> min, std::optional<double> max);
Status Hardtanh_(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Status PowScalar_(const Tensor& x, double exponent);
Status Exp_(const Tensor& x);
Status Log_(const Tensor& x);
Status Sqrt_(const Tensor& x);
Status Rsqrt_(const Tensor& x);
Status Sin_(const Tensor& x);
Status Cos_(const Tensor& x);
Status Tanh_(const Tensor& x);
Status Sigmoid_(const Tensor& x);
Status Elu_(const Tensor& x, double alpha = 1.0);
Status Reciprocal_(const Tensor& x);
Status LogicalNot_(const Tensor& x);

}  // namespace functional
}  // namespace oneflow_like
