// Layout assignment, layout normalization and the dot decomposer: IR text in, IR text out, and
// the reference evaluator must give the same values before and after.
#include "compiler/eval/hlo_evaluator.h"
#include "compiler/passes/dot_decomposer.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/layout_normalization.h"
#include "compiler/passes/pass_test_util.h"

namespace oneflow_like::hlo {
namespace {

Literal Iota(const std::string& shape) {
  Literal l(ParseHloShape(shape).value());
  for (size_t i = 0; i < l.data.size(); ++i) l.data[i] = static_cast<double>(i) * 0.5 - 3;
  return l;
}

void ExpectSameValues(const std::string& before, const HloModule& after,
                      std::vector<Literal> args) {
  HloEvaluator ev;
  auto m = ParseHloModule(before).value();
  auto a = ev.Evaluate(*m, args), b = ev.Evaluate(after, args);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(*a == *b) << after.ToString();
}

const char* kTransposedParam = R"(HloModule m
ENTRY %e {
  %x = f32[2,3]{0,1} parameter(0)
  ROOT %n = f32[2,3] negate(%x)
})";

TEST(LayoutAssignmentTest, DefaultsEverythingAndCopiesAtEntryBoundary) {
  auto r = RunPassOnText<LayoutAssignment>(kTransposedParam);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "%x = f32[2,3]{0,1} parameter(0)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "f32[2,3]{1,0} copy(%x)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "ROOT %n = f32[2,3]{1,0} negate(%copy)")) << r.text;
  auto again = RunPassOnText<LayoutAssignment>(r.text);
  EXPECT_FALSE(again.changed);
}

TEST(LayoutNormalizationTest, CopyBecomesBitcastTransposeBitcast) {
  auto la = RunPassOnText<LayoutAssignment>(kTransposedParam);
  auto r = RunPassOnText<LayoutNormalization>(la.text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "f32[3,2]{1,0} bitcast(%x)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "f32[2,3]{1,0} transpose(%bitcast), dimensions={1,0}")) << r.text;
  EXPECT_FALSE(Contains(r.text, "copy(")) << r.text;
  Literal x = Iota("f32[2,3]{0,1}");
  ExpectSameValues(kTransposedParam, *r.module, {x});
}

TEST(LayoutNormalizationTest, RootLayoutIsHonouredAndReshapeIsBitcast) {
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[2,3,4] parameter(0)
  %r = f32[6,4] reshape(%x)
  ROOT %n = f32[6,4]{0,1} negate(%r)
})";
  auto la = RunPassOnText<LayoutAssignment>(text);
  auto r = RunPassOnText<LayoutNormalization>(la.text);
  EXPECT_TRUE(Contains(r.text, "f32[6,4]{1,0} bitcast(%x)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "ROOT %bitcast.2 = f32[6,4]{0,1} bitcast(%transpose)")) << r.text;
  ExpectSameValues(text, *r.module, {Iota("f32[2,3,4]")});
}

TEST(LayoutNormalizationTest, LeavesSameLayoutCopiesAlone) {
  const std::string text = R"(HloModule m

ENTRY %e (x: f32[2,3]{1,0}) -> f32[2,3]{1,0} {
  %x = f32[2,3]{1,0} parameter(0)
  ROOT %c = f32[2,3]{1,0} copy(%x)
}
)";
  auto r = RunPassOnText<LayoutNormalization>(text);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, text);
}

TEST(DotDecomposerTest, CanonicalizesBatchAndContractingDims) {
  const char* text = R"(HloModule m
ENTRY %e {
  %x = f32[3,2,4] parameter(0)
  %y = f32[4,5,2] parameter(1)
  ROOT %d = f32[2,3,5] dot(%x, %y), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={2}, rhs_contracting_dims={0}
})";
  auto r = RunPassOnText<DotDecomposer>(text);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(
      r.text,
      "f32[2,3,5] dot(%reshape, %reshape.1), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_batch_dims={0}, rhs_contracting_dims={1}"))
      << r.text;
  ExpectSameValues(text, *r.module, {Iota("f32[3,2,4]"), Iota("f32[4,5,2]")});
}

TEST(DotDecomposerTest, LeavesGemmShapedDotsAlone) {
  const std::string text = R"(HloModule m

ENTRY %e (x: f32[4,3], y: f32[4,5]) -> f32[3,5] {
  %x = f32[4,3] parameter(0)
  %y = f32[4,5] parameter(1)
  ROOT %d = f32[3,5] dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)";
  auto r = RunPassOnText<DotDecomposer>(text);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, text);
}

}  // namespace
}  // namespace oneflow_like::hlo
