// nn building blocks (Python's `nn` names): a Module owns named parameters, buffers and child
// modules; forward() maps one tensor to one. Modules are values (copies share the tensors) and
// are usually held by std::shared_ptr inside a Sequential or a user's Module.
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneflow_like/ops.h"
#include "oneflow_like/tensor.h"

namespace oneflow_like {
inline namespace v1 {
namespace nn {

class Module {
 public:
  virtual ~Module();
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }
  // Names as in Python's state_dict: "0.weight", "features.1.running_mean".
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const {
    return children_;
  }
  // Moves every parameter and buffer (parameters stay leaves that require grad).
  void to(Device device);
  void train(bool on = true);  // also for every child
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();  // clears every parameter's grad()
  // A one-line description per module, as Python's repr prints.
  virtual std::string name() const = 0;

 protected:
  // Registers `t` as a leaf that requires grad; returns its slot for param().
  size_t register_parameter(const std::string& name, Tensor t);
  size_t register_buffer(const std::string& name, Tensor t);
  void register_module(const std::string& name, std::shared_ptr<Module> m);
  const Tensor& param(size_t slot) const { return params_[slot].second; }
  const Tensor& buffer(size_t slot) const { return buffers_[slot].second; }

 private:
  void collect(const std::string& prefix, bool buffers,
               std::vector<std::pair<std::string, Tensor>>* out) const;
  std::vector<std::pair<std::string, Tensor>> params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// y = x W^T + b; W and b drawn from U(-1/sqrt(in), 1/sqrt(in)) like PyTorch.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  const Tensor& weight() const { return param(0); }
  Tensor bias() const { return has_bias_ ? param(1) : Tensor(); }

 private:
  int64_t in_, out_;
  bool has_bias_;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         int64_t padding = 0, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  const Tensor& weight() const { return param(0); }
  Tensor bias() const { return has_bias_ ? param(1) : Tensor(); }

 private:
  int64_t in_, out_, kernel_, stride_, padding_;
  bool has_bias_;
};

// Batch statistics while training (updating running_mean/var), running statistics in eval().
class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  const Tensor& weight() const { return param(0); }
  const Tensor& bias() const { return param(1); }
  const Tensor& running_mean() const { return buffer(0); }
  const Tensor& running_var() const { return buffer(1); }

 private:
  int64_t features_;
  double eps_, momentum_;
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) override { return relu(x); }
  std::string name() const override { return "ReLU()"; }
};

// Zeroes elements with probability p while training (scaling the rest by 1/(1-p)).
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5) : p_(p) {}
  Tensor forward(const Tensor& x) override { return dropout(x, p_, is_training()); }
  std::string name() const override;

 private:
  double p_;
};

class Flatten : public Module {
 public:
  Tensor forward(const Tensor& x) override { return flatten(x, 1); }
  std::string name() const override { return "Flatten()"; }
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(int64_t kernel_size) : k_(kernel_size) {}
  Tensor forward(const Tensor& x) override { return max_pool2d(x, {k_}); }
  std::string name() const override;

 private:
  int64_t k_;
};

// Runs its children in order; they are named "0", "1", ... Built from modules or shared_ptrs:
//   nn::Sequential model(nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 10));
class Sequential : public Module {
 public:
  Sequential() = default;
  // (Not for a lone Sequential: that is the copy constructor's job.)
  template <typename... M,
            typename = std::enable_if_t<!(sizeof...(M) == 1 &&
                                          (std::is_same_v<std::decay_t<M>, Sequential> && ...))>>
  explicit Sequential(M&&... modules) {
    (push_back(std::forward<M>(modules)), ...);
  }
  void push_back(std::shared_ptr<Module> m);
  template <typename M, typename = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void push_back(M&& m) {
    push_back(std::shared_ptr<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(m))));
  }
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  size_t size() const { return children().size(); }
  Module& operator[](size_t i) const { return *children()[i].second; }
};

}  // namespace nn
}  // namespace v1
}  // namespace oneflow_like
