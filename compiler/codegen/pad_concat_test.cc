// Pads and concatenations (pad_concat.cc) in both loop emitters, against the evaluator.
#include "compiler/codegen/emitter_test_util.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::testing {
namespace {

TEST(PadConcatTest, PaddedHeadMergeRowsStayInsideOneHead) {
  std::string code = CheckFusion(R"(HloModule padded_head_merge
%fused (q: f32[2,4,8,16], k: f32[2,4,8,16], v: f32[2,4,8,16]) -> f32[16,192] {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  %z = f32[] constant(0)
  %qt = f32[2,8,4,16] transpose(%q), dimensions={0,2,1,3}
  %kt = f32[2,8,4,16] transpose(%k), dimensions={0,2,1,3}
  %vt = f32[2,8,4,16] transpose(%v), dimensions={0,2,1,3}
  %qr = f32[16,64] reshape(%qt)
  %kr = f32[16,64] reshape(%kt)
  %vr = f32[16,64] reshape(%vt)
  %qp = f32[16,192] pad(%qr, %z), padding=0_0x0_128
  %kp = f32[16,192] pad(%kr, %z), padding=0_0x64_64
  %vp = f32[16,192] pad(%vr, %z), padding=0_0x128_0
  %s = f32[16,192] add(%qp, %kp)
  ROOT %r = f32[16,192] add(%s, %vp)
}
ENTRY %e {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  ROOT %f = f32[16,192] fusion(%q, %k, %v), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "k_test_row = 16;")) << code;
  EXPECT_FALSE(Has(code, "const int64_t y")) << code;
}

TEST(PadConcatTest, PadConcatIotaSelectConvert) {
  CheckFusion(R"(HloModule pad
%fused (x: f32[5,6]) -> f32[12,14] {
  %x = f32[5,6] parameter(0)
  %v = f32[] constant(-3)
  ROOT %p = f32[12,14] pad(%x, %v), padding=1_2_1x2_1_1
}
ENTRY %e {
  %x = f32[5,6] parameter(0)
  ROOT %f = f32[12,14] fusion(%x), kind=kLoop, calls=%fused
})");
  CheckFusion(R"(HloModule pad_outer
%fused (x: f32[5,6]) -> f32[9,6] {
  %x = f32[5,6] parameter(0)
  %v = f32[] constant(7)
  %p = f32[9,6] pad(%x, %v), padding=3_1x0_0
  ROOT %n = f32[9,6] negate(%p)
}
ENTRY %e {
  %x = f32[5,6] parameter(0)
  ROOT %f = f32[9,6] fusion(%x), kind=kLoop, calls=%fused
})");
  CheckFusion(R"(HloModule concat
%fused (x: f32[4,3], y: f32[4,5], z: f32[2,8]) -> f32[6,8] {
  %x = f32[4,3] parameter(0)
  %y = f32[4,5] parameter(1)
  %c = f32[4,8] concatenate(%x, %y), dimensions={1}
  %z = f32[2,8] parameter(2)
  ROOT %d = f32[6,8] concatenate(%c, %z), dimensions={0}
}
ENTRY %e {
  %x = f32[4,3] parameter(0)
  %y = f32[4,5] parameter(1)
  %z = f32[2,8] parameter(2)
  ROOT %f = f32[6,8] fusion(%x, %y, %z), kind=kLoop, calls=%fused
})");
  std::string code = CheckFusion(R"(HloModule iota
%fused (x: f32[9,10]) -> f32[9,10] {
  %x = f32[9,10] parameter(0)
  %i = s32[9,10] iota(), iota_dimension=1
  %k = s32[9,10] iota(), iota_dimension=0
  %s = s32[9,10] add(%i, %k)
  %c = f32[9,10] convert(%s)
  %h = f32[] constant(0.25)
  %hb = f32[9,10] broadcast(%h), dimensions={}
  %m = f32[9,10] multiply(%c, %hb)
  %g = pred[9,10] compare(%x, %m), direction=GT
  ROOT %r = f32[9,10] select(%g, %x, %m)
}
ENTRY %e {
  %x = f32[9,10] parameter(0)
  ROOT %f = f32[9,10] fusion(%x), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "row = begin / 10")) << code;
}

TEST(PadConcatTest, PerElementFormBranchesOnTheConcatDim) {
  auto src = EmitEntryFusion(R"(HloModule cuda_cat
%fused (a: f32[3,4], b: f32[3,2]) -> f32[3,6] {
  %a = f32[3,4] parameter(0)
  %b = f32[3,2] parameter(1)
  ROOT %c = f32[3,6] concatenate(%a, %b), dimensions={1}
}
ENTRY %e {
  %a = f32[3,4] parameter(0)
  %b = f32[3,2] parameter(1)
  ROOT %f = f32[3,6] fusion(%a, %b), kind=kLoop, calls=%fused
})",
                             KernelDialect::kCuda);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(Has(src->code, "if (d1 < 4) {")) << src->code;
  EXPECT_TRUE(Has(src->code, "} else if (d1 < 6) {")) << src->code;
  EXPECT_TRUE(Has(src->code, "(d1 - 4)")) << src->code;
}

TEST(PadConcatTest, ConcatAlongTheRowIsPerJ) {
  // Pieces that split a row: the branch depends on j, so the row is computed per element.
  std::string code = CheckFusion(R"(HloModule cat_row
%fused (a: f32[5,7], b: f32[5,9]) -> f32[5,16] {
  %a = f32[5,7] parameter(0)
  %b = f32[5,9] parameter(1)
  ROOT %c = f32[5,16] concatenate(%a, %b), dimensions={1}
}
ENTRY %e {
  %a = f32[5,7] parameter(0)
  %b = f32[5,9] parameter(1)
  ROOT %f = f32[5,16] fusion(%a, %b), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "< 7) {")) << code;
}

}  // namespace
}  // namespace oneflow_like::hlo::testing
