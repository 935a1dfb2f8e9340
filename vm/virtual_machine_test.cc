// The threaded VirtualMachine: streams on worker threads, inline execution, backpressure,
// shutdown with work queued, releases, idle workers sleeping.
#include "vm/virtual_machine.h"

#include <pthread.h>
#include <time.h>

#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "vm/test_util.h"

namespace oneflow_like {
namespace vm {
namespace {

using testing::I64;
using testing::Issue;
using testing::NewBlob;
using testing::ReadI64;

VmOptions Opts(int64_t max_in_flight = 1 << 16, int64_t inline_limit = 0) {
  VmOptions o;
  o.max_in_flight = max_in_flight;
  o.inline_cost_limit = inline_limit;
  return o;
}

Device Cpu(int i) {
  return Device(DeviceType::kCPU, i);
}

TEST(VirtualMachineTest, ChainOfWritesComputesInOrder) {
  VirtualMachine vm(Opts());
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm, "init", {}, {a}, [&] {
                I64(a) = 1;
                return Status();
              }).ok());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(Issue(&vm, "mul_add", {a}, {a}, [&, i] {
                  I64(a) = (I64(a) * 3 + i) % 1000003;
                  return Status();
                }).ok());
  }
  int64_t want = 1;
  for (int i = 0; i < 1000; ++i) want = (want * 3 + i) % 1000003;
  auto got = ReadI64(&vm, a);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, want);
  EXPECT_TRUE(vm.SyncAll().ok());
  EXPECT_EQ(vm.num_live(), 0);
}

TEST(VirtualMachineTest, SmallInstructionsRunInlineOnAnIdleStream) {
  VirtualMachine vm(Opts(1 << 16, /*inline_limit=*/100));
  const std::thread::id caller = std::this_thread::get_id();
  auto a = NewBlob();
  std::thread::id small_on, big_on, never_on;
  ASSERT_TRUE(Issue(
                  &vm, "small", {}, {a},
                  [&] {
                    small_on = std::this_thread::get_id();
                    return Status();
                  },
                  10)
                  .ok());
  ASSERT_TRUE(Issue(
                  &vm, "big", {}, {a},
                  [&] {
                    big_on = std::this_thread::get_id();
                    return Status();
                  },
                  1000)
                  .ok());
  ASSERT_TRUE(Issue(&vm, "no_hint", {}, {a}, [&] {
                never_on = std::this_thread::get_id();
                return Status();
              }).ok());
  ASSERT_TRUE(vm.SyncAll().ok());
  EXPECT_EQ(small_on, caller);
  EXPECT_NE(big_on, caller);
  EXPECT_NE(never_on, caller);

  vm.set_inline_cost_limit(0);  // disabled: everything goes to the worker
  ASSERT_TRUE(Issue(
                  &vm, "small", {}, {a},
                  [&] {
                    small_on = std::this_thread::get_id();
                    return Status();
                  },
                  0)
                  .ok());
  ASSERT_TRUE(vm.SyncAll().ok());
  EXPECT_NE(small_on, caller);
}

TEST(VirtualMachineTest, InlineWaitsItsTurnBehindQueuedWorkOfTheSameBlob) {
  VirtualMachine vm(Opts(1 << 16, 100));
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm, "slow_init", {}, {a}, [&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                I64(a) = 5;
                return Status();
              }).ok());
  ASSERT_TRUE(Issue(
                  &vm, "small_inc", {a}, {a},
                  [&] {
                    I64(a) += 1;
                    return Status();
                  },
                  1)
                  .ok());
  auto got = ReadI64(&vm, a);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 6);
}

TEST(VirtualMachineTest, StreamsRunOnNamedThreadsConcurrently) {
  VirtualMachine vm(Opts());
  testing::Latch b_started;
  bool a_saw_b = false;
  char name[32] = {0};
  auto x = NewBlob(), y = NewBlob();
  // a (stream cpu:0) only finishes in time if b (stream cpu:1) runs at the same time.
  ASSERT_TRUE(Issue(
                  &vm, "a", {}, {x},
                  [&] {
                    pthread_getname_np(pthread_self(), name, sizeof(name));
                    a_saw_b = b_started.WaitFor(10);
                    return Status();
                  },
                  -1, Cpu(0))
                  .ok());
  ASSERT_TRUE(Issue(
                  &vm, "b", {}, {y},
                  [&] {
                    b_started.Open();
                    return Status();
                  },
                  -1, Cpu(1))
                  .ok());
  ASSERT_TRUE(vm.SyncAll().ok());
  EXPECT_TRUE(a_saw_b);
  EXPECT_STREQ(name, "ofl_cpu0_comput");  // "ofl_cpu0_compute" cut to 15 characters
}

TEST(VirtualMachineTest, BackpressureBlocksTheCallerWithoutDeadlock) {
  constexpr int kMax = 4, kN = 200;
  VirtualMachine vm(Opts(kMax));
  testing::Latch gate;
  std::atomic<int> issued{0};
  std::atomic<int64_t> max_live{0};
  auto a = NewBlob();
  std::thread caller([&] {
    (void)Issue(&vm, "gate", {}, {a}, [&] {
      gate.Wait();
      I64(a) = 0;
      return Status();
    });
    for (int i = 0; i < kN; ++i) {
      (void)Issue(&vm, "inc", {a}, {a}, [&] {
        I64(a) += 1;
        return Status();
      });
      int64_t live = vm.num_live();
      int64_t m = max_live.load();
      while (live > m && !max_live.compare_exchange_weak(m, live)) {}
      issued.fetch_add(1);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LE(issued.load(), kMax);  // the caller is parked on the bound
  EXPECT_LE(vm.num_live(), kMax);
  gate.Open();
  caller.join();
  auto got = ReadI64(&vm, a);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, kN);
  EXPECT_LE(max_live.load(), kMax);
}

TEST(VirtualMachineTest, BatchReceiveUnderBackpressureDoesNotDeadlock) {
  VirtualMachine vm(Opts(3));
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm, "init", {}, {a}, [&] {
                I64(a) = 0;
                return Status();
              }).ok());
  ASSERT_TRUE(PhysicalRun(&vm, [&](InstructionsBuilder* b) {
                for (int i = 0; i < 50; ++i) {
                  RETURN_IF_ERROR(
                      b->Push(Device::CPU(), StreamRole::kCompute,
                              std::make_unique<testing::FnPolicy>("inc", std::vector<BlobPtr>{a},
                                                                  std::vector<BlobPtr>{a}, [&] {
                                                                    I64(a) += 1;
                                                                    return Status();
                                                                  })));
                }
                return Status();
              }).ok());
  auto got = ReadI64(&vm, a);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 50);
}

TEST(VirtualMachineTest, InstructionsIssuedFromInsideAComputeNeverWaitOnBackpressure) {
  VirtualMachine vm(Opts(2));
  auto a = NewBlob();
  std::atomic<int> inner{0};
  ASSERT_TRUE(Issue(&vm, "outer", {}, {a}, [&] {
                for (int i = 0; i < 20; ++i) {
                  RETURN_IF_ERROR(Issue(&vm, "inner", {}, {NewBlob()}, [&] {
                    inner.fetch_add(1);
                    return Status();
                  }));
                }
                return Status();
              }).ok());
  ASSERT_TRUE(vm.SyncAll().ok());  // outer done: every inner one received
  ASSERT_TRUE(vm.SyncAll().ok());  // and now done
  EXPECT_EQ(inner.load(), 20);
}

TEST(VirtualMachineTest, ShutdownWithWorkQueuedDrainsEverything) {
  std::atomic<int> ran{0};
  constexpr int kN = 20000;
  std::vector<BlobPtr> blobs;
  for (int i = 0; i < 8; ++i) blobs.push_back(NewBlob());
  // The first op holds blobs[0] until the issuing loop is done (not a fixed sleep: an
  // instrumented -O0 build issues 20000 ops slower than any sleep would allow for).
  testing::Latch issued;
  {
    VirtualMachine vm(Opts());
    ASSERT_TRUE(Issue(&vm, "slow", {}, {blobs[0]}, [&] {
                  issued.WaitFor(30.0);
                  ran.fetch_add(1);
                  return Status();
                }).ok());
    for (int i = 1; i < kN; ++i) {
      auto& in = blobs[i % 8];
      auto& out = blobs[(i * 5 + 1) % 8];
      ASSERT_TRUE(Issue(
                      &vm, "op", {in}, {out},
                      [&] {
                        ran.fetch_add(1);
                        return Status();
                      },
                      -1, Cpu(i % 3))
                      .ok());
    }
    EXPECT_GT(vm.num_live(), 0);
    issued.Open();
  }  // destroyed with work pending: drains, joins
  EXPECT_EQ(ran.load(), kN);
  for (auto& b : blobs) EXPECT_TRUE(b->dependence()->idle());
}

TEST(VirtualMachineTest, WorkAfterShutdownRunsInlineAndConcurrentShutdownsAreSafe) {
  VirtualMachine vm(Opts());
  auto a = NewBlob();
  ASSERT_TRUE(Issue(&vm, "before", {}, {a}, [&] {
                I64(a) = 1;
                return Status();
              }).ok());
  std::thread t1([&] { vm.Shutdown(); }), t2([&] { vm.Shutdown(); });
  t1.join();
  t2.join();
  EXPECT_TRUE(vm.is_shut_down());
  std::thread::id on;
  ASSERT_TRUE(Issue(
                  &vm, "after", {a}, {a},
                  [&] {
                    on = std::this_thread::get_id();
                    I64(a) += 1;
                    return Status();
                  },
                  -1, Cpu(2))
                  .ok());  // a new stream after shutdown: no thread, inline
  EXPECT_EQ(on, std::this_thread::get_id());
  auto got = ReadI64(&vm, a);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 2);
  EXPECT_TRUE(vm.SyncAll().ok());
}

TEST(VirtualMachineTest, ReleaseBlobWaitsForTheLastReader) {
  VirtualMachine vm(Opts());
  auto a = NewBlob(4096);
  testing::Latch gate;
  ASSERT_TRUE(Issue(&vm, "w", {}, {a}, [&] {
                I64(a) = 3;
                return Status();
              }).ok());
  ASSERT_TRUE(vm.SyncAll().ok());
  void* data_seen_by_reader = nullptr;
  ASSERT_TRUE(Issue(&vm, "slow_reader", {a}, {}, [&] {
                gate.Wait();
                data_seen_by_reader = a->data();
                return Status();
              }).ok());
  vm.ReleaseBlob(a);  // live reader: enqueued, not freed now
  EXPECT_NE(a->data(), nullptr);
  gate.Open();
  ASSERT_TRUE(vm.SyncAll().ok());
  EXPECT_NE(data_seen_by_reader, nullptr);
  EXPECT_EQ(a->data(), nullptr);
  auto b = NewBlob(4096);
  ASSERT_TRUE(Issue(&vm, "w", {}, {b}, nullptr).ok());
  ASSERT_TRUE(vm.SyncAll().ok());
  vm.ReleaseBlob(b);  // idle: freed at once
  EXPECT_EQ(b->data(), nullptr);
}

TEST(VirtualMachineTest, ManyCallerThreads) {
  VirtualMachine vm(Opts(256, 100));
  constexpr int kThreads = 4, kPer = 2000;
  std::vector<BlobPtr> blobs;
  for (int t = 0; t < kThreads; ++t) blobs.push_back(NewBlob());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto b = blobs[t];
      (void)Issue(&vm, "init", {}, {b}, [b] {
        I64(b) = 0;
        return Status();
      });
      for (int i = 0; i < kPer; ++i) {
        (void)Issue(
            &vm, "inc", {b}, {b},
            [b] {
              I64(b) += 1;
              return Status();
            },
            i % 2 ? 1 : -1, Cpu(t % 2));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& b : blobs) {
    auto got = ReadI64(&vm, b);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, kPer);
  }
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(VirtualMachineTest, IdleWorkersSleep) {
  VirtualMachine vm(Opts());
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(Issue(&vm, "x", {}, {NewBlob()}, nullptr, -1, Cpu(i)).ok());
  ASSERT_TRUE(vm.SyncAll().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past any spin
  double before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  double used = ProcessCpuSeconds() - before;
  EXPECT_LT(used, 0.02) << "4 idle stream workers burned " << used << " s of CPU in 0.2 s";
}

}  // namespace
}  // namespace vm
}  // namespace oneflow_like
