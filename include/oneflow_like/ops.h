// Functional ops, named as in Python (`flow.relu`, `flow.nn.functional.conv2d`, ...). Every op
// of the unary table (oneflow_like/opdefs/unary.def) appears here without a hand-written
// declaration: `exp(x)`, `logit(x, {1e-6})`, and in place `exp_(x)` where Python has `exp_`.
// Bad arguments throw Error naming the op, shapes, dtypes and devices.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// ---- Binary elementwise (broadcasting, NumPy type promotion).
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);  // a + alpha * b
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, double value = 1.0);
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, double value = 1.0);
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

// ---- Reductions (dims empty: all dims).
Tensor sum(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const IntList& dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& x, const IntList& dims = {}, double correction = 1.0,
           bool keepdim = false);
Tensor logsumexp(const Tensor& x, const IntList& dims, bool keepdim = false);
Tensor std(const Tensor& x, const IntList& dims = {}, double correction = 1.0,
           bool keepdim = false);
Tensor norm(const Tensor& x, double p = 2.0, const IntList& dims = {}, bool keepdim = false);
// (values, indices) of the maximum / minimum along `dim`.
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);

// ---- Matrix products.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);

// ---- Shapes and indexing.
Tensor reshape(const Tensor& x, const IntList& shape);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, const IntList& dims);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
Tensor cat(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim = 0);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);
Tensor expand(const Tensor& x, const IntList& shape);  // a view; -1 keeps a size
Tensor repeat(const Tensor& x, const IntList& repeats);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor flip(const Tensor& x, const IntList& dims);
Tensor roll(const Tensor& x, const IntList& shifts, const IntList& dims);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// pads: (left, right) pairs from the last dim; mode "constant", "reflect", "replicate".
Tensor pad(const Tensor& x, const IntList& pads, const std::string& mode = "constant",
           double value = 0.0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor nonzero(const Tensor& x);  // [n, ndim] int64 indices

// ---- Neural-network functions (Python's `nn.functional`).
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
// x [N, C, H, W], weight [K, C/groups, R, S], bias [K] or undefined.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              const IntList& stride = {1}, const IntList& padding = {0},
              const IntList& dilation = {1}, int64_t groups = 1);
Tensor max_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0});
Tensor avg_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0});
// Updates running_mean/var in place when training.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum = 0.1,
                  double eps = 1e-5);
Tensor layer_norm(const Tensor& x, const IntList& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
Tensor embedding(const Tensor& indices, const Tensor& weight);
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size);
// x [N, C, L], weight [K, C/groups, S].
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
              const IntList& stride = {1}, const IntList& padding = {0},
              const IntList& dilation = {1}, int64_t groups = 1);
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                    bool is_causal = false);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::string& reduction = "mean");
// reduction: "mean", "sum" or "none".
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::string& reduction = "mean", double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");

}  // namespace v1
}  // namespace oneflow_like
