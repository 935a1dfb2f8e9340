#include "compiler/artifact/versioned_module.h"

#include <gtest/gtest.h>

#include "compiler/artifact/artifact_file.h"
#include "compiler/artifact/opset.h"
#include "compiler/ir/hlo_parser.h"

namespace oneflow_like::artifact {
namespace {

constexpr const char* kPadded = R"(HloModule m

ENTRY %main {
  %x = f32[2,3]{1,0} parameter(0)
  %z = f32[] constant(0)
  %p = f32[4,7]{1,0} pad(%x, %z), padding=1_1x0_0_PAD
  ROOT %t = (f32[4,7]{1,0}) tuple(%p)
}
)";

std::unique_ptr<hlo::HloModule> Parse(const std::string& interior) {
  std::string text = kPadded;
  text.replace(text.find("_PAD"), 4, interior);
  auto m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

TEST(VersionedModule, RoundTripsThroughTheCurrentOpset) {
  auto m = Parse("_2");  // interior padding 2 along dim 1: 3 + 2*2 = 7
  auto v = Legalize(*m);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(FindByWire(v->computations[0].insts[2].op)->FullName(), "pad_v2");
  auto back = LowerToHlo(*v);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->ToString(), m->ToString());
}

TEST(VersionedModule, DowngradePastInteriorPaddingNamesOpAttributeAndVersion) {
  auto m = Parse("_2");
  auto v = Legalize(*m);
  ASSERT_TRUE(v.ok());
  Status s = Downgrade(&*v, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("[pad] attribute 'interior'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("op-set 2"), std::string::npos) << s;
}

TEST(VersionedModule, DowngradeThenUpgradeIsTheIdentity) {
  auto text = std::string(kPadded);
  text.replace(text.find("x0_0_PAD"), 8, "x2_2");
  auto m = hlo::ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  auto v = Legalize(**m);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(Downgrade(&*v, 1).ok());
  EXPECT_EQ(FindByWire(v->computations[0].insts[2].op)->FullName(), "pad_v1");
  EXPECT_FALSE(ToHloText(*v).ok());  // lowering needs the current op set
  ASSERT_TRUE(Upgrade(&*v).ok());
  auto back = LowerToHlo(*v);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->ToString(), (*m)->ToString());
}

TEST(ArtifactFile, SerializationIsDeterministicAndChecked) {
  auto m = Parse("_2");
  ArtifactContents c;
  c.module = *Legalize(*m);
  c.inputs.push_back({"x", DType::kF32, {2, 3}});
  c.outputs.push_back({"y", DType::kF32, {4, 7}});
  auto a = SerializeArtifact(c), b = SerializeArtifact(c);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, *b);
  auto ok =
      ParseArtifact(reinterpret_cast<const uint8_t*>(a->data()), a->size(), "t.oflx", nullptr);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->contents.module.opset, kCurrentOpset);
  for (size_t cut : {size_t{0}, size_t{7}, a->size() / 2, a->size() - 1}) {
    auto bad = ParseArtifact(reinterpret_cast<const uint8_t*>(a->data()), cut, "t.oflx", nullptr);
    EXPECT_FALSE(bad.ok()) << cut;
    if (!bad.ok()) {
      EXPECT_EQ(bad.status().message().rfind("t.oflx: ", 0), 0u);
    }
  }
}

}  // namespace
}  // namespace oneflow_like::artifact
