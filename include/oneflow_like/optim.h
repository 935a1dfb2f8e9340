// Optimizers over a list of parameters (leaf tensors that require grad): zero_grad(), then
// backward(), then step(), as in Python. The update rules are Python's, op for op.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "oneflow_like/tensor.h"

namespace oneflow_like {
inline namespace v1 {
namespace optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer();
  virtual void step() = 0;
  void zero_grad();  // clears every parameter's grad()
  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }  // for schedules
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  std::vector<Tensor> params_;
  double lr_;
};

struct SGDOptions {
  double lr = 0.01, momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
};
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<Tensor> params, double lr) : SGD(std::move(params), SGDOptions{lr}) {}
  void step() override;
  SGDOptions& options() { return opt_; }  // read at every step (momentum, ...); lr: set_lr()

 private:
  SGDOptions opt_;
  std::vector<Tensor> momentum_;  // one per parameter, undefined until its first step
};

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options);
  void step() override;
  AdamOptions& options() { return opt_; }  // read at every step (betas, ...); lr: set_lr()

 private:
  AdamOptions opt_;
  int64_t steps_ = 0;
  std::vector<Tensor> m_, v_;
};

}  // namespace optim
}  // namespace v1
}  // namespace oneflow_like
