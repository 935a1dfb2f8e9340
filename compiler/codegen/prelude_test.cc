// The kernel preludes (prelude*.cc): the C++ prelude compiled by the system compiler with probe
// functions that call its helpers (behaviour: expf accuracy, NaN-propagating max/min, wrapping
// integer arithmetic, logical shifts); the CUDA prelude's text (NVRTC has no standard headers).
#include "compiler/codegen/prelude.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "compiler/backends/cpu/cpu_jit.h"
#include "compiler/codegen/fused_loop_emitter.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::codegen {
namespace {

constexpr char kProbes[] = R"(
extern "C" float probe_expf(float x) { return ofl_expf(x); }
extern "C" float probe_maxf(float a, float b) { return ofl_max(a, b); }
extern "C" float probe_minf(float a, float b) { return ofl_min(a, b); }
extern "C" int32_t probe_wadd(int32_t a, int32_t b) { return ofl_wadd(a, b); }
extern "C" int64_t probe_wmul(int64_t a, int64_t b) { return ofl_wmul(a, b); }
extern "C" int32_t probe_shrl(int32_t a, int32_t s) { return ofl_shrl(a, s); }
extern "C" int32_t probe_idiv(int32_t a, int32_t b) { return ofl_idiv(a, b); }
)";

class CppPreludeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    setenv("ONEFLOW_LIKE_CACHE_DIR", absl::StrCat(tmp ? tmp : "/tmp", "/prelude_kcache").c_str(),
           1);
    auto lib = CompileAndLoadKernels(KernelPrelude(KernelDialect::kCpp) + kProbes);
    ASSERT_TRUE(lib.ok()) << lib.status();
    lib_ = new std::shared_ptr<KernelLibrary>(*lib);
  }
  template <typename Fn>
  static Fn Get(const char* name) {
    auto sym = (*lib_)->Resolve(name);
    EXPECT_TRUE(sym.ok()) << sym.status();
    return reinterpret_cast<Fn>(*sym);
  }
  static std::shared_ptr<KernelLibrary>* lib_;
};
std::shared_ptr<KernelLibrary>* CppPreludeTest::lib_ = nullptr;

TEST_F(CppPreludeTest, ExpfIsWithinOneUlpAndHandlesSpecials) {
  auto expf = Get<float (*)(float)>("probe_expf");
  for (float x = -100.f; x <= 88.f; x += 0.37f) {
    const double want = std::exp(static_cast<double>(x));
    const float got = expf(x);
    const float ulp = std::nextafter(static_cast<float>(want), INFINITY) - static_cast<float>(want);
    EXPECT_LE(std::fabs(got - want), 1.01 * ulp) << x;
  }
  EXPECT_TRUE(std::isnan(expf(NAN)));
  EXPECT_EQ(expf(INFINITY), INFINITY);
  EXPECT_EQ(expf(-INFINITY), 0.f);
}

TEST_F(CppPreludeTest, MaxMinPropagateNaN) {
  auto mx = Get<float (*)(float, float)>("probe_maxf");
  auto mn = Get<float (*)(float, float)>("probe_minf");
  EXPECT_EQ(mx(1.f, 2.f), 2.f);
  EXPECT_EQ(mn(1.f, 2.f), 1.f);
  EXPECT_TRUE(std::isnan(mx(NAN, 2.f)));
  EXPECT_TRUE(std::isnan(mx(2.f, NAN)));
  EXPECT_TRUE(std::isnan(mn(NAN, 2.f)));
}

TEST_F(CppPreludeTest, IntegerHelpersWrapAndAreDefinedEverywhere) {
  EXPECT_EQ(Get<int32_t (*)(int32_t, int32_t)>("probe_wadd")(INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(Get<int64_t (*)(int64_t, int64_t)>("probe_wmul")(INT64_MAX, 2), -2);
  auto shrl = Get<int32_t (*)(int32_t, int32_t)>("probe_shrl");
  EXPECT_EQ(shrl(-1, 28), 15);
  EXPECT_EQ(shrl(-1, 32), 0);
  EXPECT_EQ(shrl(5, -1), 0);
  auto idiv = Get<int32_t (*)(int32_t, int32_t)>("probe_idiv");
  EXPECT_EQ(idiv(7, 2), 3);
  EXPECT_EQ(idiv(7, 0), -1);
}

TEST(CudaPreludeTest, NeedsNoHeadersAndDefinesDeviceHelpers) {
  const std::string s = KernelPrelude(KernelDialect::kCuda);
  EXPECT_EQ(s.find("#include"), std::string::npos);
  EXPECT_EQ(s.find("std::"), std::string::npos);
  EXPECT_NE(s.find("typedef long long int64_t;"), std::string::npos);
  EXPECT_NE(s.find("#define OFL_FN static __device__ inline"), std::string::npos);
  // The shared helpers follow the dialect part in both preludes.
  EXPECT_EQ(s.substr(CudaPrelude().size()), SharedPrelude());
  EXPECT_EQ(KernelPrelude(KernelDialect::kCpp).substr(CppPrelude().size()), SharedPrelude());
  EXPECT_NE(SharedPrelude().find("ofl_max"), std::string::npos);
}

}  // namespace
}  // namespace oneflow_like::hlo::codegen
