#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_like/base/allocator.h"
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/dtype.h"
#include "oneflow_like/base/intra_op_threads.h"
#include "oneflow_like/base/shape.h"
#include "oneflow_like/base/thread_pool.h"

namespace oneflow_like {
namespace {

TEST(DType, Promotion) {
  EXPECT_EQ(PromoteTypes(DType::kI32, DType::kF32), DType::kF32);
  EXPECT_EQ(PromoteTypes(DType::kF32, DType::kF64), DType::kF64);
  EXPECT_EQ(PromoteTypes(DType::kBool, DType::kI8), DType::kI8);
  EXPECT_EQ(PromoteTypes(DType::kU8, DType::kI8), DType::kI16);  // torch: int16
  EXPECT_EQ(PromoteTypes(DType::kI16, DType::kU8), DType::kI16);
  EXPECT_EQ(PromoteTypes(DType::kI16, DType::kI32), DType::kI32);
  EXPECT_EQ(PromoteTypes(DType::kI16, DType::kF16), DType::kF16);
  EXPECT_EQ(PromoteTypes(DType::kF16, DType::kBF16), DType::kF32);
  EXPECT_EQ(PromoteTypes(DType::kI64, DType::kF16), DType::kF16);
  EXPECT_EQ(PromoteWithScalar(DType::kI64, true), DType::kF32);
  EXPECT_EQ(PromoteWithScalar(DType::kF16, true), DType::kF16);
  EXPECT_EQ(DTypeFromName("float32").value(), DType::kF32);
  EXPECT_TRUE(DTypeFromName("complex").ok());  // torch.complex: complex64
  EXPECT_FALSE(DTypeFromName("complex32").ok());
}

TEST(DType, NewDTypes) {
  // appended: the earlier values (stored in artifacts and checkpoints) keep their numbers
  EXPECT_EQ(static_cast<int>(DType::kC128), 10);
  EXPECT_EQ(static_cast<int>(DType::kI16), 11);
  EXPECT_EQ(static_cast<int>(DType::kF8E5M2FNUZ), kNumDTypes - 1);
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    EXPECT_EQ(DTypeFromName(DTypeLongName(t)).value(), t) << i;
    EXPECT_EQ(DTypeFromName(DTypeName(t)).value(), t) << i;
    EXPECT_GT(DTypeSize(t), 0) << i;
  }
  EXPECT_EQ(DTypeFromName("short").value(), DType::kI16);
  EXPECT_EQ(DTypeSize(DType::kU64), 8);
  EXPECT_EQ(DTypeSize(DType::kF8E4M3FN), 1);
  EXPECT_TRUE(IsFloating(DType::kF8E5M2) && IsLimited(DType::kF8E5M2));
  EXPECT_TRUE(IsIntegral(DType::kU32) && !IsSigned(DType::kU32) && IsSigned(DType::kI16));
  EXPECT_FALSE(IsLimited(DType::kI16));
  EXPECT_STREQ(DTypeTorchName(DType::kU16), "UInt16");
  // torch 2.x: uint16-64 promote only with floating dtypes; float8 with nothing else
  EXPECT_EQ(PromoteTypesChecked("t", DType::kU16, DType::kF32).value(), DType::kF32);
  EXPECT_EQ(PromoteTypesChecked("t", DType::kU64, DType::kU64).value(), DType::kU64);
  EXPECT_FALSE(PromoteTypesChecked("t", DType::kU16, DType::kI32).ok());
  EXPECT_FALSE(PromoteTypesChecked("t", DType::kU32, DType::kU8).ok());
  EXPECT_FALSE(PromoteTypesChecked("t", DType::kF8E4M3FN, DType::kF32).ok());
  EXPECT_FALSE(PromoteTypesChecked("t", DType::kF8E4M3FN, DType::kF8E5M2).ok());
  EXPECT_NE(LimitedNotImplemented("add", DType::kU16).ToString().find("'UInt16'"),
            std::string::npos);
}

// Every float8 code decodes to a float that encodes back to it (NaNs to the canonical NaN),
// and the values near the range ends follow torch's rules.
template <typename F8>
void Float8RoundTrip(uint8_t nan_pos, uint8_t nan_neg) {
  for (int b = 0; b < 256; ++b) {
    F8 x;
    x.bits = static_cast<uint8_t>(b);
    float f = float(x);
    uint8_t back = F8(f).bits;
    if (std::isnan(f))
      EXPECT_TRUE(back == nan_pos || back == nan_neg) << b;
    else if (f == 0.0f && std::signbit(f) && nan_neg == 0x80)  // fnuz: -0 does not exist
      ADD_FAILURE() << "fnuz decoded a negative zero from " << b;
    else
      EXPECT_EQ(back, b) << b << " -> " << f;
  }
}
TEST(DType, Float8) {
  Float8RoundTrip<float8_e4m3fn>(0x7f, 0xff);
  Float8RoundTrip<float8_e5m2>(0x7f, 0xff);
  Float8RoundTrip<float8_e4m3fnuz>(0x80, 0x80);
  Float8RoundTrip<float8_e5m2fnuz>(0x80, 0x80);
  EXPECT_EQ(float(float8_e4m3fn(448.0f)), 448.0f);
  EXPECT_EQ(float(float8_e4m3fn(464.0f)), 448.0f);        // tie to the even 448
  EXPECT_TRUE(std::isnan(float(float8_e4m3fn(470.0f))));  // rounds past 448: NaN, no inf
  EXPECT_TRUE(std::isnan(float(float8_e4m3fn(INFINITY))));
  EXPECT_EQ(float(float8_e5m2(57344.0f)), 57344.0f);
  EXPECT_TRUE(std::isinf(float(float8_e5m2(61440.0f))));  // tie to even: up to inf
  EXPECT_TRUE(std::isinf(float(float8_e5m2(-1e9f))));
  EXPECT_EQ(float(float8_e4m3fnuz(240.0f)), 240.0f);
  EXPECT_TRUE(std::isnan(float(float8_e4m3fnuz(250.0f))));
  EXPECT_EQ(float8_e4m3fnuz(-0.0f).bits, 0);
  EXPECT_EQ(float(float8_e4m3fn(0.001953125f)), 0.001953125f);  // smallest subnormal 2^-9
  EXPECT_EQ(float(float8_e4m3fn(0.0009765625f)), 0.0f);         // half of it: ties to 0
}

TEST(DType, HalfRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 1e-5f, 3.14159f}) {
    EXPECT_NEAR(float(float16(f)), f, std::fabs(f) * 1e-3 + 1e-7) << f;
    EXPECT_NEAR(float(bfloat16(f)), f, std::fabs(f) * 1e-2 + 1e-7) << f;
  }
  EXPECT_TRUE(std::isinf(float(float16(1e6f))));
}

TEST(Shape, BroadcastAndStrides) {
  EXPECT_EQ(BroadcastShapes("add", Shape{3, 1}, Shape{4}).value(), (Shape{3, 4}));
  auto bad = BroadcastShapes("add", Shape{3, 2}, Shape{4});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[add]"), std::string::npos);
  EXPECT_NE(bad.status().message().find("[3,2]"), std::string::npos);
  EXPECT_EQ(ContiguousStrides(Shape{2, 3, 4}), (DimVector{12, 4, 1}));
  EXPECT_TRUE(IsContiguous(Shape{2, 3}, DimVector{3, 1}));
  EXPECT_FALSE(IsContiguous(Shape{2, 3}, DimVector{1, 2}));
  EXPECT_EQ(ShapeString(DType::kF32, Shape{10, 20}), "f32[10,20]");
  EXPECT_EQ(WrapDim("sum", -1, 3).value(), 2);
  EXPECT_FALSE(WrapDim("sum", 3, 3).ok());
}

TEST(Device, Parse) {
  EXPECT_EQ(Device::Parse("cuda:1").value(), Device(DeviceType::kCUDA, 1));
  EXPECT_EQ(Device::Parse("cpu").value().ToString(), "cpu");
  EXPECT_FALSE(Device::Parse("tpu").ok());
}

SystemMemory Malloc() {
  return {[](size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); }};
}

TEST(CachingAllocator, SplitMergeReuse) {
  CachingAllocator a(Device::CPU(), Malloc());
  void* p1 = a.Allocate(10000).value();
  void* p2 = a.Allocate(10000).value();
  EXPECT_EQ(a.Stats().num_system_allocs, 1);  // both carved from one 2 MiB segment
  EXPECT_EQ(static_cast<char*>(p2) - static_cast<char*>(p1), 10240);
  a.Deallocate(p1);
  a.Deallocate(p2);
  EXPECT_EQ(a.Stats().allocated, 0);
  void* p3 = a.Allocate(2 << 20).value();  // large: new segment
  EXPECT_EQ(a.Stats().num_system_allocs, 2);
  a.Deallocate(p3);
  void* p4 = a.Allocate(1900 * 1024 / 2).value();  // small again, reuses the merged segment
  EXPECT_EQ(a.Stats().num_system_allocs, 2);
  EXPECT_EQ(p4, p1);
  a.Deallocate(p4);
  EXPECT_EQ(a.Stats().peak_allocated, 2 << 20);
  const int64_t held = a.Stats().reserved;  // both segments, never returned so far
  EXPECT_EQ(held, 4 << 20);
  a.EmptyCache();
  EXPECT_EQ(a.Stats().reserved, 0);
  EXPECT_EQ(a.Stats().peak_reserved, held);  // the high-water mark outlives the release
  a.ResetPeak();
  EXPECT_EQ(a.Stats().peak_reserved, 0);
}

// Tiny blocks come back LIFO by exact size; EmptyCache merges them into their segment first.
TEST(CachingAllocator, TinyBlocksStackedThenMergedOnEmptyCache) {
  CachingAllocator a(Device::CPU(), Malloc());
  void* p1 = a.Allocate(4).value();
  void* p2 = a.Allocate(1000).value();
  void* p3 = a.Allocate(4).value();
  a.Deallocate(p1);
  a.Deallocate(p3);
  EXPECT_EQ(a.Stats().allocated, 1024);
  EXPECT_EQ(a.Allocate(500).value(), p3);  // same size class (512), last freed first
  EXPECT_EQ(a.Allocate(1).value(), p1);
  EXPECT_EQ(a.Stats().num_system_allocs, 1);
  a.Deallocate(p1);
  a.Deallocate(p2);
  a.Deallocate(p3);
  EXPECT_EQ(a.Stats().allocated, 0);
  EXPECT_EQ(a.Stats().reserved, 2 << 20);
  a.EmptyCache();  // the stacked blocks merge back, so the whole segment is returned
  EXPECT_EQ(a.Stats().reserved, 0);
  // More frees of one size than a stack holds: the rest go to the bins and merge as usual.
  std::vector<void*> ps;
  for (int i = 0; i < 200; ++i) ps.push_back(a.Allocate(512).value());
  for (void* p : ps) a.Deallocate(p);
  EXPECT_EQ(a.Stats().allocated, 0);
  a.EmptyCache();
  EXPECT_EQ(a.Stats().reserved, 0);
}

TEST(CachingAllocator, ThreadCacheReusesTinyBlocksAndFlushesAtThreadExit) {
  // Never destroyed, as a thread-cached allocator must be (thread caches point at it).
  static CachingAllocator* a = new CachingAllocator(Device::CPU(), Malloc(), /*thread_cache=*/true);
  std::thread([] {
    void* p = a->Allocate(4).value();
    void* q = a->Allocate(3000).value();
    a->Deallocate(p, 4);  // into this thread's cache
    a->Deallocate(q, 3000);
    EXPECT_EQ(a->Stats().allocated, 0);
    EXPECT_EQ(a->Allocate(100).value(), p);  // same size class, no lock
    EXPECT_EQ(a->Stats().allocated, 512);
    EXPECT_EQ(a->Stats().peak_allocated, 512 + 3072);
    EXPECT_EQ(a->Stats().num_allocs, 3);
    a->Deallocate(p, 100);
  }).join();
  // The exited thread handed its blocks back: the whole segment can be returned.
  EXPECT_EQ(a->Stats().allocated, 0);
  a->EmptyCache();
  EXPECT_EQ(a->Stats().reserved, 0);
  // This thread's cache is emptied by its own EmptyCache.
  void* p = a->Allocate(512).value();
  a->Deallocate(p, 512);
  EXPECT_EQ(a->Stats().reserved, 2 << 20);
  a->EmptyCache();
  EXPECT_EQ(a->Stats().reserved, 0);
}

TEST(CachingAllocator, OomShrinksThenFailsClearly) {
  CachingAllocator a(Device::CPU(), Malloc());
  a.SetLimit(8 << 20);
  void* big = a.Allocate(6 << 20).value();
  a.Deallocate(big);  // cached, still reserved
  EXPECT_EQ(a.Stats().reserved, 6 << 20);
  void* other = a.Allocate(4 << 20).value();  // fits only after the cache is shrunk? (reuses it)
  a.Deallocate(other);
  void* p = a.Allocate(8 << 20).value();  // needs the cache emptied first: retry succeeds
  EXPECT_NE(p, nullptr);
  auto fail = a.Allocate(4 << 20);
  ASSERT_FALSE(fail.ok());
  EXPECT_EQ(fail.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(fail.status().message().find("requested 4194304 bytes"), std::string::npos);
  EXPECT_NE(fail.status().message().find("cpu"), std::string::npos);
  a.Deallocate(p);
}

TEST(ThreadPool, ParallelForCoversRangeOnce) {
  ThreadPool pool(3, "test_pool");
  std::vector<std::atomic<int>> hits(100000);
  for (int rep = 0; rep < 20; ++rep) {
    pool.ParallelFor(hits.size(), 1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
  }
  for (auto& h : hits) ASSERT_EQ(h.load(), 20);
}

// flow.set_num_threads: the intra-op pool takes the new size for later work; a pool a kernel may
// still hold stays valid, and a size asked for again gets its earlier pool back.
TEST(ThreadPool, SetIntraOpThreadsResizesThePool) {
  const int n0 = IntraOpThreads();
  EXPECT_GE(n0, 1);
  ThreadPool* before = IntraOpPool();
  EXPECT_EQ(before->num_threads(), n0);
  SetIntraOpThreads(1);
  EXPECT_EQ(IntraOpThreads(), 1);
  ThreadPool* one = IntraOpPool();
  EXPECT_EQ(one->num_threads(), 1);
  std::vector<std::thread::id> ran;
  one->ParallelFor(1000, 1, [&](int64_t, int64_t) { ran.push_back(std::this_thread::get_id()); });
  for (auto id : ran) EXPECT_EQ(id, std::this_thread::get_id());  // the caller alone
  SetIntraOpThreads(3);
  EXPECT_EQ(IntraOpPool()->num_threads(), 3);
  std::atomic<int64_t> sum{0};
  before->ParallelFor(1000, 10, [&](int64_t b, int64_t e) { sum += e - b; });  // still usable
  EXPECT_EQ(sum.load(), 1000);
  SetIntraOpThreads(1);
  EXPECT_EQ(IntraOpPool(), one);
  SetIntraOpThreads(0);  // clamped to 1
  EXPECT_EQ(IntraOpThreads(), 1);
  SetIntraOpThreads(n0);
  EXPECT_EQ(IntraOpPool()->num_threads(), n0);
}

}  // namespace
}  // namespace oneflow_like
