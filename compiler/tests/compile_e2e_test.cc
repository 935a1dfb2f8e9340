// End to end: IR text -> Compile -> Executable::Run, checked against the reference evaluator.
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>

#include "compiler/device_compile.h"
#include "compiler/tests/e2e_test_util.h"

namespace oneflow_like::hlo {
namespace {

bool Contains(const std::string& s, const std::string& f) {
  return s.find(f) != std::string::npos;
}

TEST(CompileE2ETest, ElementwiseChainFusesIntoOneKernel) {
  auto exe = CompileAndCompare(R"(HloModule chain
ENTRY %e {
  %x = f32[37,53] parameter(0)
  %y = f32[37,53] parameter(1)
  %a = f32[37,53] multiply(%x, %y)
  %t = f32[37,53] tanh(%a)
  %half = f32[] constant(0.5)
  %hb = f32[37,53] broadcast(%half), dimensions={}
  %s = f32[37,53] add(%t, %hb)
  ROOT %r = f32[37,53] maximum(%s, %x)
})");
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->stats().emit.kernels, 1) << exe->ThunksToString();
  EXPECT_TRUE(exe->stats().emit.evaluator_fallbacks.empty()) << exe->stats().ToString();
}

// A counter-based hash (what dropout lowers to): i32 xor, logical shifts and multiplies that wrap,
// bit-exact against the evaluator; then a keep mask selecting scaled values.
TEST(CompileE2ETest, IntegerHashWrapsExactly) {
  auto exe = CompileAndCompare(R"(HloModule hash
ENTRY %e {
  %x = f32[6,37] parameter(0)
  %seed = s32[] parameter(1)
  %iota = s32[222] iota(), iota_dimension=0
  %idx = s32[6,37] reshape(%iota)
  %sb = s32[6,37] broadcast(%seed), dimensions={}
  %h0 = s32[6,37] xor(%idx, %sb)
  %c16 = s32[] constant(16)
  %s16 = s32[6,37] broadcast(%c16), dimensions={}
  %sh1 = s32[6,37] shift-right-logical(%h0, %s16)
  %x1 = s32[6,37] xor(%h0, %sh1)
  %k1 = s32[] constant(2146121005)
  %k1b = s32[6,37] broadcast(%k1), dimensions={}
  %m1 = s32[6,37] multiply(%x1, %k1b)
  %k2 = s32[] constant(-2073254261)
  %k2b = s32[6,37] broadcast(%k2), dimensions={}
  %m2 = s32[6,37] multiply(%m1, %k2b)
  %sh2 = s32[6,37] shift-right-logical(%m2, %s16)
  %h = s32[6,37] xor(%m2, %sh2)
  %big = s32[] constant(2147483000)
  %bigb = s32[6,37] broadcast(%big), dimensions={}
  %wrapped = s32[6,37] add(%h, %bigb)
  %c1 = s32[] constant(1)
  %c1b = s32[6,37] broadcast(%c1), dimensions={}
  %u = s32[6,37] shift-right-logical(%h, %c1b)
  %t = s32[] constant(214748364)
  %tb = s32[6,37] broadcast(%t), dimensions={}
  %keep = pred[6,37] compare(%u, %tb), direction=GE
  %scale = f32[] constant(2)
  %scb = f32[6,37] broadcast(%scale), dimensions={}
  %xs = f32[6,37] multiply(%x, %scb)
  %z = f32[] constant(0)
  %zb = f32[6,37] broadcast(%z), dimensions={}
  %out = f32[6,37] select(%keep, %xs, %zb)
  ROOT %r = (f32[6,37], s32[6,37], s32[6,37]) tuple(%out, %h, %wrapped)
})",
                               /*tol=*/0.0);
  ASSERT_TRUE(exe);
  EXPECT_TRUE(exe->stats().emit.evaluator_fallbacks.empty()) << exe->stats().ToString();
}

// f32 exp and logistic use the prelude's vectorisable ofl_expf: within 1-2 ulp of exp in double
// everywhere, with exact NaN / inf / 0 / denormal edges.
TEST(CompileE2ETest, FloatExpIsAccurateAtEveryScale) {
  auto module = ParseHloModule(R"(HloModule expf
ENTRY %e {
  %x = f32[4096] parameter(0)
  %ex = f32[4096] exponential(%x)
  %lg = f32[4096] logistic(%x)
  ROOT %t = (f32[4096], f32[4096]) tuple(%ex, %lg)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto exe = Compile(std::move(module).value());
  ASSERT_TRUE(exe.ok()) << exe.status();
  Literal x(ParseHloShape("f32[4096]").value());
  std::mt19937 gen(std::random_device{}());
  std::uniform_real_distribution<double> u(-110.0, 90.0);
  for (double& v : x.data) v = static_cast<float>(u(gen));
  const double edges[] = {0.0,
                          -0.0,
                          1e-30,
                          -1e-30,
                          88.72283,
                          88.7229,
                          -87.33,
                          -103.97,
                          -104.5,
                          89.5,
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN()};
  for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); ++i)
    x.data[i] = static_cast<float>(edges[i]);
  auto got = RunOnLiterals(**exe, {x});
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t i = 0; i < x.data.size(); ++i) {
    const double xi = x.data[i];
    const float want_exp = static_cast<float>(std::exp(xi)),
                want_lg = static_cast<float>(1.0 / (1.0 + std::exp(-xi)));
    const float e = static_cast<float>(got->elements[0].data[i]),
                l = static_cast<float>(got->elements[1].data[i]);
    if (std::isnan(xi)) {
      EXPECT_TRUE(std::isnan(e) && std::isnan(l)) << "exp(nan) = " << e;
      continue;
    }
    if (std::isinf(want_exp)) {
      EXPECT_TRUE(std::isinf(e) && e > 0) << "exp(" << xi << ") = " << e;
    } else if (want_exp < std::numeric_limits<float>::min()) {
      EXPECT_NEAR(e, want_exp, 3e-45f) << "exp(" << xi << ")";  // zero and denormals: 2 ulp
    } else {
      EXPECT_NEAR(e, want_exp, 2.5e-7 * want_exp) << "exp(" << xi << ")";
    }
    EXPECT_NEAR(l, want_lg, 4e-7 * std::max(want_lg, 1e-30f) + 1e-44) << "logistic(" << xi << ")";
  }
}

// Parameter donation: an update fusion may write over its parameter only when no other reader of
// the old value runs after it.
TEST(CompileE2ETest, DonatedParameterAliasesOnlyWhenNoLaterReader) {
  const std::string fused = R"(HloModule alias
%fused_upd (p0: f32[16], p1: f32[16]) -> f32[16] {
  %p0 = f32[16] parameter(0)
  %p1 = f32[16] parameter(1)
  ROOT %a = f32[16] add(%p0, %p1)
}
%fused_neg (q0: f32[16]) -> f32[16] {
  %q0 = f32[16] parameter(0)
  ROOT %n = f32[16] negate(%q0)
}
ENTRY %e {
  %w = f32[16] parameter(0)
  %x = f32[16] parameter(1)
)";
  const std::string upd = "  %upd = f32[16] fusion(%w, %x), kind=kLoop, calls=%fused_upd\n";
  const std::string reader = "  %late = f32[16] fusion(%w), kind=kLoop, calls=%fused_neg\n";
  const std::string root = "  ROOT %t = (f32[16], f32[16]) tuple(%upd, %late)\n}";
  // The run order is the scheduled instruction order: the old-value reader runs after the update
  // here...
  auto late = ParseHloModule(fused + upd + reader + root);
  ASSERT_TRUE(late.ok()) << late.status();
  FusionAliases f1;
  EXPECT_TRUE(AcceptOutputParameterAliases(**late, {{0, 0}}, &f1).empty());
  // ...and before it here, so the update may run in place (operand 0 of the fusion is w).
  auto early = ParseHloModule(fused + reader + upd + root);
  ASSERT_TRUE(early.ok()) << early.status();
  FusionAliases f2;
  auto ok = AcceptOutputParameterAliases(**early, {{0, 0}}, &f2);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0], (std::pair<int64_t, int64_t>{0, 0}));
  ASSERT_EQ(f2.size(), 1u);
  EXPECT_EQ(f2.begin()->second, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}}));
  // A parameter read through a transpose inside the update is not elementwise: refused.
  auto tr = ParseHloModule(R"(HloModule t
%fused_t (p0: f32[4,4]) -> f32[4,4] {
  %p0 = f32[4,4] parameter(0)
  %tp = f32[4,4] transpose(%p0), dimensions={1,0}
  ROOT %a = f32[4,4] add(%p0, %tp)
}
ENTRY %e {
  %w = f32[4,4] parameter(0)
  %u = f32[4,4] fusion(%w), kind=kLoop, calls=%fused_t
  ROOT %t = (f32[4,4]) tuple(%u)
})");
  ASSERT_TRUE(tr.ok()) << tr.status();
  FusionAliases f3;
  EXPECT_TRUE(AcceptOutputParameterAliases(**tr, {{0, 0}}, &f3).empty());
}

TEST(CompileE2ETest, ReductionsRowsColumnsAndAll) {
  CompileAndCompare(R"(HloModule reduce
%mx (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %e {
  %x = f32[16,33,7] parameter(0)
  %z = f32[] constant(0)
  %ex = f32[16,33,7] exponential(%x)
  %rows = f32[16,33] reduce(%ex, %z), dimensions={2}, kind=add
  %cols = f32[33,7] reduce(%x, %z), dimensions={0}, kind=add
  %ninf = f32[] constant(-inf)
  %all = f32[] reduce(%x, %ninf), dimensions={0,1,2}, to_apply=%mx
  ROOT %t = (f32[16,33], f32[33,7], f32[]) tuple(%rows, %cols, %all)
})");
}

const char* kMlpTrainStep = R"(HloModule mlp_train
ENTRY %step {
  %x = f32[32,64] parameter(0)
  %w1 = f32[64,128] parameter(1)
  %b1 = f32[128] parameter(2)
  %w2 = f32[128,10] parameter(3)
  %y = f32[32,10] parameter(4)
  %h = f32[32,128] dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[32,128] broadcast(%b1), dimensions={1}
  %hb = f32[32,128] add(%h, %bb)
  %zero = f32[] constant(0)
  %zeros = f32[32,128] broadcast(%zero), dimensions={}
  %relu = f32[32,128] maximum(%hb, %zeros)
  %out = f32[32,10] dot(%relu, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %diff = f32[32,10] subtract(%out, %y)
  %sq = f32[32,10] multiply(%diff, %diff)
  %sum = f32[] reduce(%sq, %zero), dimensions={0,1}, kind=add
  %n = f32[] constant(320)
  %loss = f32[] divide(%sum, %n)
  %two = f32[] constant(0.00625)
  %scale = f32[32,10] broadcast(%two), dimensions={}
  %dout = f32[32,10] multiply(%diff, %scale)
  %dw2 = f32[128,10] dot(%relu, %dout), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %drelu = f32[32,128] dot(%dout, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %pos = pred[32,128] compare(%hb, %zeros), direction=GT
  %dh = f32[32,128] select(%pos, %drelu, %zeros)
  %db1 = f32[128] reduce(%dh, %zero), dimensions={0}, kind=add
  %dw1 = f32[64,128] dot(%x, %dh), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %lr = f32[] constant(0.1)
  %lr1 = f32[64,128] broadcast(%lr), dimensions={}
  %u1 = f32[64,128] multiply(%dw1, %lr1)
  %nw1 = f32[64,128] subtract(%w1, %u1)
  %lrb = f32[128] broadcast(%lr), dimensions={}
  %ub = f32[128] multiply(%db1, %lrb)
  %nb1 = f32[128] subtract(%b1, %ub)
  %lr2 = f32[128,10] broadcast(%lr), dimensions={}
  %u2 = f32[128,10] multiply(%dw2, %lr2)
  %nw2 = f32[128,10] subtract(%w2, %u2)
  ROOT %r = (f32[], f32[64,128], f32[128], f32[128,10]) tuple(%loss, %nw1, %nb1, %nw2)
})";

TEST(CompileE2ETest, MlpForwardBackwardAndSgdStep) {
  auto exe = CompileAndCompare(kMlpTrainStep, 1e-4);
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->stats().emit.gemms, 5) << exe->ThunksToString();
  EXPECT_TRUE(exe->stats().emit.evaluator_fallbacks.empty()) << exe->stats().ToString();
  const BufferAssignment& ba = exe->buffer_assignment();
  EXPECT_LE(ba.lower_bound_bytes(), ba.temp_bytes());
  EXPECT_GT(ba.temp_bytes(), 0);
}

TEST(CompileE2ETest, NonDefaultLayoutsAtTheBoundary) {
  CompileAndCompare(R"(HloModule layouts
ENTRY %e {
  %x = f32[5,7]{0,1} parameter(0)
  %y = f32[5,7] parameter(1)
  %a = f32[5,7] add(%x, %y)
  ROOT %t = f32[5,7]{0,1} exponential(%a)
})");
}

TEST(CompileE2ETest, DataMovementOps) {
  CompileAndCompare(R"(HloModule moves
ENTRY %e {
  %x = f32[6,4] parameter(0)
  %t = f32[4,6] transpose(%x), dimensions={1,0}
  %s = f32[4,3] slice(%t), slice={[0:4], [1:6:2]}
  %v = f32[] constant(-2)
  %p = f32[6,7] pad(%s, %v), padding=1_1x2_2_0
  %i = s32[6,7] iota(), iota_dimension=1
  %c = f32[6,7] convert(%i)
  %cat = f32[12,7] concatenate(%p, %c), dimensions={0}
  %r = f32[84] reshape(%cat)
  %rr = f32[7,12] reshape(%r)
  ROOT %n = f32[7,12] negate(%rr)
})");
}

TEST(CompileE2ETest, LibraryCallsConvolutionAndFallbacks) {
  auto exe = CompileAndCompare(R"(HloModule lib
ENTRY %e {
  %x = f32[2,3,8,8] parameter(0)
  %k = f32[4,3,3,3] parameter(1)
  %conv = f32[2,4,8,8] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  %pool = f32[2,4,4,4] custom-call(%conv), custom_call_target="max_pool2d", backend_config="kernel=2,2;stride=2,2"
  %flat = f32[2,64] reshape(%pool)
  %sm = f32[2,64] custom-call(%flat), custom_call_target="log_softmax"
  %ln = f32[2,64] custom-call(%sm), custom_call_target="layer_norm", backend_config="eps=1e-5"
  %idx = s32[3,1] constant({1, 0, 1})
  ROOT %g = f32[3,64] gather(%ln, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,64}
})",
                               2e-4);
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->stats().emit.convolutions, 1);
  EXPECT_EQ(exe->stats().emit.library_calls, 3);
  EXPECT_EQ(exe->stats().emit.evaluator_fallbacks.size(), 1u) << exe->stats().ToString();
}

TEST(CompileE2ETest, WhileAndConditional) {
  CompileAndCompare(R"(HloModule control
%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (t: (s32[], f32[8])) -> (s32[], f32[8]) {
  %t = (s32[], f32[8]) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %v = f32[8] get-tuple-element(%t), index=1
  %v2 = f32[8] multiply(%v, %v)
  %c = f32[] constant(0.5)
  %cb = f32[8] broadcast(%c), dimensions={}
  %v3 = f32[8] add(%v2, %cb)
  ROOT %r = (s32[], f32[8]) tuple(%j1, %v3)
}
%yes (a: f32[8]) -> f32[8] {
  %a = f32[8] parameter(0)
  ROOT %e = f32[8] exponential(%a)
}
%no (b: f32[8]) -> f32[8] {
  %b = f32[8] parameter(0)
  ROOT %ng = f32[8] negate(%b)
}
ENTRY %e {
  %zero = s32[] constant(0)
  %x = f32[8] parameter(0)
  %init = (s32[], f32[8]) tuple(%zero, %x)
  %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body
  %out = f32[8] get-tuple-element(%w), index=1
  %p = pred[] parameter(1)
  %cond_out = f32[8] conditional(%p, %out, %x), branch_computations={%yes, %no}
  ROOT %res = (f32[8], f32[8]) tuple(%out, %cond_out)
})",
                    1e-4);
}

TEST(CompileE2ETest, OutputsAliasingInputsAreCopied) {
  CompileAndCompare(R"(HloModule alias
ENTRY %e {
  %x = f32[4] parameter(0)
  %c = f32[4] constant({1, 2, 3, 4})
  ROOT %t = (f32[4], f32[4], f32[4]) tuple(%x, %c, %x)
})");
}

TEST(CompileE2ETest, DumpsEverythingAndCachesKernels) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/dump");
  setenv("ONEFLOW_LIKE_CACHE_DIR", absl::StrCat(tmp ? tmp : "/tmp", "/kcache").c_str(), 1);
  CompileOptions opts;
  opts.pipeline.dump.dir = dir;
  opts.pipeline.dump.pass_re = "fusion";
  auto first = CompileAndCompare(kMlpTrainStep, 1e-4, opts);
  auto second = CompileAndCompare(kMlpTrainStep, 1e-4, opts);
  unsetenv("ONEFLOW_LIKE_CACHE_DIR");
  ASSERT_TRUE(first && second);
  EXPECT_FALSE(first->stats().jit_cache_hit);
  EXPECT_TRUE(second->stats().jit_cache_hit);
  for (const char* f :
       {"0000.before_optimizations.txt", "9997.after_optimizations.txt",
        "9998.buffer_assignment.txt", "9999.thunks.txt", "after_optimizations.dot", "kernels.cc"}) {
    std::ifstream in(absl::StrCat(dir, "/mlp_train.", f));
    EXPECT_TRUE(in.good()) << f;
  }
  std::ifstream ba(absl::StrCat(dir, "/mlp_train.9998.buffer_assignment.txt"));
  std::string text((std::istreambuf_iterator<char>(ba)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Contains(text, "lower bound (largest live set)")) << text;
}

TEST(CompileE2ETest, BadModulesAreErrorsNotCrashes) {
  auto m = ParseHloModule(
      "HloModule bad\nENTRY %e {\n  %x = f32[4] parameter(0)\n  ROOT %y = f32[5] negate(%x)\n}");
  ASSERT_TRUE(m.ok());
  auto exe = Compile(std::move(m).value());
  ASSERT_FALSE(exe.ok());
  EXPECT_TRUE(Contains(std::string(exe.status().message()), "[pass verifier]")) << exe.status();
}

// A device type whose backend is not linked (this test links the CPU compiler only) is a clear
// Unimplemented error naming the device, not a crash or a CPU executable.
TEST(CompileE2ETest, CompileForDeviceWithoutABackendNamesTheDevice) {
  auto m = ParseHloModule(
      "HloModule dev\nENTRY %e {\n  %x = f32[4] parameter(0)\n  ROOT %y = f32[4] negate(%x)\n}");
  ASSERT_TRUE(m.ok());
  auto exe = CompileForDevice(std::move(m).value(), CompileOptions(), Device(DeviceType::kCUDA, 1));
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(std::string(exe.status().message()), "no compiler for cuda:1"))
      << exe.status();
}

}  // namespace
}  // namespace oneflow_like::hlo
