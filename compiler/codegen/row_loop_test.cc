// Row loops and per-element loops (loop_nests.cc, row_emitter.cc): fused modules as IR text, each
// kernel run over many [begin, end) splittings and compared with the evaluator; the kernel text is
// checked for the expected access pattern.
#include "compiler/codegen/emitter_test_util.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::testing {
namespace {

TEST(RowLoopTest, BiasReluOddSizesBroadcastAlongRows) {
  std::string code = CheckFusion(R"(HloModule bias_relu
%fused (x: f32[37,53], b: f32[53]) -> f32[37,53] {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  %bb = f32[37,53] broadcast(%b), dimensions={1}
  %a = f32[37,53] add(%x, %bb)
  %z = f32[] constant(0)
  %zb = f32[37,53] broadcast(%z), dimensions={}
  ROOT %r = f32[37,53] maximum(%a, %zb)
}
ENTRY %e {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  ROOT %f = f32[37,53] fusion(%x, %b), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "p1[j]")) << code;
  EXPECT_TRUE(Has(code, "p0[(rb + j)]")) << code;
  EXPECT_TRUE(Has(code, "row = begin / 53")) << code;
}

TEST(RowLoopTest, ElementwiseOnlyIsOneFlatRow) {
  std::string code = CheckFusion(R"(HloModule flat
%fused (x: f32[7,11,3], y: f32[7,11,3]) -> f32[7,11,3] {
  %x = f32[7,11,3] parameter(0)
  %y = f32[7,11,3] parameter(1)
  %m = f32[7,11,3] multiply(%x, %y)
  ROOT %t = f32[7,11,3] tanh(%m)
}
ENTRY %e {
  %x = f32[7,11,3] parameter(0)
  %y = f32[7,11,3] parameter(1)
  ROOT %f = f32[7,11,3] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "row = begin / 231")) << code;
}

TEST(RowLoopTest, TransposeIsStridedInJ) {
  std::string code = CheckFusion(R"(HloModule transpose
%fused (x: f32[13,29], y: f32[29,13]) -> f32[29,13] {
  %x = f32[13,29] parameter(0)
  %t = f32[29,13] transpose(%x), dimensions={1,0}
  %y = f32[29,13] parameter(1)
  ROOT %r = f32[29,13] add(%t, %y)
}
ENTRY %e {
  %x = f32[13,29] parameter(0)
  %y = f32[29,13] parameter(1)
  ROOT %f = f32[29,13] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "j * 29")) << code;
}

// Attention's head merge, three times side by side (the backward of slicing q, k, v out of one
// projection): [b, h, s, d] -> [b*s, 3*h*d]. A row of the output crosses a head every d = 16
// elements, so the rows are 16 long and every access is affine (no division per element).
TEST(RowLoopTest, HeadMergeRowsStayInsideOneHead) {
  std::string code = CheckFusion(R"(HloModule head_merge
%fused (q: f32[2,4,8,16], k: f32[2,4,8,16], v: f32[2,4,8,16]) -> f32[16,192] {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  %qt = f32[2,8,4,16] transpose(%q), dimensions={0,2,1,3}
  %kt = f32[2,8,4,16] transpose(%k), dimensions={0,2,1,3}
  %vt = f32[2,8,4,16] transpose(%v), dimensions={0,2,1,3}
  %qr = f32[16,64] reshape(%qt)
  %kr = f32[16,64] reshape(%kt)
  %vr = f32[16,64] reshape(%vt)
  ROOT %c = f32[16,192] concatenate(%qr, %kr, %vr), dimensions={1}
}
ENTRY %e {
  %q = f32[2,4,8,16] parameter(0)
  %k = f32[2,4,8,16] parameter(1)
  %v = f32[2,4,8,16] parameter(2)
  ROOT %f = f32[16,192] fusion(%q, %k, %v), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "k_test_row = 16;")) << code;
  EXPECT_FALSE(Has(code, "const int64_t y")) << code;  // no per-element index variables
}

// The same merge written as the backward of three slices: a sum of zero-padded pieces.
TEST(RowLoopTest, BroadcastOverCollapsedTrailingBlockAndSizeOneDims) {
  std::string code = CheckFusion(R"(HloModule bcast
%fused (x: f32[6,4,5,5], b: f32[4,1,1]) -> f32[6,4,5,5] {
  %x = f32[6,4,5,5] parameter(0)
  %b = f32[4,1,1] parameter(1)
  %br = f32[4] reshape(%b)
  %bb = f32[6,4,5,5] broadcast(%br), dimensions={1}
  ROOT %r = f32[6,4,5,5] add(%x, %bb)
}
ENTRY %e {
  %x = f32[6,4,5,5] parameter(0)
  %b = f32[4,1,1] parameter(1)
  ROOT %f = f32[6,4,5,5] fusion(%x, %b), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "row = begin / 25")) << code;
  CheckFusion(R"(HloModule ones
%fused (x: f32[5,1,7,1], b: f32[7]) -> f32[5,1,7,1] {
  %x = f32[5,1,7,1] parameter(0)
  %b = f32[7] parameter(1)
  %bb = f32[5,1,7,1] broadcast(%b), dimensions={2}
  ROOT %r = f32[5,1,7,1] subtract(%x, %bb)
}
ENTRY %e {
  %x = f32[5,1,7,1] parameter(0)
  %b = f32[7] parameter(1)
  ROOT %f = f32[5,1,7,1] fusion(%x, %b), kind=kLoop, calls=%fused
})");
}

TEST(RowLoopTest, StridedSliceAndWrappingReshape) {
  std::string code = CheckFusion(R"(HloModule slice
%fused (x: f32[20,30], y: f32[6,15]) -> f32[6,15] {
  %x = f32[20,30] parameter(0)
  %s = f32[6,15] slice(%x), slice={[2:20:3], [1:30:2]}
  %y = f32[6,15] parameter(1)
  ROOT %r = f32[6,15] multiply(%s, %y)
}
ENTRY %e {
  %x = f32[20,30] parameter(0)
  %y = f32[6,15] parameter(1)
  ROOT %f = f32[6,15] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  EXPECT_TRUE(Has(code, "j * 2")) << code;
  // transpose -> reshape: the reshape wraps inside a row (per-j index arithmetic).
  CheckFusion(R"(HloModule wrap
%fused (x: f32[3,8], y: f32[4,6]) -> f32[4,6] {
  %x = f32[3,8] parameter(0)
  %t = f32[8,3] transpose(%x), dimensions={1,0}
  %r = f32[4,6] reshape(%t)
  %y = f32[4,6] parameter(1)
  ROOT %a = f32[4,6] add(%r, %y)
}
ENTRY %e {
  %x = f32[3,8] parameter(0)
  %y = f32[4,6] parameter(1)
  ROOT %f = f32[4,6] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  // reshape splitting the inner dim, then transposing the pieces.
  CheckFusion(R"(HloModule heads
%fused (x: f32[2,5,12]) -> f32[2,3,5,4] {
  %x = f32[2,5,12] parameter(0)
  %r = f32[2,5,3,4] reshape(%x)
  %t = f32[2,3,5,4] transpose(%r), dimensions={0,2,1,3}
  ROOT %e = f32[2,3,5,4] exponential(%t)
}
ENTRY %e {
  %x = f32[2,5,12] parameter(0)
  ROOT %f = f32[2,3,5,4] fusion(%x), kind=kLoop, calls=%fused
})");
}

TEST(RowLoopTest, MultiOutputPredAndDouble) {
  CheckFusion(R"(HloModule multi
%fused (x: f64[9,17], b: f64[9]) -> (f64[9,17], pred[9,17], s32[9,17]) {
  %x = f64[9,17] parameter(0)
  %b = f64[9] parameter(1)
  %bb = f64[9,17] broadcast(%b), dimensions={0}
  %s = f64[9,17] add(%x, %bb)
  %g = pred[9,17] compare(%s, %x), direction=LT
  %c = s32[9,17] convert(%s)
  ROOT %t = (f64[9,17], pred[9,17], s32[9,17]) tuple(%s, %g, %c)
}
ENTRY %e {
  %x = f64[9,17] parameter(0)
  %b = f64[9] parameter(1)
  ROOT %f = (f64[9,17], pred[9,17], s32[9,17]) fusion(%x, %b), kind=kLoop, calls=%fused
})");
}

TEST(RowLoopTest, ZeroSizeOperandsAndReducedDims) {
  CheckFusion(R"(HloModule empty_concat
%fused (x: f32[4,0], y: f32[4,5]) -> f32[4,5] {
  %x = f32[4,0] parameter(0)
  %y = f32[4,5] parameter(1)
  ROOT %c = f32[4,5] concatenate(%x, %y), dimensions={1}
}
ENTRY %e {
  %x = f32[4,0] parameter(0)
  %y = f32[4,5] parameter(1)
  ROOT %f = f32[4,5] fusion(%x, %y), kind=kLoop, calls=%fused
})");
  CheckFusion(R"(HloModule empty_reduce
%fused (x: f32[0,6]) -> f32[6] {
  %x = f32[0,6] parameter(0)
  %z = f32[] constant(2)
  ROOT %r = f32[6] reduce(%x, %z), dimensions={0}, kind=add
}
ENTRY %e {
  %x = f32[0,6] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
})");
}

TEST(RowLoopTest, CudaDialectKeepsOneThreadPerElement) {
  auto module = Parse(R"(HloModule cuda
%fused (x: f32[37,53], b: f32[53]) -> f32[37,53] {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  %bb = f32[37,53] broadcast(%b), dimensions={1}
  ROOT %a = f32[37,53] add(%x, %bb)
}
ENTRY %e {
  %x = f32[37,53] parameter(0)
  %b = f32[53] parameter(1)
  ROOT %f = f32[37,53] fusion(%x, %b), kind=kLoop, calls=%fused
})");
  ASSERT_TRUE(module.ok()) << module.status();
  auto src = EmitFusionKernel(*(*module)->entry_computation()->root_instruction(), "k",
                              KernelDialect::kCuda);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(Has(src->code, "blockIdx.x")) << src->code;
  EXPECT_FALSE(Has(src->code, "row")) << src->code;
  EXPECT_EQ(src->row, 1);
}

}  // namespace
}  // namespace oneflow_like::hlo::testing
