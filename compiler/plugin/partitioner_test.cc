// Partitioner tests in IR text: which selected ops share a partition (largest cycle-free
// groups, partition indices respected), what stays with the caller, and what outlining keeps.
#include "compiler/plugin/partitioner.h"

#include <map>

#include "compiler/plugin/ofl_compiler_plugin.h"
#include "compiler/passes/pass_test_util.h"
#include "gtest/gtest.h"

namespace oneflow_like::hlo::plugin {
namespace {

using Selection = std::map<std::string, int32_t>;  // op name -> partition index

std::vector<Partition> Group(const HloModule& m, const Selection& sel) {
  absl::flat_hash_map<const HloInstruction*, int32_t> s;
  for (const HloInstruction* i : m.entry_computation()->instructions())
    if (auto it = sel.find(i->name()); it != sel.end()) s[i] = it->second;
  return GroupPartitions(*m.entry_computation(), s);
}

std::vector<std::string> Names(const std::vector<HloInstruction*>& v) {
  std::vector<std::string> out;
  for (const HloInstruction* i : v) out.push_back(i->name());
  return out;
}

// Replaces every partition by a dispatch op (as the plugin pass does) and verifies the module.
std::string ReplaceAll(HloModule* m, std::vector<Partition> parts) {
  absl::flat_hash_map<HloInstruction*, HloInstruction*> replaced;
  for (size_t k = 0; k < parts.size(); ++k) {
    for (HloInstruction*& in : parts[k].inputs)
      if (auto it = replaced.find(in); it != replaced.end()) in = it->second;
    std::vector<HloInstruction*> outs = parts[k].outputs;
    auto values = ReplaceWithDispatch(m->entry_computation(), parts[k],
                                      "dispatch" + std::to_string(k), "cfg");
    EXPECT_TRUE(values.ok()) << values.status();
    for (size_t o = 0; o < outs.size(); ++o) replaced[outs[o]] = (*values)[o];
  }
  Status v = VerifyHloModule(*m);
  EXPECT_TRUE(v.ok()) << v << "\n" << m->ToString();
  return m->ToString();
}

constexpr char kChain[] = R"(
HloModule chain

ENTRY %main {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} exponential(%p)
  %b = f32[4]{0} log(%a)
  %c = f32[4]{0} add(%a, %b)
  ROOT %t = (f32[4]{0}) tuple(%c)
}
)";

TEST(PartitionerTest, ChainOfSelectedOpsIsOnePartition) {
  auto m = ParseAndVerify(kChain);
  auto parts =
      Group(*m, {{"a", OFL_ANY_PARTITION}, {"b", OFL_ANY_PARTITION}, {"c", OFL_ANY_PARTITION}});
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(Names(parts[0].members), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Names(parts[0].inputs), (std::vector<std::string>{"p"}));
  EXPECT_EQ(Names(parts[0].outputs), (std::vector<std::string>{"c"}));
  const std::string text = ReplaceAll(m.get(), parts);
  EXPECT_TRUE(
      Contains(text, "f32[4]{0} custom-call(%p), custom_call_target=\"ofl.plugin.dispatch\""))
      << text;
  EXPECT_FALSE(Contains(text, "exponential")) << text;
}

TEST(PartitionerTest, UnselectedOpBetweenSelectedOnesSplitsThemToAvoidACycle) {
  // {a, c} with b on the CPU would be a -> b -> c through the caller: a cycle.
  auto m = ParseAndVerify(kChain);
  auto parts = Group(*m, {{"a", OFL_ANY_PARTITION}, {"c", OFL_ANY_PARTITION}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Names(parts[0].members), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Names(parts[1].members), (std::vector<std::string>{"c"}));
  EXPECT_EQ(Names(parts[1].inputs), (std::vector<std::string>{"a", "b"}));
  const std::string text = ReplaceAll(m.get(), parts);
  EXPECT_TRUE(Contains(text, "log(%dispatch0)")) << text;  // the unsupported op stays
  EXPECT_TRUE(Contains(text, "custom-call(%dispatch0, %b)")) << text;
}

TEST(PartitionerTest, PartitionIndicesAreRespected) {
  auto m = ParseAndVerify(kChain);
  auto parts = Group(*m, {{"a", 0}, {"b", 0}, {"c", 1}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Names(parts[0].members), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Names(parts[0].outputs), (std::vector<std::string>{"a", "b"}));  // both read by c
  EXPECT_EQ(Names(parts[1].members), (std::vector<std::string>{"c"}));
  // "any" joins an explicit index.
  auto m2 = ParseAndVerify(kChain);
  auto any = Group(*m2, {{"a", 3}, {"b", OFL_ANY_PARTITION}, {"c", 3}});
  ASSERT_EQ(any.size(), 1u);
  const std::string text = ReplaceAll(m.get(), parts);
  EXPECT_TRUE(Contains(text, "(f32[4]{0}, f32[4]{0}) custom-call(%p)")) << text;
  EXPECT_TRUE(Contains(text, "get-tuple-element(%dispatch0), index=1")) << text;
}

TEST(PartitionerTest, IndependentBranchesMergeButNotIntoACycleOfPartitions) {
  constexpr char kCross[] = R"(
HloModule cross

ENTRY %main {
  %p = f32[4]{0} parameter(0)
  %a1 = f32[4]{0} exponential(%p)
  %b1 = f32[4]{0} log(%a1)
  %b2 = f32[4]{0} sine(%p)
  %a2 = f32[4]{0} cosine(%b2)
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%b1, %a2)
}
)";
  // Siblings with no path between them form one partition.
  auto m = ParseAndVerify(kCross);
  auto one = Group(*m, {{"a1", OFL_ANY_PARTITION}, {"b2", OFL_ANY_PARTITION}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(Names(one[0].members), (std::vector<std::string>{"a1", "b2"}));
  // A = {a1, a2} and B = {b1, b2} are each cycle-free, but A -> B (a1 -> b1) and B -> A
  // (b2 -> a2) together would be: the second group is refused.
  auto parts = Group(*m, {{"a1", 0}, {"a2", 0}, {"b1", 1}, {"b2", 1}});
  ASSERT_EQ(parts.size(), 3u);
  ReplaceAll(m.get(), parts);
}

TEST(PartitionerTest, ParametersConstantsAndTuplesStayWithTheCaller) {
  auto m = ParseAndVerify(kChain);
  auto parts = Group(*m, {{"p", OFL_ANY_PARTITION}, {"t", OFL_ANY_PARTITION}});
  EXPECT_TRUE(parts.empty());
  EXPECT_FALSE(NonPartitionableReason(*m->entry_computation()->root_instruction()).empty());
}

TEST(PartitionerTest, OutliningKeepsShapesLayoutsAndScalarConstants) {
  auto m = ParseAndVerify(R"(
HloModule outline

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main {
  %p = f32[2,3]{0,1} parameter(0)
  %q = f32[3]{0} parameter(1)
  %zero = f32[] constant(0)
  %two = f32[] constant(2)
  %c = f32[2,3]{0,1} copy(%p)
  %b = f32[2,3]{1,0} broadcast(%q), dimensions={1}
  %m = f32[2,3]{1,0} multiply(%b, %b)
  %bt = f32[2,3]{1,0} broadcast(%two), dimensions={}
  %sum = f32[2,3]{1,0} add(%m, %bt)
  %r = f32[2]{0} reduce(%sum, %zero), dimensions={1}, to_apply=%add
  ROOT %t = (f32[2]{0}, f32[2,3]{0,1}) tuple(%r, %c)
}
)");
  auto parts = Group(*m, {{"b", OFL_ANY_PARTITION},
                          {"m", OFL_ANY_PARTITION},
                          {"bt", OFL_ANY_PARTITION},
                          {"sum", OFL_ANY_PARTITION},
                          {"r", OFL_ANY_PARTITION},
                          {"c", OFL_ANY_PARTITION}});
  ASSERT_EQ(parts.size(), 1u);
  auto outlined = OutlinePartition(parts[0], "part");
  ASSERT_TRUE(outlined.ok()) << outlined.status();
  ASSERT_TRUE(VerifyHloModule(**outlined).ok());
  const std::string text = (*outlined)->ToString();
  EXPECT_TRUE(Contains(text, "%p = f32[2,3]{0,1} parameter(0)")) << text;
  EXPECT_TRUE(Contains(text, "%q = f32[3]{0} parameter(1)")) << text;
  EXPECT_TRUE(Contains(text, "%two = f32[] constant(2)")) << text;  // cloned, not an input
  EXPECT_TRUE(Contains(text, "to_apply=%add")) << text;
  EXPECT_TRUE(Contains(text, "(f32[2,3]{0,1}, f32[2]{0}) tuple(%c, %r)")) << text;
  const std::string after = ReplaceAll(m.get(), parts);
  EXPECT_TRUE(Contains(after, "(f32[2,3]{0,1}, f32[2]{0}) custom-call(%p, %q)")) << after;
}

}  // namespace
}  // namespace oneflow_like::hlo::plugin
