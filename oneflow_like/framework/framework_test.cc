// Tensor, dispatch and autograd basics through the functional API.
#include <cmath>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/shape_ops.h"
#include "oneflow_like/ops/unary.h"

namespace oneflow_like {
namespace {
namespace F = functional;

Tensor FromVec(const std::vector<float>& v, Shape s) {
  return F::FromHost(v.data(), s, DType::kF32, Device::CPU()).value();
}
std::vector<float> ToVec(const Tensor& t) {
  std::vector<float> v(t.numel());
  EXPECT_TRUE(F::CopyToHost(t, v.data()).ok());
  return v;
}

TEST(Framework, BroadcastAddAndSum) {
  Tensor a = FromVec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor b = FromVec({10, 20, 30}, Shape{3});
  Tensor c = F::Add(a, b).value();
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(ToVec(c), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(ToVec(F::Sum(c, {0}).value()), (std::vector<float>{25, 47, 69}));
  EXPECT_EQ(ToVec(F::Sum(c, {1}, true).value()), (std::vector<float>{66, 75}));
  EXPECT_EQ(ToVec(F::Sum(c).value()), (std::vector<float>{141}));
}

TEST(Framework, ViewsShareStorage) {
  Tensor a = FromVec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor t = F::Transpose(a, 0, 1).value();
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(ToVec(t), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  ASSERT_TRUE(F::Fill_(a, 7).ok());
  EXPECT_EQ(ToVec(t)[3], 7);
  Tensor r = F::ReshapeInfer(t, {-1}).value();
  EXPECT_EQ(r.shape(), (Shape{6}));
}

TEST(Framework, BackwardThroughBroadcastAndRelu) {
  Tensor w = FromVec({1, -2, 3}, Shape{3});
  ASSERT_TRUE(w.set_requires_grad(true).ok());
  Tensor x = FromVec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor y = F::Relu(F::Mul(x, w).value()).value();  // [1,0,9,4,0,18]
  Tensor loss = F::Sum(y).value();
  ASSERT_TRUE(Backward({loss}, {}, false, false).ok());
  EXPECT_EQ(ToVec(w.grad()), (std::vector<float>{5, 0, 9}));
  auto again = Backward({loss}, {}, false, false);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("second time"), std::string::npos);
}

TEST(Framework, GradRunsOnlyTheNodesAboveItsInputs) {
  Tensor x = FromVec({1, 2, 3}, Shape{3});
  ASSERT_TRUE(x.set_requires_grad(true).ok());
  Tensor h = F::Mul(x, x).value();                    // below h: MulBackward0 <- x
  Tensor out = F::Sum(F::Mul(h, h).value()).value();  // above h
  auto gh = Grad({out}, {h}, {}, false, false, false);
  ASSERT_TRUE(gh.ok()) << gh.status();
  EXPECT_EQ(ToVec(gh.value()[0]), (std::vector<float>{2, 8, 18}));  // 2h
  // x*x's node did not run, so its saved tensors are still there for a backward through it.
  ASSERT_TRUE(Backward({F::Sum(h).value()}, {}, false, false).ok());
  EXPECT_EQ(ToVec(x.grad()), (std::vector<float>{2, 4, 6}));
  auto again = Backward({out}, {}, false, false);  // the nodes above h ran and were freed
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.code(), absl::StatusCode::kAborted);  // a RuntimeError in Python, as torch
  EXPECT_NE(again.message().find("Trying to backward through the graph a second time"),
            std::string::npos);
}

TEST(Framework, BackwardInputsAccumulatesOnlyThere) {
  Tensor x = FromVec({1, 2}, Shape{2});
  Tensor w = FromVec({3, 4}, Shape{2});
  ASSERT_TRUE(x.set_requires_grad(true).ok());
  ASSERT_TRUE(w.set_requires_grad(true).ok());
  Tensor h = F::Mul(x, w).value();
  Tensor loss = F::Sum(F::Mul(h, w).value()).value();  // x w^2
  ASSERT_TRUE(Backward({loss}, {}, true, false, {w, h}).ok());
  EXPECT_FALSE(x.grad().defined());
  EXPECT_EQ(ToVec(w.grad()), (std::vector<float>{6, 16}));  // 2xw
  EXPECT_EQ(ToVec(h.grad()), (std::vector<float>{3, 4}));   // w
}

TEST(Framework, AutogradGradAndDoubleBackward) {
  Tensor x = FromVec({3}, Shape{});
  ASSERT_TRUE(x.set_requires_grad(true).ok());
  Tensor y = F::Mul(F::Mul(x, x).value(), x).value();  // x^3
  auto g = Grad({y}, {x}, {}, false, true, false).value();
  EXPECT_FLOAT_EQ(ToVec(g[0])[0], 27);  // 3x^2
  auto g2 = Grad({g[0]}, {x}, {}, false, false, false).value();
  EXPECT_FLOAT_EQ(ToVec(g2[0])[0], 18);  // 6x
  EXPECT_FALSE(x.grad().defined());
}

TEST(Framework, BadInputRaisesBeforeEnqueue) {
  Tensor a = FromVec({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor b = FromVec({1, 2}, Shape{2});
  auto r = F::Add(a, b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("[add]"), std::string::npos);
  EXPECT_NE(r.status().message().find("[2,3]"), std::string::npos);
}

// saved_tensors_hooks from C++: packs each saved tensor into a host vector (dropping the
// tensor), unpacks it into a new tensor; `bad_unpack` returns the wrong shape.
struct HostCopyHooks : SavedTensorsHooks {
  struct Packed : PackedTensor {
    std::vector<float> data;
    Shape shape;
    bool bad = false;
    StatusOr<Tensor> Unpack() override {
      Shape s = bad ? Shape{static_cast<int64_t>(data.size())} : shape;
      return F::FromHost(data.data(), s, DType::kF32, Device::CPU());
    }
  };
  int packed = 0;
  bool bad_unpack = false;
  StatusOr<std::unique_ptr<PackedTensor>> Pack(const Tensor& t) override {
    auto p = std::make_unique<Packed>();
    p->data = ToVec(t);
    p->shape = t.shape();
    p->bad = bad_unpack;
    ++packed;
    return std::unique_ptr<PackedTensor>(std::move(p));
  }
};

TEST(Framework, SavedTensorsHooksPackAndUnpack) {
  Tensor w = FromVec({1, -2, 3, 4, 5, 6}, Shape{2, 3});
  ASSERT_TRUE(w.set_requires_grad(true).ok());
  auto hooks = std::make_shared<HostCopyHooks>();
  ASSERT_TRUE(PushSavedTensorsHooks(hooks).ok());
  Tensor loss = F::Sum(F::Mul(F::Mul(w, w).value(), w).value()).value();  // sum w^3
  ASSERT_TRUE(PopSavedTensorsHooks().ok());
  EXPECT_GT(hooks->packed, 0);
  ASSERT_TRUE(Backward({loss}, {}, false, false).ok());
  EXPECT_EQ(ToVec(w.grad()), (std::vector<float>{3, 12, 27, 48, 75, 108}));  // 3 w^2

  hooks->bad_unpack = true;
  ASSERT_TRUE(PushSavedTensorsHooks(hooks).ok());
  Tensor y = F::Sum(F::Mul(w, w).value()).value();
  ASSERT_TRUE(PopSavedTensorsHooks().ok());
  Status s = Backward({y}, {}, false, false);
  ASSERT_FALSE(s.ok());
  // sum's node runs first (it saves its input): the error names it and both shapes.
  EXPECT_NE(s.message().find("[SumBackward0] the unpack_hook"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("f32[6]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();

  ASSERT_TRUE(DisableSavedTensorsHooks(std::string("not here")).ok());
  Status d = PushSavedTensorsHooks(hooks);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.message(), "not here");
  ASSERT_TRUE(DisableSavedTensorsHooks(std::nullopt).ok());
  EXPECT_EQ(CurrentSavedTensorsHooks(), nullptr);
}

TEST(Framework, InplaceVersionCheck) {
  Tensor x = FromVec({1, 2}, Shape{2});
  ASSERT_TRUE(x.set_requires_grad(true).ok());
  Tensor y = F::MulScalar(x, 2).value();
  Tensor z = F::Mul(y, y).value();
  ASSERT_TRUE(F::AddScalar_(y, 1).ok());  // y was saved by mul
  auto s = Backward({F::Sum(z).value()}, {}, false, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("in-place"), std::string::npos);
}

TEST(Framework, TrainsLinearRegression) {
  // y = 2x - 1, fitted by gradient descent through the VM.
  std::vector<float> xs, ys;
  for (int i = 0; i < 32; ++i) {
    xs.push_back(i / 16.0f);
    ys.push_back(2 * xs.back() - 1);
  }
  Tensor x = FromVec(xs, Shape{32, 1}), y = FromVec(ys, Shape{32, 1});
  Tensor w = F::Zeros(Shape{1}, DType::kF32, Device::CPU()).value();
  Tensor b = F::Zeros(Shape{1}, DType::kF32, Device::CPU()).value();
  ASSERT_TRUE(w.set_requires_grad(true).ok());
  ASSERT_TRUE(b.set_requires_grad(true).ok());
  float last = 0;
  for (int step = 0; step < 600; ++step) {
    Tensor pred = F::Add(F::Mul(x, w).value(), b).value();
    Tensor d = F::Sub(pred, y).value();
    Tensor loss = F::Mean(F::Mul(d, d).value()).value();
    w.set_grad(Tensor());
    b.set_grad(Tensor());
    ASSERT_TRUE(Backward({loss}, {}, false, false).ok());
    NoGradGuard ng;
    ASSERT_TRUE(F::Add_(w, w.grad(), -0.2).ok());
    ASSERT_TRUE(F::Add_(b, b.grad(), -0.2).ok());
    last = ToVec(loss)[0];
  }
  EXPECT_LT(last, 1e-4);
  EXPECT_NEAR(ToVec(w)[0], 2, 1e-2);
}

}  // namespace
}  // namespace oneflow_like
