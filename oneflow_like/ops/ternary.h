// Ternary elementwise family (oneflow_like/opdefs/ternary.def): where (with scalar branches),
// addcmul/addcdiv (the optimizers' fused updates), lerp, clamp with tensor bounds and
// maximum/minimum's gradient. All broadcast NumPy-style and promote like the binary family. The
// table's entries of api gen / gen_ip / internal are declared from it below; the rest (api
// custom) by hand.
#pragma once
#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/ternary.h"

namespace oneflow_like {
namespace functional {

// Generated from the table:
//   api gen:  StatusOr<Tensor> Name(x, y, z, attrs): the three operands promoted to one dtype
//             (Float ops reject others); Addcmul (x + value * y * z), Addcdiv (x + value * y / z)
//   gen_ip:   also Status Name_(x, y, z, attrs), in place into x (y and z cast to its dtype)
//   internal: StatusOr<Tensor> Name(x, y, z, attrs) dispatched as given (operands of one dtype):
//             MinmaxGrad (maximum/minimum's gradient; ops/binary.cc)
// clang-format off
#define OFL_TERNARY_DECLARE_custom(Name, Attrs)
#define OFL_TERNARY_DECLARE_gen(Name, Attrs) \
  StatusOr<Tensor> Name(const Tensor& x, const Tensor& y, const Tensor& z, const opdefs::Attrs& a);
#define OFL_TERNARY_DECLARE_internal OFL_TERNARY_DECLARE_gen
#define OFL_TERNARY_DECLARE_gen_ip(Name, Attrs) \
  OFL_TERNARY_DECLARE_gen(Name, Attrs)          \
  Status Name##_(const Tensor& x, const Tensor& y, const Tensor& z, const opdefs::Attrs& a);
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, ...) \
  OFL_TERNARY_DECLARE_##api(Name, Attrs)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on

// addcmul / addcdiv with the value as a number (the C++ API's and the optimizers' form).
inline StatusOr<Tensor> Addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2,
                                double value = 1.0) {
  return Addcmul(input, t1, t2, opdefs::AddcAttrs{value});
}
inline StatusOr<Tensor> Addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2,
                                double value = 1.0) {
  return Addcdiv(input, t1, t2, opdefs::AddcAttrs{value});
}
inline Status Addcmul_(const Tensor& input, const Tensor& t1, const Tensor& t2,
                       double value = 1.0) {
  return Addcmul_(input, t1, t2, opdefs::AddcAttrs{value});
}
inline Status Addcdiv_(const Tensor& input, const Tensor& t1, const Tensor& t2,
                       double value = 1.0) {
  return Addcdiv_(input, t1, t2, opdefs::AddcAttrs{value});
}

// cond ? x : y; a non-bool condition is tested against zero.
StatusOr<Tensor> Where(const Tensor& cond, const Tensor& x, const Tensor& y);
StatusOr<Tensor> WhereScalarOther(const Tensor& cond, const Tensor& x, double y);  // cond ? x : y
StatusOr<Tensor> WhereScalarInput(const Tensor& cond, double x, const Tensor& y);  // cond ? x : y
// start + weight * (end - start).
StatusOr<Tensor> Lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
StatusOr<Tensor> LerpScalar(const Tensor& start, const Tensor& end, double weight);
Status Lerp_(const Tensor& start, const Tensor& end, const Tensor& weight);
Status LerpScalar_(const Tensor& start, const Tensor& end, double weight);
// clamp(input, min, max) with tensor bounds, either of which may be undefined (absent); the
// three are promoted together (PyTorch's torch.clamp with Tensor bounds).
StatusOr<Tensor> ClampTensor(const Tensor& input, const Tensor& min, const Tensor& max);

}  // namespace functional
}  // namespace oneflow_like
