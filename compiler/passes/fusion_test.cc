// Priority fusion, multi-output fusion and the fusion wrapper: IR text in, IR text out, with
// the evaluator checking that values do not change.
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/passes/fusion_wrapper.h"
#include "compiler/passes/multi_output_fusion.h"
#include "compiler/passes/pass_test_util.h"
#include "compiler/passes/priority_fusion.h"

namespace oneflow_like::hlo {
namespace {

Literal Ramp(const std::string& shape) {
  Literal l(ParseHloShape(shape).value());
  for (size_t i = 0; i < l.data.size(); ++i) l.data[i] = std::sin(static_cast<double>(i));
  return l;
}

void ExpectSameValues(const std::string& before, const HloModule& after,
                      const std::vector<Literal>& args) {
  HloEvaluator ev;
  auto m = ParseHloModule(before).value();
  auto a = ev.Evaluate(*m, args), b = ev.Evaluate(after, args);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(*a == *b) << after.ToString();
}

const char* kBiasReluSum = R"(HloModule m
ENTRY %e {
  %x = f32[64,128] parameter(0)
  %b = f32[128] parameter(1)
  %bb = f32[64,128] broadcast(%b), dimensions={1}
  %a = f32[64,128] add(%x, %bb)
  %z = f32[] constant(0)
  %zb = f32[64,128] broadcast(%z), dimensions={}
  %r = f32[64,128] maximum(%a, %zb)
  %s = f32[64] reduce(%r, %z), dimensions={1}, kind=add
  %w = f32[128,32] parameter(2)
  %d = f32[64,32] dot(%r, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[64], f32[64,32]) tuple(%s, %d)
})";

TEST(PriorityFusionTest, FusesElementwiseChainsButNotIntoDots) {
  auto r = RunPassOnText<PriorityFusion>(kBiasReluSum);
  EXPECT_TRUE(r.changed);
  // relu is read by a dot (not fusible), so it stays a loop fusion of add+broadcasts+max; the
  // reduction reads the relu fusion's output as a kInput fusion root.
  EXPECT_TRUE(Contains(r.text, "f32[64,128] fusion(%x, %b), kind=kLoop")) << r.text;
  EXPECT_TRUE(Contains(r.text, "dot(%fusion")) << r.text;
  EXPECT_FALSE(Contains(r.text, "\n  %a = ")) << r.text;
  ExpectSameValues(kBiasReluSum, *r.module,
                   {Ramp("f32[64,128]"), Ramp("f32[128]"), Ramp("f32[128,32]")});
}

TEST(PriorityFusionTest, ReductionBecomesFusionRoot) {
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[32,256] parameter(0)
  %e1 = f32[32,256] exponential(%x)
  %z = f32[] constant(0)
  ROOT %s = f32[32] reduce(%e1, %z), dimensions={1}, kind=add
})";
  auto r = RunPassOnText<PriorityFusion>(text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "ROOT %fusion = f32[32] fusion(%x), kind=kInput")) << r.text;
  ExpectSameValues(text, *r.module, {Ramp("f32[32,256]")});
}

TEST(PriorityFusionTest, LeavesUnprofitableAndUnfusibleOpsAlone) {
  const std::string text = R"(HloModule m

ENTRY %e (x: f32[8,8], y: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8] parameter(0)
  %y = f32[8,8] parameter(1)
  ROOT %d = f32[8,8] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  auto r = RunPassOnText<PriorityFusion>(text);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, text);
}

TEST(PriorityFusionTest, CostModelRefusesDuplicatingExpensiveProducers) {
  // exp of a big input read by 8 consumers: duplicating it costs more than it saves.
  std::string text =
      "HloModule m\nENTRY %e {\n  %x = f32[4096] parameter(0)\n  %ex = f32[4096] exponential(%x)\n";
  std::string tuple, shape;
  for (int k = 0; k < 8; ++k) {
    absl::StrAppend(&text, "  %p", k, " = f32[4096] parameter(", k + 1, ")\n  %m", k,
                    " = f32[4096] multiply(%ex, %p", k, ")\n");
    absl::StrAppend(&tuple, k ? ", " : "", "%m", k);
    absl::StrAppend(&shape, k ? ", " : "", "f32[4096]");
  }
  absl::StrAppend(&text, "  ROOT %t = (", shape, ") tuple(", tuple, ")\n}");
  auto m = ParseAndVerify(text);
  ASSERT_TRUE(m);
  HloInstruction* ex = nullptr;
  for (HloInstruction* i : m->entry_computation()->instructions())
    if (i->name() == "ex") ex = i;
  ASSERT_NE(ex, nullptr);
  EXPECT_LT(PriorityFusion::Benefit(ex), 0);
  auto r = RunPassOnText<PriorityFusion>(text);
  EXPECT_TRUE(Contains(r.text, "%ex = f32[4096] exponential(%x)")) << r.text;
}

TEST(MultiOutputFusionTest, MergesSiblingsSharingAnInput) {
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[128] parameter(0)
  %a = f32[128] exponential(%x)
  %b = f32[128] negate(%x)
  ROOT %t = (f32[128], f32[128]) tuple(%a, %b)
})";
  auto wrapped = RunPassOnText<FusionWrapper>(text);
  EXPECT_TRUE(wrapped.changed);
  auto r = RunPassOnText<MultiOutputFusion>(wrapped.text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "(f32[128], f32[128]) fusion(%x), kind=kLoop")) << r.text;
  EXPECT_TRUE(Contains(r.text, "get-tuple-element(%fusion.2), index=1")) << r.text;
  ExpectSameValues(text, *r.module, {Ramp("f32[128]")});
}

TEST(MultiOutputFusionTest, MergesProducerWithItsElementwiseConsumer) {
  // SGD momentum: buf' = 0.9 buf + g is an output and feeds w' = w - 0.1 buf'.
  const char* text = R"(HloModule m
ENTRY %e {
  %w = f32[256] parameter(0)
  %buf = f32[256] parameter(1)
  %g = f32[256] parameter(2)
  %m = f32[] constant(0.9)
  %mb = f32[256] broadcast(%m), dimensions={}
  %scaled = f32[256] multiply(%buf, %mb)
  %nb = f32[256] add(%scaled, %g)
  %lr = f32[] constant(0.1)
  %lrb = f32[256] broadcast(%lr), dimensions={}
  %step = f32[256] multiply(%nb, %lrb)
  %nw = f32[256] subtract(%w, %step)
  ROOT %t = (f32[256], f32[256]) tuple(%nw, %nb)
})";
  auto fused = RunPassOnText<PriorityFusion>(text);
  auto r = RunPassOnText<MultiOutputFusion>(fused.text);
  EXPECT_TRUE(r.changed) << fused.text;
  EXPECT_TRUE(Contains(r.text, "(f32[256], f32[256]) fusion(")) << r.text;
  int fusions = 0;
  for (const HloInstruction* i : r.module->entry_computation()->instructions())
    fusions += i->opcode() == HloOpcode::kFusion;
  EXPECT_EQ(fusions, 1) << r.text;
  ExpectSameValues(text, *r.module, {Ramp("f32[256]"), Ramp("f32[256]"), Ramp("f32[256]")});
}

TEST(MultiOutputFusionTest, LeavesProducersReadThroughNonElementwiseOps) {
  // The consumer reads a transposed producer: one loop would recompute, not share, it.
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[16,16] parameter(0)
  %a = f32[16,16] exponential(%x)
  %t = f32[16,16] transpose(%a), dimensions={1,0}
  %b = f32[16,16] add(%t, %x)
  ROOT %r = (f32[16,16], f32[16,16]) tuple(%a, %b)
})";
  auto wrapped = RunPassOnText<FusionWrapper>(text);
  auto r = RunPassOnText<MultiOutputFusion>(wrapped.text);
  EXPECT_FALSE(Contains(r.text, "(f32[16,16], f32[16,16]) fusion(")) << r.text;
  ExpectSameValues(text, *r.module, {Ramp("f32[16,16]")});
}

TEST(MultiOutputFusionTest, RefusesToCreateCycles) {
  // a -> d (a dot, not fusible) -> b and a -> b: merging a and b would need d inside and outside.
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[16,16] parameter(0)
  %a = f32[16,16] exponential(%x)
  %d = f32[16,16] dot(%a, %x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b = f32[16,16] add(%d, %a)
  ROOT %t = (f32[16,16], f32[16,16]) tuple(%a, %b)
})";
  auto wrapped = RunPassOnText<FusionWrapper>(text);
  auto r = RunPassOnText<MultiOutputFusion>(wrapped.text);
  EXPECT_FALSE(r.changed) << r.text;
  ExpectSameValues(text, *r.module, {Ramp("f32[16,16]")});
}

}  // namespace
}  // namespace oneflow_like::hlo
