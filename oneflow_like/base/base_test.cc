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
  EXPECT_EQ(PromoteTypes(DType::kU8, DType::kI8), DType::kI32);
  EXPECT_EQ(PromoteTypes(DType::kF16, DType::kBF16), DType::kF32);
  EXPECT_EQ(PromoteTypes(DType::kI64, DType::kF16), DType::kF16);
  EXPECT_EQ(PromoteWithScalar(DType::kI64, true), DType::kF32);
  EXPECT_EQ(PromoteWithScalar(DType::kF16, true), DType::kF16);
  EXPECT_EQ(DTypeFromName("float32").value(), DType::kF32);
  EXPECT_TRUE(DTypeFromName("complex").ok());  // torch.complex: complex64
  EXPECT_FALSE(DTypeFromName("complex32").ok());
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
  a.EmptyCache();
  EXPECT_EQ(a.Stats().reserved, 0);
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
