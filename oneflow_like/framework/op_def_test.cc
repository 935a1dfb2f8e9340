// OpSpec's named setters and OpDef's per-device kernel cache (concurrent first calls), and the
// unary table's attribute structs read from and written to AttrMaps.
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_like/framework/op.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/common.h"

namespace oneflow_like {
namespace {

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

}  // namespace
}  // namespace oneflow_like
