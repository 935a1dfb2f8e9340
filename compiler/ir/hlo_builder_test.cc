#include "compiler/ir/hlo_builder.h"

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_verifier.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {
namespace {

TEST(HloBuilderTest, BuildsAnMlpLayerWithInferredShapes) {
  auto module = std::make_unique<HloModule>("layer");
  HloComputation* add = AddScalarComputation(module.get(), "add", HloOpcode::kAdd, DType::kF32);
  HloBuilder b(module.get(), "main");
  HloInstruction* x = b.Parameter(HloShape(DType::kF32, {4, 8}), "x");
  HloInstruction* w = b.Parameter(HloShape(DType::kF32, {8, 16}), "w");
  HloInstruction* bias = b.Parameter(HloShape(DType::kF32, {16}), "b");
  HloInstruction* y = b.MatMul(x, w).value();
  EXPECT_EQ(y->shape().ToString(), "f32[4,16]");
  HloInstruction* bb = b.BroadcastLike(bias, y->shape()).value();
  HloInstruction* z = b.Binary(HloOpcode::kAdd, y, bb).value();
  HloInstruction* zero = b.ScalarConstant(DType::kF32, 0);
  HloInstruction* zeros = b.BroadcastLike(zero, z->shape()).value();
  HloInstruction* relu = b.Binary(HloOpcode::kMaximum, z, zeros).value();
  HloInstruction* sum = b.Reduce(relu, zero, {0, 1}, add).value();
  EXPECT_EQ(sum->shape().ToString(), "f32[]");
  ASSERT_TRUE(b.Build(b.Tuple({relu, sum}).value(), true).ok());
  ASSERT_TRUE(VerifyHloModule(*module).ok());
  std::string text = module->ToString();
  auto parsed = ParseHloModule(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << text;
  EXPECT_EQ((*parsed)->ToString(), text);
}

TEST(HloBuilderTest, ShapeErrorsAreStatuses) {
  auto module = std::make_unique<HloModule>("bad");
  HloBuilder b(module.get(), "main");
  HloInstruction* x = b.Parameter(HloShape(DType::kF32, {4, 8}));
  HloInstruction* y = b.Parameter(HloShape(DType::kF32, {4, 9}));
  auto r = b.Binary(HloOpcode::kAdd, x, y);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message())
                .find("[add] operand shapes differ: got f32[4,8] and f32[4,9]"),
            std::string::npos)
      << r.status();
  EXPECT_FALSE(b.MatMul(x, y).ok());
  EXPECT_FALSE(b.Reshape(x, {5, 5}).ok());
  EXPECT_FALSE(b.Transpose(x, {0}).ok());
  EXPECT_TRUE(b.Reshape(x, {32}).ok());
}

}  // namespace
}  // namespace oneflow_like::hlo
