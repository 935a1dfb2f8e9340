// IR-text tests for the simplification group: algebraic simplifier, constant folding, CSE, DCE.
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/hlo_cse.h"
#include "compiler/passes/pass_test_util.h"

namespace oneflow_like::hlo {
namespace {

TEST(AlgebraicSimplifierTest, RemovesIdentities) {
  auto r = RunPassOnText<AlgebraicSimplifier>(R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  %zero = f32[] constant(0)
  %zeros = f32[4] broadcast(%zero), dimensions={}
  %a = f32[4] add(%x, %zeros)
  %one = f32[] constant(1)
  %ones = f32[4] broadcast(%one), dimensions={}
  %m = f32[4] multiply(%ones, %a)
  %n = f32[4] negate(%m)
  ROOT %nn = f32[4] negate(%n)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(
      r.text,
      "HloModule m\n\nENTRY %e (x: f32[4]) -> f32[4] {\n  ROOT %x = f32[4] parameter(0)\n}\n");
}

TEST(AlgebraicSimplifierTest, MergesReshapesAndTransposes) {
  auto r = RunPassOnText<AlgebraicSimplifier>(R"(HloModule m
ENTRY %e {
  %x = f32[2,3,4] parameter(0)
  %r1 = f32[6,4] reshape(%x)
  %r2 = f32[24] reshape(%r1)
  %t1 = f32[3,4,2] transpose(%x), dimensions={1,2,0}
  %t2 = f32[2,3,4] transpose(%t1), dimensions={2,0,1}
  %t3 = f32[4,2,3] transpose(%x), dimensions={2,0,1}
  %t4 = f32[2,4,3] transpose(%t3), dimensions={1,0,2}
  ROOT %t = (f32[24], f32[2,3,4], f32[2,4,3]) tuple(%r2, %t2, %t4)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "f32[24] reshape(%x)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "tuple(%reshape, %x, %transpose)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "f32[2,4,3] transpose(%x), dimensions={0,2,1}")) << r.text;
}

TEST(AlgebraicSimplifierTest, LeavesUnsafeRewritesAlone) {
  const std::string text = R"(HloModule m

ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %zero = f32[] constant(0)
  %zeros = f32[4] broadcast(%zero), dimensions={}
  %m = f32[4] multiply(%x, %zeros)
  ROOT %s = f32[4] subtract(%m, %x)
}
)";
  auto r = RunPassOnText<AlgebraicSimplifier>(text);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, text);
}

TEST(AlgebraicSimplifierTest, HoistsScalarBroadcastsForFolding) {
  auto r = RunPassOnText<AlgebraicSimplifier>(R"(HloModule m
ENTRY %e {
  %a = f32[] constant(2)
  %b = f32[] constant(3)
  %ba = f32[1000] broadcast(%a), dimensions={}
  %bb = f32[1000] broadcast(%b), dimensions={}
  ROOT %m = f32[1000] multiply(%ba, %bb)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "f32[] multiply(%a, %b)")) << r.text;
  auto f = RunPassOnText<ConstantFolding>(r.text);
  EXPECT_TRUE(f.changed);
  EXPECT_TRUE(Contains(f.text, "f32[] constant(6)")) << f.text;
  EXPECT_TRUE(Contains(f.text, "ROOT %broadcast = f32[1000] broadcast(")) << f.text;
}

TEST(ConstantFoldingTest, FoldsSmallSubgraphsOnly) {
  auto r = RunPassOnText<ConstantFolding>(R"(HloModule m
ENTRY %e {
  %x = f32[3] parameter(0)
  %c = f32[3] constant({1, 2, 3})
  %d = f32[3] constant({10, 20, 30})
  %s = f32[3] add(%c, %d)
  %n = f32[3] negate(%s)
  %y = f32[3] add(%x, %n)
  %two = f32[] constant(2)
  %big = f32[100000] broadcast(%two), dimensions={}
  %lo = f32[] constant(0)
  %r = f32[100000] rng(%lo, %two), distribution=rng_uniform
  ROOT %t = (f32[3], f32[100000], f32[100000]) tuple(%y, %big, %r)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "f32[3] constant({-11, -22, -33})")) << r.text;
  EXPECT_TRUE(Contains(r.text, "f32[100000] broadcast(%two)")) << r.text;
  EXPECT_TRUE(Contains(r.text, "rng(%lo, %two)")) << r.text;
}

TEST(HloCSETest, MergesDuplicatesButNotRng) {
  auto r = RunPassOnText<HloCSE>(R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  %e1 = f32[4] exponential(%x)
  %e2 = f32[4] exponential(%x)
  %a = f32[4] add(%e1, %e2)
  %c1 = f32[] constant(1)
  %c2 = f32[] constant(1)
  %r1 = f32[4] rng(%c1, %c2), distribution=rng_uniform
  %r2 = f32[4] rng(%c1, %c2), distribution=rng_uniform
  %b = f32[4] add(%r1, %r2)
  %t1 = f32[4] transpose(%x), dimensions={0}
  ROOT %t = (f32[4], f32[4]) tuple(%a, %b)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "add(%e1, %e1)")) << r.text;
  EXPECT_FALSE(Contains(r.text, "%e2")) << r.text;
  EXPECT_TRUE(Contains(r.text, "add(%r1, %r2)")) << r.text;
  EXPECT_FALSE(Contains(r.text, "%c2")) << r.text;
}

TEST(HloDCETest, RemovesDeadCodeAndUnusedComputations) {
  auto r = RunPassOnText<HloDCE>(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[4] parameter(0)
  %unused_param = f32[4] parameter(1)
  %z = f32[] constant(0)
  %dead = f32[] reduce(%x, %z), dimensions={0}, to_apply=%add
  %dead2 = f32[] negate(%dead)
  ROOT %live = f32[4] negate(%x)
})",
                                 false);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.text,
            "HloModule m\n\nENTRY %e (x: f32[4], unused_param: f32[4]) -> f32[4] {\n"
            "  %x = f32[4] parameter(0)\n  %unused_param = f32[4] parameter(1)\n"
            "  ROOT %live = f32[4] negate(%x)\n}\n");
}

}  // namespace
}  // namespace oneflow_like::hlo
