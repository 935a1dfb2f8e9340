#include "compiler/ir/hlo_parser.h"

#include "gtest/gtest.h"

namespace oneflow_like::hlo {
namespace {

void ExpectRoundTrip(const std::string& text) {
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->ToString(), text);
  auto again = ParseHloModule((*m)->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->ToString(), text);
}

TEST(HloShapeTest, LayoutPrinting) {
  auto s = ParseHloShape("f32[10,20,30]{2,0,1}");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(), "f32[10,20,30]{2,0,1}");
  EXPECT_EQ(s->ToString(false), "f32[10,20,30]");
  EXPECT_EQ(PhysicalDims(*s), DimVector({20, 10, 30}));
  EXPECT_FALSE(s->HasDefaultLayout());
  EXPECT_EQ(ParseHloShape("(f32[], s64[2]{0})")->ToString(), "(f32[], s64[2]{0})");
  EXPECT_FALSE(ParseHloShape("f32[2]{1}").ok());
  EXPECT_FALSE(ParseHloShape("q32[2]").ok());
}

TEST(HloParserTest, RoundTripsElementwiseAndReduce) {
  ExpectRoundTrip(R"(HloModule mlp

%add (lhs: f32[], rhs: f32[]) -> f32[] {
  %lhs = f32[] parameter(0)
  %rhs = f32[] parameter(1)
  ROOT %add = f32[] add(%lhs, %rhs)
}

ENTRY %main (x: f32[4,8]{1,0}, w: f32[8,16]{1,0}, b: f32[16]{0}) -> (f32[4,16]{1,0}, f32[4]{0}) {
  %x = f32[4,8]{1,0} parameter(0)
  %w = f32[8,16]{1,0} parameter(1)
  %dot = f32[4,16]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b = f32[16]{0} parameter(2)
  %broadcast = f32[4,16]{1,0} broadcast(%b), dimensions={1}
  %add.1 = f32[4,16]{1,0} add(%dot, %broadcast)
  %zero = f32[] constant(0)
  %zeros = f32[4,16]{1,0} broadcast(%zero), dimensions={}
  %relu = f32[4,16]{1,0} maximum(%add.1, %zeros)
  %sum = f32[4]{0} reduce(%relu, %zero), dimensions={1}, to_apply=%add
  %max = f32[4]{0} reduce(%relu, %zero), dimensions={1}, kind=max
  %cmp = pred[4]{0} compare(%sum, %max), direction=GE
  %sel = f32[4]{0} select(%cmp, %sum, %max)
  ROOT %tuple = (f32[4,16]{1,0}, f32[4]{0}) tuple(%relu, %sel)
}
)");
}

TEST(HloParserTest, RoundTripsDataMovementOps) {
  ExpectRoundTrip(R"(HloModule moves

ENTRY %main (p: f32[4,6], i: s32[3,1]) -> f32[3,6] {
  %p = f32[4,6] parameter(0)
  %t = f32[6,4] transpose(%p), dimensions={1,0}
  %r = f32[24] reshape(%t)
  %s = f32[6] slice(%r), slice={[0:12:2]}
  %iota = s32[6] iota(), iota_dimension=0
  %c = f32[6] convert(%iota)
  %cat = f32[12] concatenate(%s, %c), dimensions={0}
  %pv = f32[] constant(-1.5)
  %pad = f32[17] pad(%cat, %pv), padding=2_3
  %ipad = f32[25] pad(%cat, %pv), padding=1_1_1
  %k = s32[] constant(1)
  %ds = f32[2,3] dynamic-slice(%p, %k, %k), dynamic_slice_sizes={2,3}
  %cst = f32[2,2] constant({1, 2.5, -3, 1e+20})
  %i = s32[3,1] parameter(1)
  %g = f32[3,6] gather(%p, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
  %bc = f32[6,3]{0,1} bitcast(%g)
  %cp = f32[3,6] copy(%g)
  ROOT %e = f32[3,6] exponential(%cp)
}
)");
}

TEST(HloParserTest, RoundTripsConvFusionWhileAndCustomCall) {
  ExpectRoundTrip(R"(HloModule control

%fused (a: f32[8], b: f32[8]) -> f32[8] {
  %a = f32[8] parameter(0)
  %b = f32[8] parameter(1)
  %m = f32[8] multiply(%a, %b)
  ROOT %n = f32[8] negate(%m)
}

%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %ten = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %ten), direction=LT
}

%body (s.1: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s.1 = (s32[], f32[8]) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %one = s32[] constant(1)
  %inc = s32[] add(%i.1, %one)
  %v = f32[8] get-tuple-element(%s.1), index=1
  %f = f32[8] fusion(%v, %v), kind=kLoop, calls=%fused
  ROOT %t = (s32[], f32[8]) tuple(%inc, %f)
}

ENTRY %main (x: f32[1,3,8,8], k: f32[4,3,3,3], vec: f32[8]) -> f32[1,4,4,4] {
  %x = f32[1,3,8,8] parameter(0)
  %k = f32[4,3,3,3] parameter(1)
  %conv = f32[1,4,4,4] convolution(%x, %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  %sm = f32[1,4,4,4] custom-call(%conv), custom_call_target="softmax", backend_config="axis=1"
  %vec = f32[8] parameter(2)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]) tuple(%zero, %vec)
  %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body
  %lo = f32[] constant(0)
  %hi = f32[] constant(1)
  %u = f32[1,4,4,4] rng(%lo, %hi), distribution=rng_normal
  ROOT %out = f32[1,4,4,4] add(%sm, %u)
}
)");
}

TEST(HloParserTest, AcceptsXlaStyleOperandShapesAndAliases) {
  auto m = ParseHloModule(R"(HloModule m
ENTRY %e {
  %p = f32[2]{0} parameter(0)
  ROOT %x = f32[2]{0} exp(f32[2]{0} %p)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NE((*m)->ToString().find("exponential(%p)"), std::string::npos);
}

void ExpectError(const std::string& text, const std::string& fragment) {
  auto m = ParseHloModule(text);
  ASSERT_FALSE(m.ok()) << "parsed: " << text;
  EXPECT_NE(std::string(m.status().message()).find(fragment), std::string::npos) << m.status();
}

TEST(HloParserTest, ErrorsCarryLineAndColumn) {
  ExpectError(
      "HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %x = f32[2] frobnicate(%p)\n}",
      "line 4:");
  ExpectError("HloModule m\nENTRY %e {\n  ROOT %x = f32[2] negate(%nope)\n}",
              "unknown operand 'nope'");
  ExpectError("HloModule m\nENTRY %e {\n  ROOT %c = f32[3] constant({1, 2})\n}",
              "constant has 2 values");
  ExpectError(
      "HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %p = f32[2] negate(%p)\n}",
      "duplicate");
  ExpectError("HloModule m\n%c {\n  ROOT %k = f32[] constant(1)\n}", "no ENTRY");
  ExpectError(
      "HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[] reduce(%p, %p), "
      "to_apply=%nada\n}",
      "unknown computation");
  ExpectError("HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] add(%p)\n}",
              "takes 2 operands");
  ExpectError("HloModule m\nENTRY %e {\n  ROOT %p = f32[99999999999,99999999999] parameter(0)\n}",
              "too many");
  ExpectError("", "expected 'HloModule'");
  ExpectError("HloModule m\nENTRY %e {\n  %p = f32[2] parameter(0)", "end of text");
}

TEST(HloParserTest, GarbageNeverCrashes) {
  const std::string good = R"(HloModule m
ENTRY %e (p: f32[2,3]) -> f32[3] {
  %p = f32[2,3]{1,0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[3]{0} reduce(%p, %z), dimensions={0}, kind=add
})";
  // Every prefix and every single-character corruption parses or fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) (void)ParseHloModule(good.substr(0, n));
  for (size_t i = 0; i < good.size(); ++i) {
    for (char c : {'{', '}', '(', ')', ',', '%', '=', '9', '-', '"', '\n'}) {
      std::string bad = good;
      bad[i] = c;
      (void)ParseHloModule(bad);
    }
  }
}

}  // namespace
}  // namespace oneflow_like::hlo
