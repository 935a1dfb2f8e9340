// The OpenCL dispatch library's bounded Wait: a run past ONEFLOW_LIKE_OPENCL_TIMEOUT_S fails with
// an error naming the plugin, and the device never writes into the caller's memory afterwards
// (the output page is unmapped right after the time-out: a late write would crash the test).
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "compiler/plugin/plugin_loader.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::plugin {
namespace {

// in[0]: start value, in[1]: iterations of a dependent multiply-add chain (about 1 ns each).
constexpr char kSpinPlan[] = R"(oflcl 1
input 0 8
output 0 4
kernel spin 1 1 i0 o0
---
__kernel void spin(__global const float* in, __global float* out) {
  float x = in[0];
  const int n = (int)in[1];
  for (int i = 0; i < n; ++i) x = x * 0.5f + 1.0f;
  out[0] = x;
}
)";

struct Loaded {
  std::shared_ptr<const DispatchLibrary> lib;
  OflDispatchDeviceContext* ctx = nullptr;
  OflDispatchInvocation* inv = nullptr;
};

Loaded Load() {
  char cwd[4096];
  Loaded l;
  auto lib = DispatchLibrary::Load(std::string(getcwd(cwd, sizeof cwd)) +
                                   "/plugins/opencl/libofl_opencl_dispatch.so");
  EXPECT_TRUE(lib.ok()) << lib.status();
  if (!lib.ok()) return l;
  l.lib = *lib;
  EXPECT_EQ(l.lib->context_create(&l.ctx), kOflOk) << l.lib->get_last_error();
  EXPECT_EQ(l.lib->load_bytecode(l.ctx, kSpinPlan, sizeof kSpinPlan - 1, "spin", &l.inv), kOflOk)
      << l.lib->get_last_error();
  return l;
}

TEST(OpenClWaitTest, TimedOutRunFailsAndNeverWritesFreedMemory) {
  Loaded l = Load();
  ASSERT_NE(l.inv, nullptr);
  setenv("ONEFLOW_LIKE_OPENCL_TIMEOUT_S", "0.02", 1);
  const float in[2] = {0.f, 4e8f};  // a few tenths of a second on a CPU device
  const long page = sysconf(_SC_PAGESIZE);
  void* out = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(out, MAP_FAILED);
  ASSERT_EQ(l.lib->bind_input(l.inv, 0, in, sizeof in), kOflOk);
  ASSERT_EQ(l.lib->bind_output(l.inv, 0, out, 4), kOflOk);
  ASSERT_EQ(l.lib->invoke(l.inv), kOflOk) << l.lib->get_last_error();
  const OflStatus s = l.lib->wait(l.inv);
  EXPECT_EQ(s, kOflErrorRuntime);
  const Status st = l.lib->Error("Wait", s);
  EXPECT_NE(st.message().find("[dispatch libofl_opencl_dispatch.so]"), std::string::npos) << st;
  EXPECT_NE(st.message().find("OpenCL plugin"), std::string::npos) << st;
  EXPECT_NE(st.message().find("did not finish"), std::string::npos) << st;
  // A new run on the same invocation must not reuse memory the device still owns.
  EXPECT_EQ(l.lib->invoke(l.inv), kOflErrorRuntime);
  EXPECT_NE(std::string(l.lib->get_last_error()).find("still running"), std::string::npos);
  munmap(out, page);  // the caller frees its buffer: a late device write would fault
  const auto t0 = std::chrono::steady_clock::now();
  l.lib->unload_bytecode(l.inv);  // does not wait for the device
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the run ends, its state is freed
  l.lib->context_destroy(l.ctx);
}

TEST(OpenClWaitTest, RunWithinTheDeadlineWritesItsOutputs) {
  setenv("ONEFLOW_LIKE_OPENCL_TIMEOUT_S", "60", 1);
  Loaded l = Load();
  ASSERT_NE(l.inv, nullptr);
  const float in[2] = {0.f, 3.f};  // 0 -> 1 -> 1.5 -> 1.75
  float out = -1.f;
  for (int rep = 0; rep < 2; ++rep) {  // the invocation is reusable
    out = -1.f;
    ASSERT_EQ(l.lib->bind_input(l.inv, 0, in, sizeof in), kOflOk);
    ASSERT_EQ(l.lib->bind_output(l.inv, 0, &out, 4), kOflOk);
    ASSERT_EQ(l.lib->invoke(l.inv), kOflOk) << l.lib->get_last_error();
    ASSERT_EQ(l.lib->wait(l.inv), kOflOk) << l.lib->get_last_error();
    EXPECT_FLOAT_EQ(out, 1.75f);
  }
  l.lib->unload_bytecode(l.inv);
  l.lib->context_destroy(l.ctx);
}

}  // namespace
}  // namespace oneflow_like::hlo::plugin
