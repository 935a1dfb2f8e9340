// Copy insertion, scheduling and buffer assignment.
#include <algorithm>

#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/copy_insertion.h"
#include "compiler/passes/hlo_scheduler.h"
#include "compiler/passes/pass_test_util.h"

namespace oneflow_like::hlo {
namespace {

TEST(CopyInsertionTest, CopiesOutputsThatAliasParametersConstantsOrEachOther) {
  auto r = RunPassOnText<CopyInsertion>(R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  %c = f32[4] constant({1, 2, 3, 4})
  %n = f32[4] negate(%x)
  %b = f32[2,2] bitcast(%x)
  ROOT %t = (f32[4], f32[4], f32[4], f32[4], f32[2,2]) tuple(%x, %c, %n, %n, %b)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "tuple(%copy, %copy.1, %n, %copy.2, %copy.3)")) << r.text;
}

TEST(CopyInsertionTest, LeavesDistinctComputedOutputsAlone) {
  const std::string text = R"(HloModule m

ENTRY %e (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4] parameter(0)
  %n = f32[4] negate(%x)
  %a = f32[4] abs(%x)
  ROOT %t = (f32[4], f32[4]) tuple(%n, %a)
}
)";
  auto r = RunPassOnText<CopyInsertion>(text);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.text, text);
}

TEST(CopyInsertionTest, WhileBodySwapGetsCopies) {
  auto r = RunPassOnText<CopyInsertion>(R"(HloModule m
%cond (s: (f32[2], f32[2])) -> pred[] {
  %s = (f32[2], f32[2]) parameter(0)
  ROOT %f = pred[] constant(false)
}
%body (t: (f32[2], f32[2])) -> (f32[2], f32[2]) {
  %t = (f32[2], f32[2]) parameter(0)
  %a = f32[2] get-tuple-element(%t), index=0
  %b = f32[2] get-tuple-element(%t), index=1
  ROOT %r = (f32[2], f32[2]) tuple(%b, %a)
}
ENTRY %e {
  %x = f32[2] parameter(0)
  %n = f32[2] negate(%x)
  %init = (f32[2], f32[2]) tuple(%n, %n)
  %w = (f32[2], f32[2]) while(%init), condition=%cond, body=%body
  %o = f32[2] get-tuple-element(%w), index=0
  ROOT %n2 = f32[2] negate(%o)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "ROOT %r = (f32[2], f32[2]) tuple(%copy, %copy.1)")) << r.text;
}

// Four independent chains: computing them one after another keeps one temp alive at a time.
const char* kChains = R"(HloModule m
ENTRY %e {
  %x = f32[1024] parameter(0)
  %a1 = f32[1024] exponential(%x)
  %b1 = f32[1024] exponential(%x)
  %c1 = f32[1024] exponential(%x)
  %a2 = f32[] reduce(%a1, %z), dimensions={0}, kind=add
  %z = f32[] constant(0)
  %b2 = f32[] reduce(%b1, %z), dimensions={0}, kind=add
  %c2 = f32[] reduce(%c1, %z), dimensions={0}, kind=add
  %s1 = f32[] add(%a2, %b2)
  ROOT %s2 = f32[] add(%s1, %c2)
})";

TEST(HloSchedulerTest, PicksTheScheduleWithTheLowestPeak) {
  std::string text = kChains;
  // %z is used before it is defined in list order: move it up so the text parses.
  text.replace(text.find("  %z = f32[] constant(0)\n"), 25, "");
  text.replace(text.find("  %a1"), 0, "  %z = f32[] constant(0)\n");
  auto m = ParseAndVerify(text);
  ASSERT_TRUE(m);
  const HloComputation& c = *m->entry_computation();
  int64_t list_order_peak = HloScheduler::SimulatePeak(c, c.MakeInstructionPostOrder());
  EXPECT_EQ(list_order_peak, 3 * 4096 + 4);
  auto r = RunPassOnText<HloScheduler>(text, false);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Contains(r.text, "HloModule m, is_scheduled=true")) << r.text;
  const HloComputation& s = *r.module->entry_computation();
  EXPECT_EQ(HloScheduler::SimulatePeak(s, s.MakeInstructionPostOrder()), 4096 + 8);
}

// An asynchronous pair (library/external_calls.h) written back to back: the scheduler moves the
// start up to its operand and the done down to its user, so the independent chain runs between.
constexpr char kAsyncPair[] = R"(HloModule m
ENTRY e {
  %p = f32[4] parameter(0)
  %x = f32[4] add(%p, %p)
  %s = f32[4] custom-call(%x), custom_call_target="ofl.kernel.dist_all_reduce_async_start"
  %d = f32[4] custom-call(%s), custom_call_target="ofl.kernel.dist_all_reduce_async_done"
  %a1 = f32[4] multiply(%p, %p)
  %a2 = f32[4] exponential(%a1)
  %a3 = f32[4] negate(%a2)
  ROOT %r = f32[4] add(%d, %a3)
}
)";

std::vector<std::string> Names(const std::vector<HloInstruction*>& order) {
  std::vector<std::string> names;
  for (const HloInstruction* i : order) names.push_back(i->name());
  return names;
}

TEST(HloSchedulerTest, AsyncStartsMoveUpAndDonesDown) {
  auto m = ParseAndVerify(kAsyncPair);
  ASSERT_TRUE(m);
  const HloComputation& c = *m->entry_computation();
  EXPECT_EQ(Names(HloScheduler::HideAsyncLatency(c.MakeInstructionPostOrder())),
            (std::vector<std::string>{"p", "x", "s", "a1", "a2", "a3", "d", "r"}));
  // The whole pass keeps the pair apart whatever order it picks: the start right after its
  // operand, the done right before its user.
  auto r = RunPassOnText<HloScheduler>(kAsyncPair, false);
  std::vector<std::string> order = Names(r.module->entry_computation()->MakeInstructionPostOrder());
  auto at = [&order](const char* n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  EXPECT_EQ(at("s"), at("x") + 1) << r.text;
  EXPECT_EQ(at("d") + 1, at("r")) << r.text;
}

// Without asynchronous calls the order is left as it was.
TEST(HloSchedulerTest, OrdersWithoutAsyncCallsAreUnchanged) {
  auto m = ParseAndVerify(R"(HloModule m
ENTRY e {
  %p = f32[4] parameter(0)
  %a = f32[4] negate(%p)
  %b = f32[4] exponential(%p)
  ROOT %r = f32[4] add(%a, %b)
}
)");
  ASSERT_TRUE(m);
  const auto order = m->entry_computation()->MakeInstructionPostOrder();
  EXPECT_EQ(HloScheduler::HideAsyncLatency(order), order);
}

TEST(BufferAssignmentTest, ReusesSpaceAndSeparatesParametersAndOutputs) {
  auto r = RunPassOnText<HloScheduler>(R"(HloModule m
ENTRY %e {
  %x = f32[256] parameter(0)
  %a = f32[256] exponential(%x)
  %b = f32[256] negate(%a)
  %c = f32[256] abs(%b)
  %d = f32[256] sqrt(%c)
  ROOT %o = f32[256] tanh(%d)
})",
                                       false);
  auto a = AssignBuffers(*r.module);
  ASSERT_TRUE(a.ok()) << a.status();
  const BufferAssignment& ba = **a;
  // a..d are temps: two live at a time, 1 KiB each -> a 2 KiB arena equal to the lower bound.
  EXPECT_EQ(ba.temp_bytes(), 2048) << ba.ToString();
  EXPECT_EQ(ba.lower_bound_bytes(), 2048) << ba.ToString();
  ASSERT_EQ(ba.allocations().size(), 3u);
  EXPECT_EQ(ba.allocations()[1].kind, BufferAllocation::Kind::kParameter);
  EXPECT_EQ(ba.allocations()[2].kind, BufferAllocation::Kind::kOutput);
  const HloComputation* c = r.module->entry_computation();
  auto slice = [&](const char* name) {
    for (HloInstruction* i : c->instructions())
      if (i->name() == name) return ba.Slice(i).value();
    return BufferSlice{};
  };
  EXPECT_EQ(slice("a"), slice("c"));
  EXPECT_NE(slice("a"), slice("b"));
  EXPECT_EQ(slice("o").allocation, 2);
  EXPECT_TRUE(Contains(ba.ToString(), "lower bound (largest live set): 2048 bytes"))
      << ba.ToString();
}

TEST(BufferAssignmentTest, RejectsOutputsAliasingParameters) {
  auto r = RunPassOnText<HloScheduler>(
      "HloModule m\nENTRY %e {\n  ROOT %x = f32[4] parameter(0)\n}", false);
  EXPECT_FALSE(AssignBuffers(*r.module).ok());
}

}  // namespace
}  // namespace oneflow_like::hlo
