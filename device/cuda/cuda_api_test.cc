// flow.cuda.* entry points: consistent in every configuration, never crashing without a device.
#include "device/cuda/cuda_api.h"

#include <gtest/gtest.h>

namespace oneflow_like {
namespace cuda {
namespace {

TEST(CudaApi, AvailabilityMatchesDeviceCount) {
  EXPECT_EQ(IsAvailable(), GetDeviceCount() > 0);
#ifndef OFL_WITH_CUDA
  EXPECT_FALSE(IsAvailable());
#endif
}

TEST(CudaApi, NoDeviceMeansZeroStatsAndAFailedSynchronize) {
  if (IsAvailable()) GTEST_SKIP() << "a CUDA device is present; covered by device_test";
  EmptyCache();  // no-op
  auto m = MemoryAllocated(0);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, 0);
  auto p = MaxMemoryAllocated(0);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, 0);
  EXPECT_TRUE(ResetPeakMemoryStats(0).ok());
  Status s = Synchronize();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
}

TEST(CudaApi, StatsOnADevice) {
  if (!IsAvailable()) GTEST_SKIP() << "no CUDA device on this machine";
  auto m = MemoryAllocated(0);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GE(*m, 0);
  EXPECT_FALSE(MemoryAllocated(GetDeviceCount()).ok());  // index past the end
  EXPECT_TRUE(Synchronize().ok());
  EXPECT_FALSE(GetAllowTF32());
  SetAllowTF32(true);
  EXPECT_TRUE(GetAllowTF32());
  SetAllowTF32(false);
}

}  // namespace
}  // namespace cuda
}  // namespace oneflow_like
