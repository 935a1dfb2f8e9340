// Reduction roots (reductions.cc): row reductions in 16 lanes, column reductions in tiles, the
// per-element form (CUDA dialect, empty arrays), each run against the evaluator.
#include "compiler/codegen/emitter_test_util.h"
#include "compiler/codegen/reductions.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::testing {
namespace {

TEST(ReductionTest, RowReductionsUseLanes) {
  std::string code = CheckFusion(R"(HloModule rowsum
%fused (x: f32[33,50], m: f32[33]) -> f32[33] {
  %x = f32[33,50] parameter(0)
  %m = f32[33] parameter(1)
  %mb = f32[33,50] broadcast(%m), dimensions={0}
  %s = f32[33,50] subtract(%x, %mb)
  %e = f32[33,50] exponential(%s)
  %one = f32[] constant(1.5)
  ROOT %r = f32[33] reduce(%e, %one), dimensions={1}, kind=add
}
ENTRY %e {
  %x = f32[33,50] parameter(0)
  %m = f32[33] parameter(1)
  ROOT %f = f32[33] fusion(%x, %m), kind=kInput, calls=%fused
})");
  EXPECT_TRUE(Has(code, "ln[lane]")) << code;
  CheckFusion(R"(HloModule rowmax
%fused (x: f32[4,5,19]) -> f32[5] {
  %x = f32[4,5,19] parameter(0)
  %ninf = f32[] constant(-inf)
  ROOT %r = f32[5] reduce(%x, %ninf), dimensions={0,2}, kind=max
}
ENTRY %e {
  %x = f32[4,5,19] parameter(0)
  ROOT %f = f32[5] fusion(%x), kind=kInput, calls=%fused
})");
  CheckFusion(R"(HloModule all
%fused (x: f64[7,9]) -> f64[] {
  %x = f64[7,9] parameter(0)
  %z = f64[] constant(0)
  ROOT %r = f64[] reduce(%x, %z), dimensions={0,1}, kind=add
}
ENTRY %e {
  %x = f64[7,9] parameter(0)
  ROOT %f = f64[] fusion(%x), kind=kInput, calls=%fused
})");
  CheckFusion(R"(HloModule isum
%fused (x: s32[6,40]) -> s32[6] {
  %x = s32[6,40] parameter(0)
  %z = s32[] constant(3)
  ROOT %r = s32[6] reduce(%x, %z), dimensions={1}, kind=add
}
ENTRY %e {
  %x = s32[6,40] parameter(0)
  ROOT %f = s32[6] fusion(%x), kind=kInput, calls=%fused
})");
}

TEST(ReductionTest, ColumnReductionsKeepTheInnerDim) {
  std::string code = CheckFusion(R"(HloModule colsum
%fused (x: f32[50,333]) -> f32[333] {
  %x = f32[50,333] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[333] reduce(%x, %z), dimensions={0}, kind=add
}
ENTRY %e {
  %x = f32[50,333] parameter(0)
  ROOT %f = f32[333] fusion(%x), kind=kInput, calls=%fused
})");
  EXPECT_TRUE(Has(code, "acc[j - jt]")) << code;
  CheckFusion(R"(HloModule bias_grad
%fused (x: f32[4,6,10], y: f32[4,6,10]) -> f32[10] {
  %x = f32[4,6,10] parameter(0)
  %y = f32[4,6,10] parameter(1)
  %m = f32[4,6,10] multiply(%x, %y)
  %z = f32[] constant(0)
  ROOT %r = f32[10] reduce(%m, %z), dimensions={0,1}, kind=add
}
ENTRY %e {
  %x = f32[4,6,10] parameter(0)
  %y = f32[4,6,10] parameter(1)
  ROOT %f = f32[10] fusion(%x, %y), kind=kInput, calls=%fused
})");
  CheckFusion(R"(HloModule mid
%fused (x: f32[3,5,7]) -> f32[3,7] {
  %x = f32[3,5,7] parameter(0)
  %ninf = f32[] constant(-inf)
  %t = f32[3,5,7] tanh(%x)
  ROOT %r = f32[3,7] reduce(%t, %ninf), dimensions={1}, kind=min
}
ENTRY %e {
  %x = f32[3,5,7] parameter(0)
  ROOT %f = f32[3,7] fusion(%x), kind=kInput, calls=%fused
})");
}

TEST(ReductionTest, PerElementFormAccumulatesSequentially) {
  // The CUDA dialect: one thread per output element, the reduced positions in one loop (a trailing
  // reduced block is read through the linear position, no index decomposition).
  auto src = EmitEntryFusion(R"(HloModule cuda_sum
%fused (x: f32[6,10]) -> f32[6] {
  %x = f32[6,10] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[6] reduce(%x, %z), dimensions={1}, kind=add
}
ENTRY %e {
  %x = f32[6,10] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
})",
                             KernelDialect::kCuda);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(Has(src->code, "for (int64_t r")) << src->code;
  EXPECT_TRUE(Has(src->code, "p0[(i * 10 + r")) << src->code;
  EXPECT_TRUE(Has(src->code, "o0[i] = acc")) << src->code;
  EXPECT_FALSE(Has(src->code, "ln[")) << src->code;
}

TEST(ReductionTest, CudaWarpFormForLongReductions) {
  // >= kWarpReductionMin f32/f64 add/mul/max/min elements: one warp per output element, lanes
  // striding the reduced positions, shuffles combining them, init applied once by lane 0; the
  // kernel's iteration space is 32 threads per output element.
  auto src = EmitEntryFusion(R"(HloModule cuda_warp
%fused (x: f32[6,100]) -> f32[6] {
  %x = f32[6,100] parameter(0)
  %z = f32[] constant(0.5)
  ROOT %r = f32[6] reduce(%x, %z), dimensions={1}, kind=max
}
ENTRY %e {
  %x = f32[6,100] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
})",
                             KernelDialect::kCuda);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(src->num_elements, 6 * codegen::kWarpReductionLanes);
  EXPECT_TRUE(Has(src->code, "const int64_t i = gi / 32;")) << src->code;
  EXPECT_TRUE(Has(src->code, "= lane; r")) << src->code;
  EXPECT_TRUE(Has(src->code, "+= 32")) << src->code;
  EXPECT_TRUE(Has(src->code, "__shfl_down_sync(0xffffffffu, ")) << src->code;
  EXPECT_TRUE(Has(src->code, "if (lane == 0) o0[i] = ofl_max(")) << src->code;
  // Integer reductions and short ones keep the per-element loop.
  for (const char* text : {R"(HloModule short
%fused (x: f32[6,10]) -> f32[6] {
  %x = f32[6,10] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[6] reduce(%x, %z), dimensions={1}, kind=add
}
ENTRY %e {
  %x = f32[6,10] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
})",
                           R"(HloModule ints
%fused (x: s64[6,100]) -> s64[6] {
  %x = s64[6,100] parameter(0)
  %z = s64[] constant(0)
  ROOT %r = s64[6] reduce(%x, %z), dimensions={1}, kind=add
}
ENTRY %e {
  %x = s64[6,100] parameter(0)
  ROOT %f = s64[6] fusion(%x), kind=kInput, calls=%fused
})"}) {
    auto per_element = EmitEntryFusion(text, KernelDialect::kCuda);
    ASSERT_TRUE(per_element.ok()) << per_element.status();
    EXPECT_EQ(per_element->num_elements, 6);
    EXPECT_FALSE(Has(per_element->code, "__shfl")) << per_element->code;
  }
}

TEST(ReductionTest, UnknownKindIsUnimplemented) {
  auto src = EmitEntryFusion(R"(HloModule any
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %m = f32[] multiply(%a, %b)
  ROOT %s = f32[] add(%m, %b)
}
%fused (x: f32[6,10]) -> f32[6] {
  %x = f32[6,10] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[6] reduce(%x, %z), dimensions={1}, to_apply=%sum
}
ENTRY %e {
  %x = f32[6,10] parameter(0)
  ROOT %f = f32[6] fusion(%x), kind=kInput, calls=%fused
})",
                             KernelDialect::kCpp);
  EXPECT_FALSE(src.ok());
}

}  // namespace
}  // namespace oneflow_like::hlo::testing
