// Failing instructions never abort: the error sits on the instruction and its written blobs,
// surfaces at the next sync with the instruction's name, and a clean overwrite heals the blob.
// Out of memory in Prepare: the cache is shrunk and the request retried once before failing.
#include <stdexcept>
#include <string>

#include "gtest/gtest.h"
#include "oneflow_like/base/allocator.h"
#include "vm/issue_site.h"
#include "vm/test_util.h"

namespace oneflow_like {
namespace vm {
namespace {

using testing::I64;
using testing::Issue;
using testing::NewBlob;
using testing::ReadI64;

bool Contains(const Status& s, const std::string& part) {
  return std::string(s.message()).find(part) != std::string::npos;
}

class ErrorTest : public ::testing::Test {
 protected:
  ErrorTest() : vm_(Opts()) {}
  static VmOptions Opts() {
    VmOptions o;
    o.inline_cost_limit = 0;
    return o;
  }
  VirtualMachine vm_;
};

TEST_F(ErrorTest, StatusErrorReachesTheNextSyncWithTheInstructionsName) {
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm_, "gather", {}, {a}, [] {
                return OutOfRange("index 12 out of range for size 10");
              }).ok());
  auto got = ReadI64(&vm_, a);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(Contains(got.status(), "[gather] index 12 out of range for size 10")) << got.status();
  // Reading again still reports it: the error stays on the blob until overwritten.
  EXPECT_FALSE(ReadI64(&vm_, a).ok());
  // Raised by the read already: the next SyncAll does not raise it a second time.
  EXPECT_TRUE(vm_.SyncAll().ok());
}

TEST_F(ErrorTest, ExceptionIsCaughtAndReported) {
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm_, "matmul", {}, {a}, []() -> Status {
                throw std::runtime_error("bad shapes");
              }).ok());
  auto got = ReadI64(&vm_, a);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(Contains(got.status(), "[matmul] exception: bad shapes")) << got.status();
  ASSERT_TRUE(Issue(&vm_, "odd_throw", {}, {a}, []() -> Status { throw 42; }).ok());
  EXPECT_TRUE(Contains(ReadI64(&vm_, a).status(), "[odd_throw] unknown exception"));
  (void)vm_.SyncAll();
}

TEST_F(ErrorTest, DownstreamPropagatesUnrelatedWorkContinuesOverwriteHeals) {
  auto x = NewBlob(), y = NewBlob(), z = NewBlob(), other = NewBlob();
  std::atomic<bool> downstream_ran{false};
  ASSERT_TRUE(Issue(&vm_, "bad_op", {}, {x}, [] {
                return InvalidArgument("[bad_op] shape mismatch: got f32[3] and f32[4]");
              }).ok());
  ASSERT_TRUE(Issue(&vm_, "relu", {x}, {y}, [&] {
                downstream_ran = true;
                return Status();
              }).ok());
  ASSERT_TRUE(Issue(&vm_, "exp", {y}, {z}, [&] {
                downstream_ran = true;
                return Status();
              }).ok());
  ASSERT_TRUE(Issue(&vm_, "unrelated", {}, {other}, [&] {
                I64(other) = 9;
                return Status();
              }).ok());
  auto z_val = ReadI64(&vm_, z);
  ASSERT_FALSE(z_val.ok());
  // The original producer's name, once (not "[bad_op] [bad_op]"), and the original code.
  EXPECT_TRUE(Contains(z_val.status(), "[bad_op] shape mismatch")) << z_val.status();
  EXPECT_FALSE(Contains(z_val.status(), "[bad_op] [bad_op]")) << z_val.status();
  EXPECT_EQ(z_val.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(downstream_ran.load());
  auto o = ReadI64(&vm_, other);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*o, 9);
  // A clean overwrite of x heals it; y stays failed until it is recomputed.
  ASSERT_TRUE(Issue(&vm_, "fill", {}, {x}, [&] {
                I64(x) = 4;
                return Status();
              }).ok());
  auto xv = ReadI64(&vm_, x);
  ASSERT_TRUE(xv.ok()) << xv.status();
  EXPECT_EQ(*xv, 4);
  EXPECT_FALSE(ReadI64(&vm_, y).ok());
  ASSERT_TRUE(Issue(&vm_, "relu", {x}, {y}, [&] {
                I64(y) = I64(x);
                return Status();
              }).ok());
  auto yv = ReadI64(&vm_, y);
  ASSERT_TRUE(yv.ok());
  EXPECT_EQ(*yv, 4);
  EXPECT_TRUE(vm_.SyncAll().ok());  // the read of z raised it already
}

TEST_F(ErrorTest, SyncAllReportsTheFirstErrorOnly) {
  auto a = NewBlob(), b = NewBlob();
  ASSERT_TRUE(Issue(&vm_, "first", {}, {a}, [] { return Internal("one"); }).ok());
  ASSERT_TRUE(vm_.SyncAll().code() == absl::StatusCode::kInternal);
  ASSERT_TRUE(Issue(&vm_, "second", {a}, {b}, nullptr).ok());  // propagates "[first] one"
  ASSERT_TRUE(Issue(&vm_, "third", {}, {NewBlob()}, [] { return Internal("three"); }).ok());
  Status s = vm_.SyncAll();
  EXPECT_TRUE(Contains(s, "[first] one") || Contains(s, "[third] three")) << s;
  EXPECT_TRUE(vm_.SyncAll().ok());
}

TEST_F(ErrorTest, FailingSyncCallbackReportsToItsCaller) {
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm_, "w", {}, {a}, [&] {
                I64(a) = 1;
                return Status();
              }).ok());
  Status s = SyncAccessBlob(&vm_, a, AccessMode::kRead,
                            [](void*) { return Internal("[numpy] copy failed"); });
  EXPECT_TRUE(Contains(s, "[numpy] copy failed")) << s;
  (void)vm_.SyncAll();
}

// OOM: uses the process-wide CPU allocator with a cap (this test binary owns it).
class OomTest : public ErrorTest {
 protected:
  void SetUp() override {
    alloc_ = CpuAllocator();
    alloc_->EmptyCache();
    base_ = alloc_->Stats().reserved;  // live segments of other blobs of this process
  }
  void TearDown() override {
    alloc_->SetLimit(0);
    alloc_->EmptyCache();
  }
  CachingAllocator* alloc_ = nullptr;
  int64_t base_ = 0;
};

constexpr int64_t kMiB = 1 << 20;

TEST_F(OomTest, PrepareFailsWithAClearMessage) {
  alloc_->SetLimit(base_ + 4 * kMiB);
  auto big = NewBlob(64 * kMiB);
  bool ran = false;
  ASSERT_TRUE(Issue(&vm_, "huge_op", {}, {big}, [&] {
                ran = true;
                return Status();
              }).ok());
  Status s = SyncAccessBlob(&vm_, big, AccessMode::kRead, [](void*) { return Status(); });
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(ran);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Contains(s, "[huge_op]")) << s;
  EXPECT_TRUE(Contains(s, "out of memory on cpu")) << s;
  EXPECT_TRUE(Contains(s, "requested 67108864 bytes")) << s;
  EXPECT_TRUE(Contains(s, "allocated")) << s;
  EXPECT_TRUE(Contains(s, "reserved")) << s;
  (void)vm_.SyncAll();
  // The VM keeps going once memory is available.
  alloc_->SetLimit(0);
  ASSERT_TRUE(Issue(&vm_, "huge_op", {}, {big}, nullptr).ok());
  EXPECT_TRUE(SyncAccessBlob(&vm_, big, AccessMode::kRead, [](void*) { return Status(); }).ok());
}

TEST_F(OomTest, CacheIsShrunkAndTheRequestRetriedOnce) {
  // Leave a 4 MiB segment cached (free, reserved), then cap reserved so a 6 MiB segment only
  // fits once that cache is returned to the system.
  {
    auto tmp = NewBlob(3 * kMiB + 1);
    ASSERT_TRUE(Issue(&vm_, "tmp", {}, {tmp}, nullptr).ok());
    ASSERT_TRUE(vm_.SyncAll().ok());
    vm_.ReleaseBlob(tmp);
  }
  ASSERT_TRUE(vm_.SyncAll().ok());
  AllocatorStats before = alloc_->Stats();
  ASSERT_EQ(before.reserved, base_ + 4 * kMiB);
  alloc_->SetLimit(base_ + 6 * kMiB);
  auto out = NewBlob(5 * kMiB + 1);
  ASSERT_TRUE(Issue(&vm_, "needs_6mib", {}, {out}, [&] {
                I64(out) = 1;
                return Status();
              }).ok());
  auto v = ReadI64(&vm_, out);
  ASSERT_TRUE(v.ok()) << v.status();
  AllocatorStats after = alloc_->Stats();
  EXPECT_EQ(after.reserved, base_ + 6 * kMiB);  // the 4 MiB cache went back to the system
  EXPECT_EQ(after.num_system_allocs, before.num_system_allocs + 1);
  // Without the cache to give back, the same request fails.
  alloc_->SetLimit(base_ + 6 * kMiB);
  auto out2 = NewBlob(5 * kMiB + 1);
  ASSERT_TRUE(Issue(&vm_, "needs_6mib_more", {}, {out2}, nullptr).ok());
  Status s = ReadI64(&vm_, out2).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_TRUE(Contains(s, "[needs_6mib_more]")) << s;
  (void)vm_.SyncAll();
  vm_.ReleaseBlob(out);
  vm_.ReleaseBlob(out2);
}

// The front end's issue-site hooks: the site captured when an instruction is received names it
// in its error message (vm/issue_site.h); instructions issued while no hook is set name none.
uint32_t FakeSite() {
  return 7;
}
std::string DescribeFake(uint32_t id) {
  return id == 7 ? "train.py:12 in step" : "";
}

TEST_F(ErrorTest, ErrorNamesTheSiteThatIssuedTheInstruction) {
  SetIssueSiteHooks({&FakeSite, &DescribeFake});
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm_, "gather", {}, {a}, [] { return OutOfRange("index 12"); }).ok());
  Status s = vm_.SyncAll();
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(Contains(s, "[gather] index 12")) << s;
  EXPECT_TRUE(Contains(s, "(issued at train.py:12 in step)")) << s;
  SetIssueSiteHooks({});
  ASSERT_TRUE(Issue(&vm_, "gather", {}, {a}, [] { return OutOfRange("index 13"); }).ok());
  s = vm_.SyncAll();
  EXPECT_TRUE(Contains(s, "[gather] index 13")) << s;
  EXPECT_FALSE(Contains(s, "issued at")) << s;
}

}  // namespace
}  // namespace vm
}  // namespace oneflow_like

namespace oneflow_like {
namespace vm {
namespace {

// An error already raised by a sync access is not raised again by the next SyncAll.
TEST(ErrorReporting, ReadErrorIsNotReportedTwice) {
  VirtualMachine* vm = VirtualMachine::Get();
  (void)vm->SyncAll();
  auto blob = std::make_shared<Blob>(Device::CPU(), 16);
  Status s =
      SyncAccessBlob(blob, AccessMode::kWrite, [](void*) { return Internal("[writer] boom"); });
  ASSERT_FALSE(s.ok());
  Status again = SyncAccessBlob(blob, AccessMode::kRead, [](void*) { return Status(); });
  EXPECT_FALSE(again.ok());
  EXPECT_TRUE(vm->SyncAll().ok());
}

}  // namespace
}  // namespace vm
}  // namespace oneflow_like
