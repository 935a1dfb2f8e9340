// Fork safety: after fork the child has none of the parent's threads. VirtualMachine::Get()
// must start a fresh VM there, and the intra-op pool must not wait for workers that are gone.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#if defined(__SANITIZE_ADDRESS__)
// A forked child cannot see the stacks of the parent's threads, so whatever they held looks
// leaked there: leak checking is off for this binary (the other vm tests keep it).
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}
#endif

#include "gtest/gtest.h"
#include "oneflow_like/base/thread_pool.h"
#include "vm/test_util.h"

namespace oneflow_like {
namespace vm {
namespace {

using testing::I64;
using testing::NewBlob;

// Runs `child` in a forked process with a watchdog; returns its exit code (or 100 + signal).
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() \
  GTEST_SKIP() << "ThreadSanitizer cannot start threads after a multi-threaded fork"
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

template <typename F>
int RunInChild(F child) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20);  // a hang in the child becomes SIGALRM, not a stuck test
    _exit(child());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

Status IssueInc(VirtualMachine* vm, const BlobPtr& b, int n) {
  return PhysicalRun(vm, [&](InstructionsBuilder* builder) {
    for (int i = 0; i < n; ++i) {
      RETURN_IF_ERROR(
          builder->Push(Device::CPU(), StreamRole::kCompute,
                        std::make_unique<testing::FnPolicy>("inc", std::vector<BlobPtr>{b},
                                                            std::vector<BlobPtr>{b}, [b] {
                                                              I64(b) += 1;
                                                              return Status();
                                                            })));
    }
    return Status();
  });
}

TEST(ForkTest, SingletonVmAndIntraOpPoolWorkInTheChild) {
  SKIP_UNDER_TSAN();
  VirtualMachine* parent_vm = VirtualMachine::Get();
  auto a = NewBlob();
  ASSERT_TRUE(testing::Issue(parent_vm, "init", {}, {a}, [a] {
                I64(a) = 0;
                return Status();
              }).ok());
  ASSERT_TRUE(IssueInc(parent_vm, a, 1000).ok());  // fork drains these first (atfork prepare)
  std::atomic<int64_t> sum{0};
  IntraOpPool()->ParallelFor(1000, 10,
                             [&](int64_t b, int64_t e) { sum += e - b; });  // pool threads exist
  ASSERT_EQ(sum.load(), 1000);

  int code = RunInChild([&] {
    VirtualMachine* vm = VirtualMachine::Get();
    if (vm == parent_vm) return 2;  // the parent's VM has no threads here
    auto v = testing::ReadI64(vm, a);
    if (!v.ok() || *v != 1000) return 3;  // parent's work was drained before fork
    if (!IssueInc(vm, a, 500).ok()) return 4;
    v = testing::ReadI64(vm, a);
    if (!v.ok() || *v != 1500) return 5;
    std::atomic<int64_t> child_sum{0};
    IntraOpPool()->ParallelFor(100000, 10, [&](int64_t b, int64_t e) { child_sum += e - b; });
    if (child_sum.load() != 100000) return 6;
    if (!vm->SyncAll().ok()) return 7;
    return 0;  // atexit is skipped by _exit; the child's VM threads die with it
  });
  EXPECT_EQ(code, 0);
  // The parent is unaffected.
  ASSERT_TRUE(IssueInc(parent_vm, a, 1).ok());
  auto v = testing::ReadI64(parent_vm, a);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 1001);
}

TEST(ForkTest, ChildExitingNormallyShutsDownCleanly) {
  SKIP_UNDER_TSAN();
  VirtualMachine::Get();
  int code = RunInChild([] {
    auto b = NewBlob();
    if (!testing::Issue(VirtualMachine::Get(), "w", {}, {b}, [b] {
           I64(b) = 1;
           return Status();
         }).ok())
      return 2;
    std::exit(0);  // runs atexit: the child's singleton drains and joins
    return 0;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace vm
}  // namespace oneflow_like
