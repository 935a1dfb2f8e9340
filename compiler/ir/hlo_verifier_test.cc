#include "compiler/ir/hlo_verifier.h"

#include "compiler/ir/hlo_parser.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo {
namespace {

Status VerifyText(const std::string& body) {
  auto m = ParseHloModule("HloModule m\n" + body);
  if (!m.ok()) return m.status();
  return VerifyHloModule(**m);
}

void ExpectInvalid(const std::string& body, const std::string& fragment) {
  Status s = VerifyText(body);
  ASSERT_FALSE(s.ok()) << body;
  EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s;
}

TEST(HloVerifierTest, AcceptsWellFormedModule) {
  EXPECT_TRUE(VerifyText(R"(
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %y = f32[3,4] parameter(1)
  %d = f32[2,4] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %z = f32[] constant(0)
  %r = f32[2] reduce(%d, %z), dimensions={1}, to_apply=%add
  %t = f32[4,2] transpose(%d), dimensions={1,0}
  %sl = f32[1,2] slice(%t), slice={[1:2], [0:2]}
  %bc = f32[3,2,4] broadcast(%d), dimensions={1,2}
  ROOT %tu = (f32[2], f32[1,2], f32[3,2,4]) tuple(%r, %sl, %bc)
})")
                  .ok());
}

TEST(HloVerifierTest, RejectsShapeMismatches) {
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[2] parameter(0)\n %y = f32[3] parameter(1)\n ROOT %a = f32[2] add(%x, "
      "%y)\n}",
      "operand shapes differ");
  ExpectInvalid("ENTRY %e {\n %x = f32[2] parameter(0)\n ROOT %a = f32[3] negate(%x)\n}",
                "declared f32[3]");
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[2,3] parameter(0)\n %y = f32[4,5] parameter(1)\n"
      " ROOT %d = f32[2,5] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
      "[dot]");
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[2,3] parameter(0)\n ROOT %t = f32[3,2] transpose(%x), "
      "dimensions={0,0}\n}",
      "permutation");
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[4] parameter(0)\n ROOT %s = f32[3] slice(%x), slice={[2:5]}\n}",
      "bad slice");
  ExpectInvalid("ENTRY %e {\n %x = f32[4] parameter(0)\n ROOT %r = f32[5] reshape(%x)\n}",
                "[reshape]");
  ExpectInvalid("ENTRY %e {\n %x = s32[4] parameter(0)\n ROOT %r = s32[4] exponential(%x)\n}",
                "floating");
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[4] parameter(0)\n %z = f32[] constant(0)\n"
      " ROOT %r = f32[] reduce(%x, %z), dimensions={0}\n}",
      "to_apply or kind");
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[4] parameter(0)\n ROOT %b = f32[4,5] broadcast(%x), dimensions={1}\n}",
      "cannot broadcast");
  ExpectInvalid(
      "ENTRY %e {\n %x = f32[4] parameter(0)\n %p = pred[4] parameter(1)\n"
      " ROOT %s = f32[4] select(%x, %x, %x)\n}",
      "predicate must be pred");
}

TEST(HloVerifierTest, RejectsBrokenStructure) {
  auto m = ParseHloModule(
      "HloModule m\nENTRY %e {\n %x = f32[2] parameter(0)\n ROOT %n = f32[2] negate(%x)\n}");
  ASSERT_TRUE(m.ok());
  HloInstruction* root = (*m)->entry_computation()->root_instruction();
  root->mutable_shape()->set_minor_to_major({3});
  EXPECT_FALSE(VerifyHloModule(**m).ok());
}

}  // namespace
}  // namespace oneflow_like::hlo
