// Runs without a GPU: every fusion of the test modules, after the full pipeline, goes through
// the emitter's CUDA dialect and NVRTC to PTX; plus errors, the ABI check and the disk cache.
#include "compiler/backends/gpu/gpu_kernel_compiler.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "compiler/backends/gpu/gpu_test_modules.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/pipeline.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {
namespace {

bool Contains(const std::string& s, const std::string& f) {
  return s.find(f) != std::string::npos;
}

// A private cache per test, so cache hits and misses are predictable.
class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp ? tmp : "/tmp", "/nvrtc_cache_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    setenv("ONEFLOW_LIKE_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { unsetenv("ONEFLOW_LIKE_CACHE_DIR"); }
  std::string dir_;
};

// The CUDA sources of every fusion of `text` after the pipeline; `unsupported` counts fusions
// the emitter declines (they would be an error on the GPU).
std::vector<KernelSource> FusionKernels(const std::string& text, int* unsupported) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  PipelineOptions opts;
  opts.dump = DumpOptions();
  Status s = RunHloPasses(m->get(), opts);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<KernelSource> out;
  for (const HloComputation* c : (*m)->computations()) {
    if (c->IsFusionComputation()) continue;
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() != HloOpcode::kFusion) continue;
      auto src = EmitFusionKernel(*i, GpuKernelName(*i), KernelDialect::kCuda);
      if (src.ok()) {
        out.push_back(std::move(src).value());
      } else {
        ++*unsupported;
        ADD_FAILURE() << i->ToString() << ": " << src.status();
      }
    }
  }
  return out;
}

TEST_F(NvrtcTest, EveryTestModuleFusionCompilesToPtx) {
  GpuKernelCompiler compiler;
  int total = 0;
  for (const auto& tm : gpu_test::Modules()) {
    int unsupported = 0;
    std::vector<KernelSource> kernels = FusionKernels(tm.text, &unsupported);
    EXPECT_EQ(unsupported, 0) << tm.name;
    if (kernels.empty()) continue;
    auto img = compiler.Compile(tm.name, kernels);
    ASSERT_TRUE(img.ok()) << tm.name << ": " << img.status();
    EXPECT_FALSE(img->is_cubin);
    EXPECT_TRUE(Contains(img->image, ".target sm_90")) << tm.name;
    for (const KernelSource& k : kernels) {
      EXPECT_TRUE(Contains(img->image, absl::StrCat(".visible .entry ", k.name, "(")))
          << tm.name << " " << k.name;
    }
    // The by-value argument block is read straight from kernel parameters (no local copy).
    // Only where no kernel calls sin/cos/pow/erf: their slow paths use local memory.
    bool math = false;
    for (const KernelSource& k : kernels)
      for (const char* fn : {"sin(", "cos(", "pow(", "erf("}) math |= Contains(k.code, fn);
    if (!math) {
      EXPECT_FALSE(Contains(img->image, ".local")) << tm.name << " copies arguments:\n"
                                                   << img->image;
    }
    total += kernels.size();
  }
  EXPECT_GE(total, 20);
}

TEST_F(NvrtcTest, EachKernelAloneAndCubinForSm80) {
  // One kernel per program (no help from neighbours' declarations) and a SASS target.
  NvrtcOptions o;
  o.arch = "sm_80";
  o.use_disk_cache = false;
  GpuKernelCompiler compiler(o);
  int unsupported = 0;
  for (const KernelSource& k : FusionKernels(gpu_test::Find("reductions"), &unsupported)) {
    auto img = compiler.Compile("reductions", {k});
    ASSERT_TRUE(img.ok()) << img.status();
    EXPECT_TRUE(img->is_cubin);
    EXPECT_EQ(img->image.compare(0, 4,
                                 "\x7f"
                                 "ELF"),
              0);
    EXPECT_TRUE(img->cache_path.empty());
  }
}

TEST_F(NvrtcTest, MalformedSourceIsAnErrorWithTheLogNamingTheKernel) {
  GpuKernelCompiler compiler;
  KernelSource good{
      "k_good",
      "extern \"C\" __global__ void k_good(char** args, int64_t begin, int64_t end) {\n"
      "  float* o = reinterpret_cast<float*>(args[0]);\n  o[begin] = 1.f;\n}\n",
      1, 1};
  KernelSource bad{
      "k_bad",
      "extern \"C\" __global__ void k_bad(char** args, int64_t begin, int64_t end) {\n"
      "  float* o = reinterpret_cast<float*>(args[0]);\n  o[begin] = undeclared_thing + 1;\n}\n",
      1, 1};
  auto img = compiler.Compile("broken", {good, bad});
  ASSERT_FALSE(img.ok());
  const std::string msg(img.status().message());
  EXPECT_EQ(img.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(msg, "[nvrtc] module broken")) << msg;
  EXPECT_TRUE(Contains(msg, "errors in k_bad)")) << msg;
  EXPECT_FALSE(Contains(msg, "k_good,")) << msg;
  EXPECT_TRUE(Contains(msg, "undeclared_thing")) << msg;  // the NVRTC log itself

  auto raw = compiler.CompileSource("raw", "this is not C++", {});
  ASSERT_FALSE(raw.ok());
  EXPECT_TRUE(Contains(std::string(raw.status().message()), "error")) << raw.status();
}

TEST_F(NvrtcTest, ForeignAbiAndBadArchAreErrors) {
  KernelSource k{"k_x", "extern \"C\" __global__ void k_x(float* out, int64_t n) {}\n", 1, 1};
  auto img = GpuKernelCompiler().Compile("abi", {k});
  ASSERT_FALSE(img.ok());
  EXPECT_TRUE(
      Contains(std::string(img.status().message()), "kernel k_x: expected the emitter's CUDA ABI"))
      << img.status();
  NvrtcOptions o;
  o.arch = "volta";
  int unsupported = 0;
  auto kernels = FusionKernels(gpu_test::Find("chain"), &unsupported);
  auto arch = GpuKernelCompiler(o).Compile("chain", kernels);
  ASSERT_FALSE(arch.ok());
  EXPECT_TRUE(Contains(std::string(arch.status().message()), "arch must be")) << arch.status();
}

TEST_F(NvrtcTest, DiskCacheHitsOnSameSourceAndOptionsOnly) {
  int unsupported = 0;
  auto kernels = FusionKernels(gpu_test::Find("chain"), &unsupported);
  ASSERT_FALSE(kernels.empty());
  GpuKernelCompiler compiler;
  auto first = compiler.Compile("chain", kernels);
  auto second = compiler.Compile("chain", kernels);
  ASSERT_TRUE(first.ok() && second.ok()) << first.status() << second.status();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(first->image, second->image);
  EXPECT_EQ(first->cache_path, second->cache_path);
  EXPECT_TRUE(absl::StartsWith(first->cache_path, dir_ + "/gpu_")) << first->cache_path;
  NvrtcOptions o;
  o.extra_options = {"--fmad=false"};
  auto other = GpuKernelCompiler(o).Compile("chain", kernels);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cache_hit);
  EXPECT_NE(other->cache_path, first->cache_path);
  EXPECT_FALSE(GpuKernelCompiler::NvrtcVersion().empty());
}

}  // namespace
}  // namespace oneflow_like::hlo
