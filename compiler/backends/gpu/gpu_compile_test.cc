// Runs without a GPU: CompileGpuModule (passes -> buffer assignment -> GPU thunks -> NVRTC) on
// every test module, the thunk sequence it makes, and the errors for what has no GPU thunk.
#include "compiler/backends/gpu/gpu_compile.h"
#include "compiler/backends/gpu/gpu_thunks.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "compiler/backends/gpu/gpu_test_modules.h"
#include "compiler/ir/hlo_parser.h"
#include "gtest/gtest.h"
#include "device/cuda/device.h"

namespace oneflow_like::hlo {
namespace {

GpuCompileOptions TestOptions() {
  GpuCompileOptions o;
  o.pipeline.dump = DumpOptions();
  o.nvrtc.use_disk_cache = false;
  o.arch_from_device = false;
  return o;
}

StatusOr<GpuCompiledModule> CompileText(const std::string& text,
                                        const GpuCompileOptions& o = TestOptions()) {
  ASSIGN_OR_RETURN(auto m, ParseHloModule(text));
  return CompileGpuModule(std::move(m), o);
}

TEST(GpuCompileTest, EveryTestModuleCompilesToThunksAndPtx) {
  for (const auto& tm : gpu_test::Modules()) {
    auto c = CompileText(tm.text);
    ASSERT_TRUE(c.ok()) << tm.name << ": " << c.status();
    const std::string thunks = ThunkSequenceToString(c->emit.thunks);
    EXPECT_EQ(c->emit.stats.kernels, static_cast<int64_t>(c->emit.kernels.size())) << tm.name;
    for (const KernelSource& k : c->emit.kernels) {
      EXPECT_TRUE(absl::StrContains(c->image.image, absl::StrCat(".entry ", k.name, "(")))
          << tm.name << " " << k.name;
      EXPECT_TRUE(absl::StrContains(thunks, absl::StrCat(" ", k.name, " n="))) << thunks;
    }
    if (c->emit.kernels.empty()) {
      EXPECT_TRUE(c->image.image.empty()) << tm.name;
    }
    EXPECT_EQ(c->stats.arch, "compute_90");
  }
}

TEST(GpuCompileTest, MlpStepIsOneCommandBufferOfKernelsAndGemms) {
  auto c = CompileText(gpu_test::Find("mlp_step"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->emit.stats.gemms, 5);
  EXPECT_GE(c->emit.stats.kernels, 3);
  ASSERT_EQ(c->emit.thunks.size(), 1u);
  EXPECT_EQ(c->emit.command_buffers, 1);
  const std::string s = ThunkSequenceToString(c->emit.thunks);
  EXPECT_TRUE(absl::StartsWith(s, "command-buffer %mlp_step.command_buffer.0 (")) << s;
  EXPECT_TRUE(absl::StrContains(s, "  gemm %")) << s;
  EXPECT_TRUE(absl::StrContains(s, "cublas f32")) << s;
  EXPECT_TRUE(absl::StrContains(s, "block=256")) << s;
}

TEST(GpuCompileTest, CommandBuffersCanBeTurnedOff) {
  GpuCompileOptions o = TestOptions();
  o.emit.command_buffers = false;
  auto c = CompileText(gpu_test::Find("mlp_step"), o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->emit.command_buffers, 0);
  EXPECT_GT(c->emit.thunks.size(), 1u);
  EXPECT_FALSE(absl::StrContains(ThunkSequenceToString(c->emit.thunks), "command-buffer"));
}

TEST(GpuCompileTest, OpsWithoutAGpuThunkAreUnimplementedErrorsNamingThem) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {R"(HloModule conv
ENTRY %e {
  %x = f32[1,2,5,5] parameter(0)
  %k = f32[3,2,3,3] parameter(1)
  ROOT %myconv = f32[1,3,5,5] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
       "myconv (convolution) has no GPU thunk"},
      {R"(HloModule lib
ENTRY %e {
  %x = f32[4,16] parameter(0)
  ROOT %sm = f32[4,16] custom-call(%x), custom_call_target="log_softmax"
})",
       "sm (custom-call) has no GPU thunk: library call \"log_softmax\""},
      {R"(HloModule gather
ENTRY %e {
  %x = f32[5,8] parameter(0)
  %idx = s32[3,1] constant({1, 0, 4})
  ROOT %g = f32[3,8] gather(%x, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
})",
       "g (gather) has no GPU thunk"},
      {R"(HloModule reduce_to_apply
%mx (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %e {
  %x = f32[8,9] parameter(0)
  %ninf = f32[] constant(-inf)
  ROOT %r = f32[8] reduce(%x, %ninf), dimensions={1}, to_apply=%mx
})",
       "(fusion) has no GPU thunk: [codegen] reduce without a known kind"},
      {R"(HloModule loop
%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (t: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t = (s32[], f32[4]) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %v = f32[4] get-tuple-element(%t), index=1
  %v2 = f32[4] multiply(%v, %v)
  ROOT %r = (s32[], f32[4]) tuple(%j1, %v2)
}
ENTRY %e {
  %zero = s32[] constant(0)
  %x = f32[4] parameter(0)
  %init = (s32[], f32[4]) tuple(%zero, %x)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[4] get-tuple-element(%w), index=1
})",
       "w (while) has no GPU thunk"},
  };
  for (const Case& c : cases) {
    auto r = CompileText(c.text);
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), "[gpu emitter] ")) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), c.expect)) << r.status();
  }
}

// Custom-calls a handler registered for CUDA runs (the lazy runtime's op kernels) become library
// thunks between command buffers, never captured; the handler's compile-time check can refuse.
TEST(GpuCompileTest, RegisteredLibraryCallsBecomeUncapturedThunks) {
  static const bool registered = [] {
    DeviceExternalCall call;
    call.check = [](const std::string& target) -> Status {
      if (absl::EndsWith(target, ".missing"))
        return InvalidArgument("no CUDA kernel for %s", target);
      return Status();
    };
    call.run = [](const std::string&, const std::string&, absl::Span<const ExternalBuffer>,
                  absl::Span<const ExternalBuffer>, oneflow_like::Stream*) { return Status(); };
    RegisterDeviceExternalCallPrefix(DeviceType::kCUDA, "test.gpu_call.", std::move(call));
    return true;
  }();
  ASSERT_TRUE(registered);
  const char* text = R"(HloModule libcall
ENTRY %e {
  %x = f32[64] parameter(0)
  %one = f32[] constant(1)
  %b1 = f32[64] broadcast(%one), dimensions={}
  %a = f32[64] add(%x, %b1)
  %c = f32[64] custom-call(%a), custom_call_target="test.gpu_call.scale", backend_config="k:f=2"
  %e1 = f32[64] exponential(%c)
  ROOT %m = f32[64] multiply(%e1, %c)
})";
  auto c = CompileText(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->emit.stats.library_calls, 1);
  const std::string s = ThunkSequenceToString(c->emit.thunks);
  EXPECT_TRUE(absl::StrContains(s, "\"test.gpu_call.scale\"")) << s;
  for (const auto& t : c->emit.thunks) {
    if (t->kind() == Thunk::Kind::kLibraryCall) {
      EXPECT_FALSE(static_cast<const GpuThunk&>(*t).Capturable());
    } else if (t->kind() == Thunk::Kind::kSequential) {
      EXPECT_FALSE(absl::StrContains(t->ToString(0), "test.gpu_call")) << s;
    }
  }
  std::string missing = text;
  missing.replace(missing.find("test.gpu_call.scale"), 19, "test.gpu_call.missing");
  auto r = CompileText(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "no CUDA kernel for test.gpu_call.missing"))
      << r.status();
}

TEST(GpuCompileTest, DumpsTheTranslationUnitAndPtx) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  GpuCompileOptions o = TestOptions();
  o.pipeline.dump.dir = absl::StrCat(tmp ? tmp : "/tmp", "/gpu_dump");
  auto c = CompileText(gpu_test::Find("chain"), o);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const char* f : {"kernels.cu", "ptx", "9999.thunks.txt", "9998.buffer_assignment.txt"}) {
    FILE* in = std::fopen(absl::StrCat(o.pipeline.dump.dir, "/chain.", f).c_str(), "r");
    EXPECT_NE(in, nullptr) << f;
    if (in) std::fclose(in);
  }
}

TEST(GpuCompileTest, ArchFollowsTheDeviceWithinWhatNvrtcSupports) {
  EXPECT_EQ(GpuKernelCompiler::ArchForComputeCapability(90), "compute_90");
  EXPECT_EQ(GpuKernelCompiler::ArchForComputeCapability(80), "compute_80");
  EXPECT_EQ(GpuKernelCompiler::ArchForComputeCapability(86), "compute_86");
  // A device newer than this NVRTC knows gets the newest PTX it can write (forward compatible).
  const std::string future = GpuKernelCompiler::ArchForComputeCapability(990);
  EXPECT_TRUE(absl::StartsWith(future, "compute_")) << future;
  EXPECT_NE(future, "compute_990");
}

TEST(GpuCompileTest, CompileForGpuWithoutADeviceIsAFailedPrecondition) {
  if (cuda::DeviceCount() > 0) GTEST_SKIP() << "a device is present";
  auto m = ParseHloModule(gpu_test::Find("chain"));
  ASSERT_TRUE(m.ok());
  auto exe = CompileForGpu(std::move(m).value(), TestOptions());
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kFailedPrecondition) << exe.status();
  EXPECT_TRUE(absl::StrContains(exe.status().message(), cuda::NoDeviceReason())) << exe.status();
}

}  // namespace
}  // namespace oneflow_like::hlo
