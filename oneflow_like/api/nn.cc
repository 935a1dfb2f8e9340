// nn building blocks of the C++ API, written with the public ops (as Python's nn is).
#include <cmath>

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace nn {

Module::~Module() = default;

size_t Module::register_parameter(const std::string& name, Tensor t) {
  if (!t.requires_grad()) t.requires_grad_(true);
  params_.emplace_back(name, std::move(t));
  return params_.size() - 1;
}
size_t Module::register_buffer(const std::string& name, Tensor t) {
  buffers_.emplace_back(name, std::move(t));
  return buffers_.size() - 1;
}
void Module::register_module(const std::string& name, std::shared_ptr<Module> m) {
  if (!m) throw Error(Error::Kind::kValue, "[register_module] null module '" + name + "'");
  children_.emplace_back(name, std::move(m));
}

void Module::collect(const std::string& prefix, bool buffers,
                     std::vector<std::pair<std::string, Tensor>>* out) const {
  for (const auto& [name, t] : buffers ? buffers_ : params_) out->emplace_back(prefix + name, t);
  for (const auto& [name, m] : children_) m->collect(prefix + name + ".", buffers, out);
}
std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", false, &out);
  return out;
}
std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named_parameters()) out.push_back(t);
  return out;
}
std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", true, &out);
  return out;
}
void Module::to(Device device) {
  for (auto& [_, t] : params_)
    if (t.device() != device) t = t.to(device).detach().requires_grad_(true);
  for (auto& [_, t] : buffers_)
    if (t.device() != device) t = t.to(device);
  for (auto& [_, m] : children_) m->to(device);
}
void Module::train(bool on) {
  training_ = on;
  for (auto& [_, m] : children_) m->train(on);
}
void Module::zero_grad() {
  for (Tensor& t : parameters()) t.set_grad(Tensor());
}

namespace {
// U(-bound, bound) with bound = 1/sqrt(fan_in): PyTorch's default for Linear and Conv2d
// (kaiming_uniform with a = sqrt(5), and the bias rule).
Tensor UniformInit(const IntList& shape, int64_t fan_in) {
  NoGradGuard ng;
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return rand(shape) * (2 * bound) - bound;
}
}  // namespace

Linear::Linear(int64_t in, int64_t out, bool bias) : in_(in), out_(out), has_bias_(bias) {
  register_parameter("weight", UniformInit({out, in}, in));
  if (bias) register_parameter("bias", UniformInit({out}, in));
}
Tensor Linear::forward(const Tensor& x) {
  return linear(x, weight(), bias());
}
std::string Linear::name() const {
  return "Linear(in_features=" + std::to_string(in_) + ", out_features=" + std::to_string(out_) +
         ", bias=" + (has_bias_ ? "True" : "False") + ")";
}

Conv2d::Conv2d(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t padding, bool bias)
    : in_(in), out_(out), kernel_(k), stride_(stride), padding_(padding), has_bias_(bias) {
  register_parameter("weight", UniformInit({out, in, k, k}, in * k * k));
  if (bias) register_parameter("bias", UniformInit({out}, in * k * k));
}
Tensor Conv2d::forward(const Tensor& x) {
  return conv2d(x, weight(), bias(), {stride_}, {padding_});
}
std::string Conv2d::name() const {
  return "Conv2d(" + std::to_string(in_) + ", " + std::to_string(out_) +
         ", kernel_size=" + std::to_string(kernel_) + ", stride=" + std::to_string(stride_) +
         ", padding=" + std::to_string(padding_) + ")";
}

BatchNorm2d::BatchNorm2d(int64_t c, double eps, double momentum)
    : features_(c), eps_(eps), momentum_(momentum) {
  register_parameter("weight", ones({c}));
  register_parameter("bias", zeros({c}));
  register_buffer("running_mean", zeros({c}));
  register_buffer("running_var", ones({c}));
}
Tensor BatchNorm2d::forward(const Tensor& x) {
  return batch_norm(x, running_mean(), running_var(), weight(), bias(), is_training(), momentum_,
                    eps_);
}
std::string BatchNorm2d::name() const {
  return "BatchNorm2d(" + std::to_string(features_) + ", eps=" + std::to_string(eps_) +
         ", momentum=" + std::to_string(momentum_) + ")";
}

std::string Dropout::name() const {
  return "Dropout(p=" + std::to_string(p_) + ")";
}
std::string MaxPool2d::name() const {
  return "MaxPool2d(kernel_size=" + std::to_string(k_) + ")";
}

void Sequential::push_back(std::shared_ptr<Module> m) {
  register_module(std::to_string(children().size()), std::move(m));
}
Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& [_, m] : children()) y = m->forward(y);
  return y;
}
std::string Sequential::name() const {
  std::string s = "Sequential(\n";
  for (const auto& [n, m] : children()) s += "  (" + n + "): " + m->name() + "\n";
  return s + ")";
}

}  // namespace nn
}  // namespace v1
}  // namespace oneflow_like
