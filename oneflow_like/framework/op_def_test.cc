// OpSpec's named setters and OpDef's per-device kernel cache (concurrent first calls), and the
// unary table's attribute structs read from and written to AttrMaps.
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/framework/op.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/reduce.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/common.h"

namespace oneflow_like {
namespace {
namespace F = functional;

TEST(OpSpec, DefaultsAndNamedSetters) {
  const OpDef plain = OpSpec("relu", ops::InferSameAsInput);
  EXPECT_STREQ(plain.name, "relu");
  EXPECT_EQ(plain.grad, nullptr);
  EXPECT_FALSE(plain.strided_inputs);
  EXPECT_FALSE(plain.cross_device);
  EXPECT_TRUE(plain.save_inputs);
  EXPECT_TRUE(plain.save_outputs);
  const OpDef set =
      OpSpec("relu", ops::InferSameAsInput).StridedInputs().SaveInputs(false).CrossDevice();
  EXPECT_TRUE(set.strided_inputs);
  EXPECT_TRUE(set.cross_device);
  EXPECT_FALSE(set.save_inputs);
  EXPECT_TRUE(set.save_outputs);
}

TEST(OpDef, KernelCacheUnderConcurrentFirstCalls) {
  for (int round = 0; round < 20; ++round) {
    const OpDef op = OpSpec("relu", ops::InferSameAsInput);
    std::vector<kernels::KernelFn> seen(8, nullptr);
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
      threads.emplace_back([&, i] { seen[i] = op.Kernel(DeviceType::kCPU).value(); });
    for (auto& t : threads) t.join();
    kernels::KernelFn want = kernels::FindKernel("relu", DeviceType::kCPU).value();
    for (auto fn : seen) EXPECT_EQ(fn, want);
  }
  const OpDef missing = OpSpec("no_such_op", ops::InferSameAsInput);
  EXPECT_FALSE(missing.Kernel(DeviceType::kCPU).ok());
}

TEST(OpDefs, AttrStructsRoundTripAndKeepDefaults) {
  opdefs::SoftplusAttrs d = opdefs::ReadAttrs<opdefs::SoftplusAttrs>(AttrMap{});
  EXPECT_EQ(d.beta, 1.0);
  EXPECT_EQ(d.threshold, 20.0);
  opdefs::SoftplusAttrs s = opdefs::ReadAttrs<opdefs::SoftplusAttrs>(AttrMap{{"beta", 2.0}});
  EXPECT_EQ(s.beta, 2.0);
  EXPECT_EQ(s.threshold, 20.0);
  AttrMap m = opdefs::ToAttrMap(opdefs::GeluAttrs{true});
  EXPECT_TRUE(m.Bool("approximate"));
  EXPECT_TRUE(opdefs::ReadAttrs<opdefs::GeluAttrs>(m).approximate);
}

TEST(OpDefs, ScalarFormulasOnIntegersAndFloats) {
  opdefs::ScalarMath<int8_t> mi;
  EXPECT_EQ(opdefs::ClampFn{}(mi, int8_t(100), opdefs::ClampAttrs{-1e9, 50.5}), 50);
  EXPECT_EQ(opdefs::PowScalarFn{}(mi, int8_t(3), opdefs::PowScalarAttrs{4}), int8_t(81));
  opdefs::ScalarMath<float> mf;
  EXPECT_FLOAT_EQ(opdefs::LogitFn{}(mf, 0.5f, {}), 0.0f);
  EXPECT_FLOAT_EQ(opdefs::LogitFn{}(mf, 0.01f, opdefs::LogitAttrs{0.25}), std::log(1.0f / 3.0f));
  EXPECT_EQ(opdefs::SignFn{}(mf, -3.0f, {}), -1.0f);
}

// A gradient formula reading an input (output) its op does not save: the stand-in it reads has
// the right shape but carries an error naming the op (it used to index an empty list and crash).
StatusOr<TensorList> ReadsInputGrad(const GradContext& c) {
  EXPECT_EQ(c.inputs[0].shape(), Shape{3});  // metadata is there
  ASSIGN_OR_RETURN(Tensor r, F::Mul(c.grad_outputs[0], c.inputs[0]));
  return TensorList{r};
}
StatusOr<TensorList> ReadsOutputGrad(const GradContext& c) {
  EXPECT_EQ(c.outputs[0].shape(), Shape{3});
  ASSIGN_OR_RETURN(Tensor r, F::Mul(c.grad_outputs[0], c.outputs[0]));
  return TensorList{r};
}

TEST(OpDef, GradReadingAnUnsavedTensorIsAnError) {
  const OpDef no_inputs =
      OpSpec("relu", ops::InferSameAsInput).Grad(ReadsInputGrad).SaveInputs(false);
  const OpDef no_outputs =
      OpSpec("relu", ops::InferSameAsInput).Grad(ReadsOutputGrad).SaveOutputs(false);
  const OpDef saved = OpSpec("relu", ops::InferSameAsInput).Grad(ReadsInputGrad);
  for (const OpDef* op : {&no_inputs, &no_outputs, &saved}) {
    Tensor x = F::Full(Shape{3}, 2.0, DType::kF32, Device::CPU()).value();
    ASSERT_TRUE(x.set_requires_grad(true).ok());
    Tensor y = Dispatch1(*op, {x}).value();
    ASSERT_TRUE(Backward({F::Sum(y).value()}, {}, false, false).ok());
    ASSERT_TRUE(x.grad().defined());
    std::vector<float> got(3);
    Status s = vm::SyncAccessBlob(x.grad().blob(), vm::AccessMode::kRead, [&](void* p) {
      std::memcpy(got.data(), p, sizeof(float) * 3);
      return Status();
    });
    if (op == &saved) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(got, (std::vector<float>{2, 2, 2}));
      continue;
    }
    ASSERT_FALSE(s.ok());
    const std::string what = op == &no_inputs ? "input" : "output";
    EXPECT_NE(s.message().find("[ReluBackward0] the gradient formula reads forward " + what +
                               " 0, which the op does not save"),
              std::string::npos)
        << s;
  }
  EXPECT_TRUE(vm::VirtualMachine::Get()->SyncAll().ok());  // raised by the reads already
}

}  // namespace
}  // namespace oneflow_like
