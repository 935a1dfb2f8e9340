#include "compiler/eval/hlo_evaluator.h"

#include <cmath>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_verifier.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {
namespace {

Literal Lit(const std::string& shape, std::vector<double> v) {
  return Literal(ParseHloShape(shape).value(), std::move(v));
}

std::vector<double> EvalText(const std::string& text, std::vector<Literal> args) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(VerifyHloModule(**m).ok()) << VerifyHloModule(**m);
  HloEvaluator ev;
  auto r = ev.Evaluate(**m, args);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->data : std::vector<double>{};
}

TEST(HloEvaluatorTest, DenseLayerWithReluAndReduce) {
  auto out =
      EvalText(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %w = f32[3,2] parameter(1)
  %d = f32[2,2] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %z = f32[] constant(0)
  %zb = f32[2,2] broadcast(%z), dimensions={}
  %r = f32[2,2] maximum(%d, %zb)
  ROOT %sum = f32[2] reduce(%r, %z), dimensions={0}, to_apply=%add
})",
               {Lit("f32[2,3]", {1, 2, 3, 4, 5, 6}), Lit("f32[3,2]", {1, -1, 0, -1, 1, -1})});
  // d = [[4,-6],[10,-15]] -> relu -> column sums [14, 0]
  EXPECT_EQ(out, std::vector<double>({14, 0}));
}

TEST(HloEvaluatorTest, DataMovement) {
  EXPECT_EQ(EvalText("HloModule m\nENTRY %e {\n %x = f32[2,3] parameter(0)\n ROOT %t = f32[3,2] "
                     "transpose(%x), dimensions={1,0}\n}",
                     {Lit("f32[2,3]", {1, 2, 3, 4, 5, 6})}),
            std::vector<double>({1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(EvalText("HloModule m\nENTRY %e {\n %x = f32[3] parameter(0)\n %v = f32[] constant(9)\n"
                     " ROOT %p = f32[7] pad(%x, %v), padding=1_1_1\n}",
                     {Lit("f32[3]", {1, 2, 3})}),
            std::vector<double>({9, 1, 9, 2, 9, 3, 9}));
  EXPECT_EQ(EvalText("HloModule m\nENTRY %e {\n %x = f32[6] parameter(0)\n ROOT %s = f32[2] "
                     "slice(%x), slice={[1:6:3]}\n}",
                     {Lit("f32[6]", {0, 1, 2, 3, 4, 5})}),
            std::vector<double>({1, 4}));
  // A transposing bitcast: same bytes read through the other layout.
  EXPECT_EQ(EvalText("HloModule m\nENTRY %e {\n %x = f32[2,3]{1,0} parameter(0)\n ROOT %b = "
                     "f32[3,2]{0,1} bitcast(%x)\n}",
                     {Lit("f32[2,3]", {1, 2, 3, 4, 5, 6})}),
            std::vector<double>({1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(
      EvalText("HloModule m\nENTRY %e {\n %x = f32[4,2] parameter(0)\n %i = s32[3,1] parameter(1)\n"
               " ROOT %g = f32[3,2] gather(%x, %i), offset_dims={1}, collapsed_slice_dims={0}, "
               "start_index_map={0},"
               " index_vector_dim=1, slice_sizes={1,2}\n}",
               {Lit("f32[4,2]", {0, 1, 10, 11, 20, 21, 30, 31}), Lit("s32[3,1]", {2, 0, 3})}),
      std::vector<double>({20, 21, 0, 1, 30, 31}));
  EXPECT_EQ(
      EvalText(
          "HloModule m\nENTRY %e {\n %x = f32[4] parameter(0)\n %i = s32[2,1] parameter(1)\n"
          " %u = f32[2] parameter(2)\n ROOT %s = f32[4] scatter(%x, %i, %u), update_window_dims={},"
          " inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
          "kind=add\n}",
          {Lit("f32[4]", {1, 1, 1, 1}), Lit("s32[2,1]", {3, 3}), Lit("f32[2]", {5, 6})}),
      std::vector<double>({1, 1, 1, 12}));
}

TEST(HloEvaluatorTest, IntegerSemanticsWrapAndTruncate) {
  EXPECT_EQ(
      EvalText("HloModule m\nENTRY %e {\n %x = s32[3] parameter(0)\n %y = s32[3] parameter(1)\n"
               " ROOT %d = s32[3] divide(%x, %y)\n}",
               {Lit("s32[3]", {7, -7, 1}), Lit("s32[3]", {2, 2, 0})}),
      std::vector<double>({3, -3, -1}));
  EXPECT_EQ(
      EvalText(
          "HloModule m\nENTRY %e {\n %x = f32[3] parameter(0)\n ROOT %c = s8[3] convert(%x)\n}",
          {Lit("f32[3]", {1.9, -1.9, 300})}),
      std::vector<double>({1, -1, 44}));
}

TEST(HloEvaluatorTest, ConvolutionAndLibraryCalls) {
  // 1x1x3x3 input, 1x1x2x2 kernel of ones, no padding: window sums.
  auto conv = EvalText(
      "HloModule m\nENTRY %e {\n %x = f32[1,1,3,3] parameter(0)\n %k = f32[1,1,2,2] parameter(1)\n"
      " ROOT %c = f32[1,1,2,2] convolution(%x, %k), window={size=2x2}, "
      "dim_labels=bf01_oi01->bf01\n}",
      {Lit("f32[1,1,3,3]", {1, 2, 3, 4, 5, 6, 7, 8, 9}), Lit("f32[1,1,2,2]", {1, 1, 1, 1})});
  EXPECT_EQ(conv, std::vector<double>({12, 16, 24, 28}));
  auto sm = EvalText(
      "HloModule m\nENTRY %e {\n %x = f32[2,2] parameter(0)\n"
      " ROOT %s = f32[2,2] custom-call(%x), custom_call_target=\"softmax\"\n}",
      {Lit("f32[2,2]", {0, 0, 0, std::log(3.0)})});
  EXPECT_NEAR(sm[0], 0.5, 1e-12);
  EXPECT_NEAR(sm[3], 0.75, 1e-12);
  auto pool = EvalText(
      "HloModule m\nENTRY %e {\n %x = f32[1,1,2,4] parameter(0)\n"
      " ROOT %p = f32[1,1,1,2] custom-call(%x), custom_call_target=\"max_pool2d\", "
      "backend_config=\"kernel=2,2\"\n}",
      {Lit("f32[1,1,2,4]", {1, 5, 2, 0, 3, 4, 8, 7})});
  EXPECT_EQ(pool, std::vector<double>({5, 8}));
}

TEST(HloEvaluatorTest, WhileLoopCountsToTen) {
  auto out = EvalText(R"(HloModule m
%cond (s: (s32[], f32[])) -> pred[] {
  %s = (s32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (t: (s32[], f32[])) -> (s32[], f32[]) {
  %t = (s32[], f32[]) parameter(0)
  %j = s32[] get-tuple-element(%t), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %v = f32[] get-tuple-element(%t), index=1
  %two = f32[] constant(2)
  %v2 = f32[] multiply(%v, %two)
  ROOT %r = (s32[], f32[]) tuple(%j1, %v2)
}
ENTRY %e {
  %zero = s32[] constant(0)
  %x = f32[] parameter(0)
  %init = (s32[], f32[]) tuple(%zero, %x)
  %w = (s32[], f32[]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[] get-tuple-element(%w), index=1
})",
                      {Lit("f32[]", {3})});
  EXPECT_EQ(out, std::vector<double>({3072}));
}

}  // namespace
}  // namespace oneflow_like::hlo
