// Elemental expressions (elemental.cc): IR text in, the expression text of one instruction out,
// in both dialects; literals, C types and reduction combiners.
#include "compiler/codegen/elemental.h"

#include <cmath>

#include "compiler/codegen/emitter_test_util.h"
#include "compiler/ir/hlo_computation.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::codegen {
namespace {

constexpr char kModule[] = R"(HloModule elemental
ENTRY %e {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %i = s32[4] parameter(2)
  %j = s32[4] parameter(3)
  %p = pred[4] parameter(4)
  %exp = f32[4] exponential(%x)
  %sig = f32[4] logistic(%x)
  %add = f32[4] add(%x, %y)
  %iadd = s32[4] add(%i, %j)
  %idiv = s32[4] divide(%i, %j)
  %cmp = pred[4] compare(%x, %y), direction=LT
  %not = pred[4] not(%p)
  %inot = s32[4] not(%i)
  %tob = pred[4] convert(%x)
  ROOT %sel = f32[4] select(%p, %x, %y)
})";

// The expression of instruction `name` of kModule over operands a, b, c.
std::string Expr(const std::string& name, KernelDialect dialect) {
  auto module = testing::Parse(kModule);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  for (const HloInstruction* inst : (*module)->entry_computation()->instructions()) {
    if (inst->name() != name + "_e") continue;
    auto T = CType(inst->shape().dtype());
    EXPECT_TRUE(T.ok());
    auto e = ElementwiseExpr(inst, {"a", "b", "c"}, *T, dialect);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : "";
  }
  ADD_FAILURE() << "no instruction " << name;
  return "";
}

TEST(ElementalTest, FloatExpUsesThePreludeOnTheCpuAndLibmOnCuda) {
  EXPECT_EQ(Expr("exp", KernelDialect::kCpp), "ofl_expf(a)");
  EXPECT_EQ(Expr("exp", KernelDialect::kCuda), "exp(a)");
  EXPECT_EQ(Expr("sig", KernelDialect::kCpp), "(float(1) / (float(1) + ofl_expf(-a)))");
  EXPECT_EQ(Expr("sig", KernelDialect::kCuda), "(float(1) / (float(1) + exp(-a)))");
}

TEST(ElementalTest, IntegerArithmeticWrapsAndDivisionByZeroIsDefined) {
  EXPECT_EQ(Expr("add", KernelDialect::kCpp), "float(a + b)");
  EXPECT_EQ(Expr("iadd", KernelDialect::kCpp), "ofl_wadd(a, b)");
  EXPECT_EQ(Expr("idiv", KernelDialect::kCuda), "ofl_idiv(a, b)");
}

TEST(ElementalTest, PredicatesAndConversions) {
  EXPECT_EQ(Expr("cmp", KernelDialect::kCpp), "(a < b)");
  EXPECT_EQ(Expr("not", KernelDialect::kCpp), "(!a)");
  EXPECT_EQ(Expr("inot", KernelDialect::kCpp), "int32_t(~a)");
  EXPECT_EQ(Expr("tob", KernelDialect::kCpp), "(a != 0)");
  EXPECT_EQ(Expr("sel", KernelDialect::kCuda), "(a ? b : c)");
}

TEST(ElementalTest, TypesAndLiterals) {
  EXPECT_EQ(*CType(DType::kI64), "int64_t");
  EXPECT_EQ(*BufferCType(DType::kBool, KernelDialect::kCpp), "unsigned char");
  EXPECT_EQ(*BufferCType(DType::kBool, KernelDialect::kCuda), "bool");
  EXPECT_FALSE(CType(DType::kF16).ok());
  EXPECT_EQ(LiteralExpr(DType::kF32, NAN, "float"), "ofl_nan<float>()");
  EXPECT_EQ(LiteralExpr(DType::kF64, -INFINITY, "double"), "-ofl_inf<double>()");
  EXPECT_EQ(LiteralExpr(DType::kI64, 3, "int64_t"), "int64_t(3LL)");
  EXPECT_EQ(LiteralExpr(DType::kBool, 1, "bool"), "true");
  EXPECT_EQ(LiteralExpr(DType::kF32, 0.5, "float"), "float(0.5)");
  EXPECT_EQ(Product({2, 3, 4}), 24);
}

TEST(ElementalTest, ReductionCombinersAndIdentities) {
  EXPECT_EQ(Combine(ReduceKind::kAdd, "s", "v", "float"), "float(s + v)");
  EXPECT_EQ(Combine(ReduceKind::kMax, "s", "v", "float"), "ofl_max(s, v)");
  EXPECT_EQ(Combine(ReduceKind::kOr, "s", "v", "bool"), "(s || v)");
  EXPECT_EQ(Identity(ReduceKind::kMul, "double"), "double(1)");
  EXPECT_EQ(Identity(ReduceKind::kMax, "float"), "-ofl_inf<float>()");
  EXPECT_EQ(Identity(ReduceKind::kMin, "float"), "ofl_inf<float>()");
}

}  // namespace
}  // namespace oneflow_like::hlo::codegen
