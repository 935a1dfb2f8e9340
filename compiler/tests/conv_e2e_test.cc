// HLO convolutions end to end: IR text -> Compile -> run, against the reference evaluator, and
// which oneDNN primitive (compiler/backends/cpu/conv_thunk.h) each convolution became. The
// shapes are the ones oneflow_like/lazy/lowering/conv.cc emits for conv2d and its gradients.
#include "compiler/backends/cpu/conv_thunk.h"
#include "compiler/tests/e2e_test_util.h"

namespace oneflow_like::hlo {
namespace {

int Count(const std::string& s, const std::string& f) {
  int n = 0;
  for (size_t p = s.find(f); p != std::string::npos; p = s.find(f, p + 1)) ++n;
  return n;
}

// Compiles and compares `text`; expects `kinds` oneDNN convolutions of kind `kind` ("" = the
// direct loop for all) among `total` convolutions.
void Check(const std::string& text, const std::string& kind, int onednn, int total = 1) {
  auto exe = CompileAndCompare(text, 1e-4);
  ASSERT_TRUE(exe);
  const std::string thunks = exe->ThunksToString();
  EXPECT_EQ(exe->stats().emit.convolutions, total) << thunks;
  EXPECT_EQ(Count(thunks, "onednn"), onednn) << thunks;
  if (!kind.empty()) {
    EXPECT_EQ(Count(thunks, "onednn " + kind + " "), onednn) << thunks;
  }
  EXPECT_TRUE(exe->stats().emit.evaluator_fallbacks.empty()) << exe->stats().ToString();
}

TEST(ConvE2ETest, ForwardStride2Padding) {
  Check(R"(HloModule fwd
ENTRY %e {
  %x = f32[2,3,9,9] parameter(0)
  %k = f32[4,3,3,3] parameter(1)
  ROOT %y = f32[2,4,5,5] convolution(%x, %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
        "forward", 1);
}

TEST(ConvE2ETest, ForwardDilationGroupsAndUnevenStride) {
  Check(R"(HloModule fwd_groups
ENTRY %e {
  %x = f32[2,4,8,7] parameter(0)
  %k = f32[6,2,3,3] parameter(1)
  ROOT %y = f32[2,6,8,4] convolution(%x, %k), window={size=3x3 stride=1x2 pad=2_2x1_1 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
})",
        "forward", 1);
}

TEST(ConvE2ETest, ForwardGroupsStride2x1) {
  Check(R"(HloModule fwd_groups2
ENTRY %e {
  %x = f32[2,4,8,7] parameter(0)
  %k = f32[6,2,3,3] parameter(1)
  ROOT %y = f32[2,6,4,5] convolution(%x, %k), window={size=3x3 stride=2x1 pad=1_1x0_0}, dim_labels=bf01_oi01->bf01, feature_group_count=2
})",
        "forward", 1);
}

// conv + bias + relu: the convolution stays a library call, the bias add and relu one fused loop.
TEST(ConvE2ETest, BiasAndReluFuseAfterTheConvolution) {
  auto exe = CompileAndCompare(R"(HloModule fwd_bias
ENTRY %e {
  %x = f32[2,3,6,6] parameter(0)
  %k = f32[5,3,3,3] parameter(1)
  %b = f32[5] parameter(2)
  %c = f32[2,5,6,6] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  %bb = f32[2,5,6,6] broadcast(%b), dimensions={1}
  %a = f32[2,5,6,6] add(%c, %bb)
  %zero = f32[] constant(0)
  %z = f32[2,5,6,6] broadcast(%zero), dimensions={}
  ROOT %r = f32[2,5,6,6] maximum(%a, %z)
})");
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->stats().emit.convolutions, 1) << exe->ThunksToString();
  EXPECT_EQ(exe->stats().emit.kernels, 1) << exe->ThunksToString();
  EXPECT_EQ(Count(exe->ThunksToString(), "onednn forward"), 1) << exe->ThunksToString();
}

// dx of a stride-2 pad-1 3x3 conv over 9x9 (dy 5x5): lhs dilation 2, kernel reversed and i/o
// swapped (a parameter here: the reading must hold for any kernel data).
TEST(ConvE2ETest, BackwardInputStride2) {
  Check(R"(HloModule bwd_in
ENTRY %e {
  %dy = f32[2,4,5,5] parameter(0)
  %k = f32[4,3,3,3] parameter(1)
  ROOT %dx = f32[2,3,9,9] convolution(%dy, %k), window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=bf01_io01->bf01
})",
        "backward_data", 1);
}

// Even input (the last row feeds no output: dx there is 0), dilation 2, 2 groups.
TEST(ConvE2ETest, BackwardInputDilationGroupsFloorCase) {
  Check(R"(HloModule bwd_in_groups
ENTRY %e {
  %dy = f32[2,4,4,3] parameter(0)
  %k = f32[2,4,3,3] parameter(1)
  ROOT %dx = f32[2,4,7,8] convolution(%dy, %k), window={size=3x3 pad=2_2x2_3 lhs_dilate=2x3 rhs_dilate=2x2}, dim_labels=bf01_io01->bf01, feature_group_count=2
})",
        "backward_data", 1);
}

// The whole gradient-input chain as the lowering emits it: the forward weights reversed in space
// by slices + concatenates (one fused loop), then the convolution.
TEST(ConvE2ETest, BackwardInputWithReversedWeights) {
  Check(R"(HloModule bwd_in_rev
ENTRY %e {
  %dy = f32[2,4,4,4] parameter(0)
  %w = f32[4,3,2,2] parameter(1)
  %r0 = f32[4,3,1,2] slice(%w), slice={[0:4], [0:3], [1:2], [0:2]}
  %r1 = f32[4,3,1,2] slice(%w), slice={[0:4], [0:3], [0:1], [0:2]}
  %wr = f32[4,3,2,2] concatenate(%r0, %r1), dimensions={2}
  %c0 = f32[4,3,2,1] slice(%wr), slice={[0:4], [0:3], [0:2], [1:2]}
  %c1 = f32[4,3,2,1] slice(%wr), slice={[0:4], [0:3], [0:2], [0:1]}
  %wrr = f32[4,3,2,2] concatenate(%c0, %c1), dimensions={3}
  ROOT %dx = f32[2,3,8,8] convolution(%dy, %wrr), window={size=2x2 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=bf01_io01->bf01
})",
        "backward_data", 1);
}

// dW of a stride-2 pad-1 3x3 conv over 9x9: x with batch and feature swapped, dy as the kernel.
TEST(ConvE2ETest, BackwardFilterStride2) {
  Check(R"(HloModule bwd_w
ENTRY %e {
  %x = f32[2,3,9,9] parameter(0)
  %dy = f32[2,4,5,5] parameter(1)
  ROOT %dw = f32[4,3,3,3] convolution(%x, %dy), window={size=5x5 pad=1_1x1_1 rhs_dilate=2x2}, dim_labels=fb01_io01->fb01
})",
        "backward_weights", 1);
}

TEST(ConvE2ETest, BackwardFilterDilation2) {
  Check(R"(HloModule bwd_w_dil
ENTRY %e {
  %x = f32[3,2,8,8] parameter(0)
  %dy = f32[3,5,8,8] parameter(1)
  ROOT %dw = f32[5,2,3,3] convolution(%x, %dy), window={size=8x8 stride=2x2 pad=2_2x2_2}, dim_labels=fb01_io01->fb01
})",
        "backward_weights", 1);
}

// Grouped dW as the lowering emits it: one convolution per group on channel slices.
TEST(ConvE2ETest, BackwardFilterGroupsBySlices) {
  Check(R"(HloModule bwd_w_groups
ENTRY %e {
  %x = f32[2,4,6,6] parameter(0)
  %dy = f32[2,6,6,6] parameter(1)
  %x0 = f32[2,2,6,6] slice(%x), slice={[0:2], [0:2], [0:6], [0:6]}
  %x1 = f32[2,2,6,6] slice(%x), slice={[0:2], [2:4], [0:6], [0:6]}
  %d0 = f32[2,3,6,6] slice(%dy), slice={[0:2], [0:3], [0:6], [0:6]}
  %d1 = f32[2,3,6,6] slice(%dy), slice={[0:2], [3:6], [0:6], [0:6]}
  %w0 = f32[3,2,3,3] convolution(%x0, %d0), window={size=6x6 pad=1_1x1_1}, dim_labels=fb01_io01->fb01
  %w1 = f32[3,2,3,3] convolution(%x1, %d1), window={size=6x6 pad=1_1x1_1}, dim_labels=fb01_io01->fb01
  ROOT %dw = f32[6,2,3,3] concatenate(%w0, %w1), dimensions={0}
})",
        "backward_weights", 2, 2);
}

// What oneDNN cannot take stays on the direct loop: f64, 1-D, negative low padding.
TEST(ConvE2ETest, UnclassifiedConvolutionsKeepTheDirectLoop) {
  Check(R"(HloModule f64
ENTRY %e {
  %x = f64[2,3,6,6] parameter(0)
  %k = f64[4,3,3,3] parameter(1)
  ROOT %y = f64[2,4,4,4] convolution(%x, %k), window={size=3x3}, dim_labels=bf01_oi01->bf01
})",
        "", 0);
  Check(R"(HloModule one_d
ENTRY %e {
  %x = f32[2,3,9] parameter(0)
  %k = f32[4,3,3] parameter(1)
  ROOT %y = f32[2,4,7] convolution(%x, %k), window={size=3}, dim_labels=bf0_oi0->bf0
})",
        "", 0);
  Check(R"(HloModule crop
ENTRY %e {
  %x = f32[1,2,8,8] parameter(0)
  %k = f32[3,2,3,3] parameter(1)
  ROOT %y = f32[1,3,4,4] convolution(%x, %k), window={size=3x3 pad=-1_-1x-1_-1}, dim_labels=bf01_oi01->bf01
})",
        "", 0);
}

TEST(ConvE2ETest, ClassificationNamesTheConvolution) {
  auto m = ParseHloModule(R"(HloModule bad
ENTRY %e {
  %x = f32[2,3,9] parameter(0)
  %k = f32[4,3,3] parameter(1)
  ROOT %myconv = f32[2,4,7] convolution(%x, %k), window={size=3}, dim_labels=bf0_oi0->bf0
})");
  ASSERT_TRUE(m.ok()) << m.status();
  auto plan = ClassifyConvolution(*(*m)->entry_computation()->root_instruction());
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("myconv"), std::string::npos) << plan.status();
  EXPECT_NE(plan.status().message().find("f32[2,3,9]"), std::string::npos) << plan.status();
}

}  // namespace
}  // namespace oneflow_like::hlo
