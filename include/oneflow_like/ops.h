// Functional ops, named as in Python (`flow.relu`, `flow.nn.functional.conv2d`, ...). Every op
// of the unary table (oneflow_like/opdefs/unary.def) appears here without a hand-written
// declaration: `exp(x)`, `logit(x, {1e-6})`, and in place `exp_(x)` where Python has `exp_`.
// Every Python API row of the other tables appears in table_ops.h the same way (`topk(x, 2)`,
// `cumsum(x, 0)`, `max_pool2d(x, {2})`, `cross_entropy(logits, target)`). What is declared by
// hand here is what the tables mark custom (or do not cover): add/sub/mul/div/pow with their
// scalar forms, the comparisons, where/lerp, reshape/transpose/permute/expand/repeat, operators.
// Bad arguments throw Error naming the op, shapes, dtypes and devices.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_like/table_ops.h"
#include "oneflow_like/tensor.h"

namespace oneflow_like {
inline namespace v1 {

// ---- Unary table ops, generated.
// clang-format off
#define OFL_API_FN_gen(name, Attrs) Tensor name(const Tensor& x, const Attrs& attrs = {});
#define OFL_API_FN_gen_ip(name, Attrs) \
  OFL_API_FN_gen(name, Attrs) Tensor& name##_(Tensor& x, const Attrs& attrs = {});
#define OFL_API_FN_fn_only OFL_API_FN_gen_ip
#define OFL_API_FN_custom(name, Attrs)
#define OFL_API_FN_special OFL_API_FN_gen
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) OFL_API_FN_##api(name, Attrs)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
#undef OFL_API_FN_gen
#undef OFL_API_FN_gen_ip
#undef OFL_API_FN_fn_only
#undef OFL_API_FN_custom
#undef OFL_API_FN_special
// clang-format on
// Table ops whose signatures are hand-written (the table's `custom` api).
Tensor gelu(const Tensor& x, const std::string& approximate = "none");  // or "tanh"
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max = std::nullopt);
Tensor pow(const Tensor& x, double exponent);
Tensor pow(double base, const Tensor& exponent);
Tensor bitwise_not(const Tensor& x);
Tensor logical_not(const Tensor& x);

// ---- Binary elementwise (broadcasting, NumPy type promotion): binary.def's custom rows; its
// other rows (maximum, remainder, logical_and, bitwise_xor, xlogy, ...) are in table_ops.h.
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);  // a + alpha * b
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
// ternary.def's custom rows; addcmul/addcdiv(input, t1, t2, {value}) are generated, these take
// the value as a number.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, double value);
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, double value);
Tensor lerp(const Tensor& start, const Tensor& end, double weight);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(double s, const Tensor& a);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, double s);
Tensor& operator*=(Tensor& a, double s);

// ---- Shapes without a table row (variadic in Python).
Tensor reshape(const Tensor& x, const IntList& shape);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, const IntList& dims);
Tensor expand(const Tensor& x, const IntList& shape);  // a view; -1 keeps a size
Tensor repeat(const Tensor& x, const IntList& repeats);

}  // namespace v1
}  // namespace oneflow_like
