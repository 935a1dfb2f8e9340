// Unary elementwise family: the functional entries of the ops declared in
// oneflow_like/opdefs/unary.def. Ops whose `api` column is gen/gen_ip/fn_only get a generated
// `Name(x, attrs = {})` (and `Name_(x, attrs = {})` in place); the others are declared below with
// their extra checks. Float-only ops raise TypeError on integer tensors; f16/bf16 inputs are
// computed in f32. In-place variants write into `x`; those whose gradient needs the input can't
// be differentiated in place (the version check in backward says so).
#pragma once
#include <optional>

#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/unary.h"

namespace oneflow_like {
namespace functional {

// clang-format off
#define OFL_UNARY_DECLARE_gen(Name, Attrs) \
  StatusOr<Tensor> Name(const Tensor& x, const opdefs::Attrs& attrs = {});
#define OFL_UNARY_DECLARE_gen_ip(Name, Attrs) \
  OFL_UNARY_DECLARE_gen(Name, Attrs) Status Name##_(const Tensor& x, const opdefs::Attrs& attrs = {});
#define OFL_UNARY_DECLARE_fn_only OFL_UNARY_DECLARE_gen_ip
#define OFL_UNARY_DECLARE_custom(Name, Attrs)
#define OFL_UNARY_DECLARE_special OFL_UNARY_DECLARE_gen
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) OFL_UNARY_DECLARE_##api(Name, Attrs)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
// clang-format on

// The table's `custom` ops (attribute defaults come from the table's structs).
StatusOr<Tensor> Gelu(const Tensor& x, const opdefs::GeluAttrs& attrs = {});
StatusOr<Tensor> LeakyRelu(const Tensor& x, const opdefs::LeakyReluAttrs& attrs = {});
StatusOr<Tensor> Elu(const Tensor& x, const opdefs::EluAttrs& attrs = {});
Status Elu_(const Tensor& x, const opdefs::EluAttrs& attrs = {});
StatusOr<Tensor> Softplus(const Tensor& x, const opdefs::SoftplusAttrs& attrs = {});  // beta != 0
// Scalar bounds; an absent bound is open. hardtanh = clamp on floats.
StatusOr<Tensor> Clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);
Status Clamp_(const Tensor& x, std::optional<double> min, std::optional<double> max);
StatusOr<Tensor> Hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Status Hardtanh_(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
StatusOr<Tensor> PowScalar(const Tensor& x, double exponent);  // x ** exponent
Status PowScalar_(const Tensor& x, double exponent);
StatusOr<Tensor> RPowScalar(const Tensor& x, double base);  // base ** x (float result)
StatusOr<Tensor> BitwiseNot(const Tensor& x);               // bool or integer
// Not in the table (bool output): any dtype -> bool.
StatusOr<Tensor> LogicalNot(const Tensor& x);
Status LogicalNot_(const Tensor& x);

}  // namespace functional
}  // namespace oneflow_like
