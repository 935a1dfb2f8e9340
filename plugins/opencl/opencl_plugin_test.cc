// The OpenCL plugin end to end on PoCL: HLO modules compiled with the plugin (partitions run as
// OpenCL kernels through libofl_opencl_dispatch.so) equal the reference evaluator, and the
// coverage report says what ran where.
#include <unistd.h>

#include "compiler/plugin/plugin_loader.h"
#include "compiler/tests/e2e_test_util.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {
namespace {

CompileOptions WithOpenCl(plugin::PluginReport* report) {
  char cwd[4096];
  CompileOptions o;
  auto lib = plugin::CompilerPluginLibrary::Load(std::string(getcwd(cwd, sizeof cwd)) +
                                                 "/plugins/opencl/libofl_opencl_compiler.so");
  EXPECT_TRUE(lib.ok()) << lib.status();
  if (lib.ok()) o.pipeline.plugins.push_back(*lib);
  o.pipeline.plugin_report = report;
  return o;
}

// Compiles with the plugin, compares with the evaluator; returns the report.
plugin::PluginReport Check(const std::string& text, double tol = 1e-5) {
  plugin::PluginReport report;
  auto exe = CompileAndCompare(text, tol, WithOpenCl(&report));
  EXPECT_NE(exe, nullptr);
  if (exe)
    EXPECT_TRUE(exe->ThunksToString().find("dispatch ") != std::string::npos)
        << exe->ThunksToString();
  return report;
}

TEST(OpenClPluginTest, MlpLayerSoftmaxAndReductions) {
  // Dot + bias + relu, a transposed-operand dot, softmax (max and sum reductions), a column sum.
  auto r = Check(R"(
HloModule mlp

%max (ma: f32[], mb: f32[]) -> f32[] {
  %ma = f32[] parameter(0)
  %mb = f32[] parameter(1)
  ROOT %m = f32[] maximum(%ma, %mb)
}

%add (sa: f32[], sb: f32[]) -> f32[] {
  %sa = f32[] parameter(0)
  %sb = f32[] parameter(1)
  ROOT %s = f32[] add(%sa, %sb)
}

ENTRY %main {
  %x = f32[5,16]{1,0} parameter(0)
  %w = f32[16,12]{1,0} parameter(1)
  %bias = f32[12]{0} parameter(2)
  %w2 = f32[10,12]{1,0} parameter(3)
  %zero = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  %d = f32[5,12]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[5,12]{1,0} broadcast(%bias), dimensions={1}
  %a = f32[5,12]{1,0} add(%d, %bb)
  %z = f32[5,12]{1,0} broadcast(%zero), dimensions={}
  %h = f32[5,12]{1,0} maximum(%a, %z)
  %l = f32[5,10]{1,0} dot(%h, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %mx = f32[5]{0} reduce(%l, %ninf), dimensions={1}, to_apply=%max
  %mxb = f32[5,10]{1,0} broadcast(%mx), dimensions={0}
  %sh = f32[5,10]{1,0} subtract(%l, %mxb)
  %ex = f32[5,10]{1,0} exponential(%sh)
  %sm = f32[5]{0} reduce(%ex, %zero), dimensions={1}, to_apply=%add
  %smb = f32[5,10]{1,0} broadcast(%sm), dimensions={0}
  %p = f32[5,10]{1,0} divide(%ex, %smb)
  %col = f32[12]{0} reduce(%h, %zero), dimensions={0}, to_apply=%add
  ROOT %t = (f32[5,10]{1,0}, f32[12]{0}) tuple(%p, %col)
}
)");
  ASSERT_EQ(r.partitions.size(), 1u) << r.ToString();
  EXPECT_EQ(r.backends.back().ops, 0) << r.ToString();  // nothing left on the CPU
}

TEST(OpenClPluginTest, ElementwiseSelectCompareTransposeSliceAndIntegers) {
  auto r = Check(R"(
HloModule misc

ENTRY %main {
  %x = f32[6,4]{1,0} parameter(0)
  %y = f32[4,6]{1,0} parameter(1)
  %i = s32[6,4]{1,0} parameter(2)
  %yt = f32[6,4]{1,0} transpose(%y), dimensions={1,0}
  %c = pred[6,4]{1,0} compare(%x, %yt), direction=LT
  %s = f32[6,4]{1,0} select(%c, %x, %yt)
  %th = f32[6,4]{1,0} tanh(%s)
  %lg = f32[6,4]{1,0} logistic(%x)
  %m = f32[6,4]{1,0} multiply(%th, %lg)
  %sl = f32[3,2]{1,0} slice(%m), slice={[0:6:2], [1:3]}
  %ii = s32[6,4]{1,0} multiply(%i, %i)
  %fi = f32[6,4]{1,0} convert(%ii)
  %sq = f32[6,4]{1,0} sqrt(%fi)
  %rs = f32[24]{0} reshape(%sq)
  ROOT %t = (f32[3,2]{1,0}, f32[24]{0}) tuple(%sl, %rs)
}
)");
  EXPECT_GE(r.partitions.size(), 1u) << r.ToString();
}

TEST(OpenClPluginTest, DoublePrecision) {
  // f64 (cl_khr_fp64): a normalisation as batch_norm's eval lowering computes it, and a dot.
  auto r = Check(R"(
HloModule f64

%sum (xa: f64[], xb: f64[]) -> f64[] {
  %xa = f64[] parameter(0)
  %xb = f64[] parameter(1)
  ROOT %xs = f64[] add(%xa, %xb)
}

ENTRY %main {
  %x = f32[4,6]{1,0} parameter(0)
  %w = f64[6,3]{1,0} parameter(1)
  %xd = f64[4,6]{1,0} convert(%x)
  %zero = f64[] constant(0)
  %eps = f64[] constant(1e-05)
  %s = f64[4]{0} reduce(%xd, %zero), dimensions={1}, to_apply=%sum
  %e = f64[4]{0} broadcast(%eps), dimensions={}
  %v = f64[4]{0} add(%s, %e)
  %q = f64[4]{0} sqrt(%v)
  %qb = f64[4,6]{1,0} broadcast(%q), dimensions={0}
  %n = f64[4,6]{1,0} divide(%xd, %qb)
  %d = f64[4,3]{1,0} dot(%n, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %f = f32[4,3]{1,0} convert(%d)
  ROOT %t = (f32[4,3]{1,0}) tuple(%f)
}
)",
                 1e-6);
  EXPECT_EQ(r.backends.back().ops, 0) << r.ToString();
}

TEST(OpenClPluginTest, UnsupportedOpsStayOnTheCpuWithTheirReason) {
  auto r = Check(R"(
HloModule mixed

ENTRY %main {
  %x = f32[4,4]{1,0} parameter(0)
  %e = f32[4,4]{1,0} exponential(%x)
  %pad0 = f32[] constant(0)
  %p = f32[6,4]{1,0} pad(%e, %pad0), padding=1_1x0_0
  %n = f32[6,4]{1,0} negate(%p)
  ROOT %t = (f32[6,4]{1,0}) tuple(%n)
}
)");
  ASSERT_EQ(r.fallbacks.size(), 1u) << r.ToString();
  EXPECT_EQ(r.fallbacks[0].opcode, "pad");
  EXPECT_NE(r.fallbacks[0].reason.find("not supported by the OpenCL plugin"), std::string::npos);
  EXPECT_EQ(r.partitions.size(), 2u) << r.ToString();
}

}  // namespace
}  // namespace oneflow_like::hlo
