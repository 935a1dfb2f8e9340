// SGD and Adam of the C++ API: Python's update rules (python/oneflow_like/optim), op for op, so
// a C++ and a Python run from the same state take the same steps.
#include <cmath>

#include "oneflow_like/ops/ternary.h"

// Last: the runtime's headers must precede the public API (convert.h says why).
#include "oneflow_like/api/convert.h"

namespace oneflow_like {
inline namespace v1 {
namespace optim {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  for (const Tensor& p : params_)
    if (!p.defined() || !p.requires_grad())
      throw Error(Error::Kind::kValue,
                  "[optim] every parameter must be a tensor that requires grad");
  if (lr < 0)
    throw Error(Error::Kind::kValue, "[optim] lr must be >= 0, got " + std::to_string(lr));
}
Optimizer::~Optimizer() = default;
void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.set_grad(Tensor());
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& o)
    : Optimizer(std::move(params), o.lr), opt_(o), momentum_(params_.size()) {}

void SGD::step() {
  NoGradGuard ng;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (opt_.weight_decay != 0) g = g.add(p, opt_.weight_decay);
    if (opt_.momentum != 0) {
      Tensor& buf = momentum_[i];
      if (!buf.defined()) {
        buf = g.clone();
      } else {
        buf.mul_(opt_.momentum).add_(g, 1.0 - opt_.dampening);
      }
      g = opt_.nesterov ? g.add(buf, opt_.momentum) : buf;
    }
    p.add_(g, -lr_);
  }
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o)
    : Optimizer(std::move(params), o.lr), opt_(o), m_(params_.size()), v_(params_.size()) {
  if (!(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1))
    throw Error(Error::Kind::kValue, "[Adam] Invalid beta parameters: (" + std::to_string(o.beta1) +
                                         ", " + std::to_string(o.beta2) + ")");
}

void Adam::step() {
  NoGradGuard ng;
  ++steps_;
  const double b1 = opt_.beta1, b2 = opt_.beta2;
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(steps_));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, static_cast<double>(steps_)));
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!m_[i].defined()) {
      m_[i] = zeros_like(p);
      v_[i] = zeros_like(p);
    }
    if (opt_.weight_decay != 0) g = g.add(p, opt_.weight_decay);
    m_[i].mul_(b1).add_(g, 1.0 - b1);
    Tensor& v = v_[i];
    v.mul_(b2);
    Check(::oneflow_like::functional::Addcmul_(In(v), In(g), In(g), 1.0 - b2));
    Tensor denom = (v.sqrt() * (1.0 / bc2_sqrt)).add_(opt_.eps);
    Check(::oneflow_like::functional::Addcdiv_(In(p), In(m_[i]), In(denom), -lr_ / bc1));
  }
}

}  // namespace optim
}  // namespace v1
}  // namespace oneflow_like
