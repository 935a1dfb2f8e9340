// ABI tests: loading, version and symbol checks (deliberately broken test plugins built from
// testdata/), the exported symbols of the plugin libraries (exactly the C ABI), and the test
// plugin end to end: its partitions run through its dispatch library, and a plugin that fails in
// Compile or Invoke gives an error naming it while the process stays usable.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "compiler/compile.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/plugin/plugin_loader.h"
#include "compiler/tests/e2e_test_util.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::plugin {
namespace {

std::string Runfile(const std::string& rel) {
  char cwd[4096];
  return std::string(getcwd(cwd, sizeof cwd)) + "/" + rel;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PluginLoaderTest, LoadsTheTestPlugin) {
  auto lib = CompilerPluginLibrary::Load(Runfile("compiler/plugin/libofl_test_plugin.so"));
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ((*lib)->manufacturer(), "TestVendor");
  EXPECT_EQ((*lib)->dispatch_library(), "libofl_test_dispatch.so");
  EXPECT_EQ((*lib)->version().major, OFL_PLUGIN_API_VERSION_MAJOR);
}

TEST(PluginLoaderTest, RefusesAnotherMajorVersionNamingBothVersions) {
  auto lib = CompilerPluginLibrary::Load(Runfile("compiler/plugin/libofl_test_plugin_v2.so"));
  ASSERT_FALSE(lib.ok());
  const std::string m(lib.status().message());
  EXPECT_TRUE(Has(m, "libofl_test_plugin_v2.so")) << m;
  EXPECT_TRUE(Has(m, "2.0.0")) << m;
  EXPECT_TRUE(Has(m, absl::StrFormat("%d.%d.%d", OFL_PLUGIN_API_VERSION_MAJOR,
                                     OFL_PLUGIN_API_VERSION_MINOR, OFL_PLUGIN_API_VERSION_PATCH)))
      << m;
}

TEST(PluginLoaderTest, RefusesAMissingSymbolNamingIt) {
  auto lib =
      CompilerPluginLibrary::Load(Runfile("compiler/plugin/libofl_test_plugin_no_compile.so"));
  ASSERT_FALSE(lib.ok());
  const std::string m(lib.status().message());
  EXPECT_TRUE(Has(m, "libofl_test_plugin_no_compile.so")) << m;
  EXPECT_TRUE(Has(m, "OflCompilerPluginCompile")) << m;
  auto d = DispatchLibrary::Load(Runfile("compiler/plugin/libofl_test_dispatch_no_wait.so"));
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(Has(std::string(d.status().message()), "OflDispatchWait")) << d.status();
  EXPECT_TRUE(Has(std::string(d.status().message()), "libofl_test_dispatch_no_wait.so"));
}

TEST(PluginLoaderTest, MissingFileIsAnError) {
  auto lib = CompilerPluginLibrary::Load("/nonexistent/libnothing.so");
  ASSERT_FALSE(lib.ok());
  EXPECT_TRUE(Has(std::string(lib.status().message()), "/nonexistent/libnothing.so"));
}

// `nm -D --defined-only`: the names of the functions a library exports.
std::set<std::string> ExportedFunctions(const std::string& path) {
  std::set<std::string> out;
  FILE* f = popen(("nm -D --defined-only " + path).c_str(), "r");
  if (f == nullptr) return out;
  std::array<char, 512> line;
  while (fgets(line.data(), line.size(), f)) {
    char type = 0;
    char name[400];
    if (std::sscanf(line.data(), "%*s %c %399s", &type, name) == 2) out.insert(name);
  }
  pclose(f);
  return out;
}

TEST(PluginAbiTest, LibrariesExportExactlyTheCAbi) {
  const std::set<std::string> compiler(CompilerPluginSymbols().begin(),
                                       CompilerPluginSymbols().end());
  const std::set<std::string> dispatch(DispatchSymbols().begin(), DispatchSymbols().end());
  EXPECT_EQ(ExportedFunctions(Runfile("plugins/opencl/libofl_opencl_compiler.so")), compiler);
  EXPECT_EQ(ExportedFunctions(Runfile("plugins/opencl/libofl_opencl_dispatch.so")), dispatch);
  EXPECT_EQ(ExportedFunctions(Runfile("compiler/plugin/libofl_test_plugin.so")), compiler);
  EXPECT_EQ(ExportedFunctions(Runfile("compiler/plugin/libofl_test_dispatch.so")), dispatch);
}

constexpr char kModule[] = R"(
HloModule tanh_mlp

ENTRY %main {
  %x = f32[4,8]{1,0} parameter(0)
  %w = f32[8,3]{1,0} parameter(1)
  %d = f32[4,3]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[4,3]{1,0} tanh(%d)
  %e = f32[4,3]{1,0} exponential(%t)
  %t2 = f32[4,3]{1,0} tanh(%e)
  ROOT %r = (f32[4,3]{1,0}) tuple(%t2)
}
)";

CompileOptions WithTestPlugin(PluginReport* report) {
  CompileOptions o;
  auto lib = CompilerPluginLibrary::Load(Runfile("compiler/plugin/libofl_test_plugin.so"));
  EXPECT_TRUE(lib.ok()) << lib.status();
  if (lib.ok()) o.pipeline.plugins.push_back(*lib);
  o.pipeline.plugin_report = report;
  return o;
}

TEST(PluginPassTest, TestPluginRunsItsPartitionsAndReportsCoverage) {
  PluginReport report;
  auto exe = CompileAndCompare(kModule, 1e-5, WithTestPlugin(&report));
  ASSERT_NE(exe, nullptr);
  EXPECT_TRUE(Has(exe->ThunksToString(), "dispatch %dispatch.")) << exe->ThunksToString();
  ASSERT_EQ(report.partitions.size(), 2u) << report.ToString();  // one per tanh (indices)
  ASSERT_EQ(report.backends.size(), 2u);
  EXPECT_EQ(report.backends[0].ops, 2);
  EXPECT_EQ(report.backends[1].name, "cpu");
  EXPECT_EQ(report.backends[1].ops, 2);  // dot, exponential
  ASSERT_EQ(report.fallbacks.size(), 2u);
  EXPECT_TRUE(Has(report.fallbacks[0].reason, "TestVendor runs f32 tanh only"))
      << report.ToString();
}

TEST(PluginPassTest, CompileAndInvokeErrorsNameThePluginAndLeaveItUsable) {
  setenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL", "compile", 1);
  auto failed = Compile(ParseHloModule(kModule).value(), WithTestPlugin(nullptr));
  unsetenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL");
  ASSERT_FALSE(failed.ok());
  const std::string m(failed.status().message());
  EXPECT_TRUE(Has(m, "TestVendor (libofl_test_plugin.so)")) << m;
  EXPECT_TRUE(Has(m, "deliberate compile failure")) << m;

  auto exe = Compile(ParseHloModule(kModule).value(), WithTestPlugin(nullptr));
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Literal> args = {RandomLiteral(HloShape(DType::kF32, {4, 8}), 1),
                               RandomLiteral(HloShape(DType::kF32, {8, 3}), 2)};
  setenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL", "invoke", 1);
  auto bad = RunOnLiterals(**exe, args);
  unsetenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL");
  ASSERT_FALSE(bad.ok());
  const std::string b(bad.status().message());
  EXPECT_TRUE(Has(b, "[plugin TestVendor (libofl_test_plugin.so)]")) << b;
  EXPECT_TRUE(Has(b, "deliberate invoke failure")) << b;
  auto good = RunOnLiterals(**exe, args);
  EXPECT_TRUE(good.ok()) << good.status();
}

}  // namespace
}  // namespace oneflow_like::hlo::plugin
