#include "oneflow_like/base/trace_recorder.h"

#include <cstdio>
#include <thread>

#include "gtest/gtest.h"

namespace oneflow_like {
namespace profiler {
namespace {

TraceEvent Span(const char* name, int64_t track) {
  TraceEvent e;
  e.track = track;
  e.begin_ns = NowTicks();
  e.end_ns = e.begin_ns + 1;
  e.static_name = name;
  return e;
}

TEST(TraceRecorder, CollectsEveryThreadsEventsOfTheSession) {
  Start(false, false);
  EXPECT_TRUE(Enabled());
  for (int i = 0; i < 1500; ++i) Record(Span("main", ThisThreadTrack()));  // spans 3 chunks
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 700; ++i) Record(Span("worker", StreamTrack(0, 0, 0)));
    });
  for (auto& t : threads) t.join();  // their buffers outlive the threads until the next Start
  RecordCounter("bytes", 42);
  RecordFlowStart(7, 3);
  RecordSpan(StreamTrack(0, 0, 0), "relu", "instruction", NowTicks(), NowTicks(), 7, 0, "");
  Stop();
  EXPECT_FALSE(Enabled());
  Collected c = Collect();
  const int64_t now = NowNs();
  for (const auto& e : c.events) {  // converted to CLOCK_MONOTONIC ns, within this test's life
    if (e.type == EventType::kFlowStart) continue;
    EXPECT_LE(e.begin_ns, now);
    EXPECT_GT(e.begin_ns, now - int64_t{600} * 1000000000);
  }
  int main_n = 0, worker_n = 0, counters = 0;
  for (const auto& e : c.events) {
    if (e.type == EventType::kCounter) {
      ++counters;
      EXPECT_EQ(e.value, 42);
    } else if (e.static_name == nullptr) {
      EXPECT_TRUE(e.type == EventType::kFlowStart || e.name == "relu");
    } else if (std::string(e.static_name) == "main") {
      ++main_n;
    } else {
      ++worker_n;
    }
  }
  EXPECT_EQ(main_n, 1500);
  EXPECT_EQ(worker_n, 2800);
  EXPECT_EQ(counters, 1);
  EXPECT_EQ(c.dropped, 0);
}

TEST(TraceRecorder, NewSessionDiscardsOldEvents) {
  Start(true, false);
  EXPECT_TRUE(RecordShapes());
  Record(Span("old", ThisThreadTrack()));
  Stop();
  Start(false, false);
  Record(Span("new", ThisThreadTrack()));
  Stop();
  Collected c = Collect();
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_STREQ(c.events[0].static_name, "new");
}

TEST(TraceRecorder, CallsNestAndTracksAreNamed) {
  EXPECT_EQ(CurrentCallId(), 0u);
  uint64_t outer = EnterCall();
  uint64_t a = CurrentCallId();
  EXPECT_NE(a, 0u);
  uint64_t inner = EnterCall();
  EXPECT_NE(CurrentCallId(), a);
  ExitCall(inner);
  EXPECT_EQ(CurrentCallId(), a);
  ExitCall(outer);
  EXPECT_EQ(CurrentCallId(), 0u);
  NameTrack(StreamTrack(1, 0, 2), "cuda:0/d2h");
  Start(false, false);
  Stop();
  bool found = false;
  for (const auto& [track, name] : Collect().track_names)
    found |= track == StreamTrack(1, 0, 2) && name == "cuda:0/d2h";
  EXPECT_TRUE(found);
}

// An op call and the inline run it caused (or the issue of the instruction it queued) are one
// stored event; Collect returns both.
TEST(TraceRecorder, AnInlineRunIsStoredWithItsCall) {
  Start(false, false);
  NoteInlineRun(StreamTrack(0, 0, 0), NowTicks(), NowTicks(), false);  // no call: not recorded
  uint64_t outer = 0;
  ThreadRecorder* r = BeginOpCall(&outer);
  const uint64_t call = CurrentCallId();
  const int64_t begin = NowTicks();
  const int64_t ib = NowTicks();
  NoteInlineRun(StreamTrack(0, 0, 0), ib, NowTicks(), true);
  EndOpCall(r, "add", begin, outer, "\"k\": 1");
  EXPECT_EQ(CurrentCallId(), outer);
  // Two inline runs in one call: the first becomes a span of its own.
  uint64_t prev = 0;
  r = BeginOpCall(&prev);
  const uint64_t call2 = CurrentCallId();
  EXPECT_NE(call2, call);
  const int64_t begin2 = NowTicks();
  NoteInlineRun(StreamTrack(0, 0, 0), NowTicks(), NowTicks(), false);
  NoteInlineRun(StreamTrack(0, 0, 0), NowTicks(), NowTicks(), false);
  EndOpCall(r, "mul", begin2, prev, "");
  // A call that queued an instruction: its span and the issue's flow start, one stored event.
  NoteIssue(99);  // outside a call: not recorded
  r = BeginOpCall(&prev);
  const uint64_t call3 = CurrentCallId();
  NoteIssue(7);
  EndOpCall(r, "exp", NowTicks(), prev, "");
  Stop();
  Collected c = Collect();
  ASSERT_EQ(c.events.size(), 7u);
  EXPECT_STREQ(c.events[5].static_name, "exp");
  EXPECT_EQ(c.events[5].flow_id, 0u);
  EXPECT_EQ(c.events[6].type, EventType::kFlowStart);
  EXPECT_EQ(c.events[6].flow_id, 7u);
  EXPECT_EQ(c.events[6].call_id, call3);
  EXPECT_EQ(c.events[6].track, ThisThreadTrack());
  const TraceEvent& op = c.events[0];
  const TraceEvent& run = c.events[1];
  EXPECT_EQ(op.type, EventType::kComplete);
  EXPECT_STREQ(op.static_name, "add");
  EXPECT_STREQ(op.category, "cpu_op");
  EXPECT_EQ(op.track, ThisThreadTrack());
  EXPECT_EQ(op.call_id, call);
  EXPECT_EQ(op.args, "\"k\": 1");
  EXPECT_EQ(run.type, EventType::kComplete);
  EXPECT_STREQ(run.category, "instruction");
  EXPECT_EQ(run.track, StreamTrack(0, 0, 0));
  EXPECT_EQ(run.call_id, call);
  EXPECT_NE(run.flow_id & (uint64_t{1} << 39), 0u);  // the VM's mark of an inline run
  EXPECT_EQ(run.args, "\"error\": true");
  EXPECT_LE(op.begin_ns, run.begin_ns);
  EXPECT_LE(run.begin_ns, run.end_ns);
  EXPECT_LE(run.end_ns, op.end_ns);
  // The second call: the flushed first run, then the call with the second run.
  EXPECT_STREQ(c.events[2].category, "instruction");
  EXPECT_EQ(c.events[2].call_id, call2);
  EXPECT_STREQ(c.events[3].static_name, "mul");
  EXPECT_EQ(c.events[4].call_id, call2);
  EXPECT_EQ(c.events[4].args, "");
}

TEST(TraceRecorder, EscapesJsonStrings) {
  std::string out;
  const char s[] = "a\"b\\c\nd\x01";
  AppendJsonEscaped(&out, s, sizeof(s) - 1);
  EXPECT_EQ(out, "a\\\"b\\\\c\\u000ad\\u0001");
}

// Not a pass/fail test (the machine is shared): prints the recording cost that the profiler's
// "under 200 ns per instruction" budget is made of (bench_profiler.py measures the whole path).
TEST(TraceRecorder, RecordingCost) {
  constexpr int kN = 200000;
  Start(false, false);
  const int64_t t0 = NowNs();
  for (int i = 0; i < kN; ++i) {
    const int64_t b = NowTicks();
    RecordSpan(StreamTrack(0, 0, 0), "add", "instruction", b, NowTicks(), i, 0, "");
  }
  const int64_t t1 = NowNs();
  for (int i = 0; i < kN; ++i) RecordCounter("bytes in use (cpu)", i);
  const int64_t t2 = NowNs();
  for (int i = 0; i < kN; ++i) {  // an op call with its inline run, as framework/op.cc and the VM
    uint64_t prev = 0;
    ThreadRecorder* r = BeginOpCall(&prev);
    const int64_t b = NowTicks();
    const int64_t ib = NowTicks();
    NoteInlineRun(StreamTrack(0, 0, 0), ib, NowTicks(), false);
    EndOpCall(r, "add", b, prev, "");
  }
  const int64_t t3 = NowNs();
  Stop();
  std::printf(
      "[recording cost] span with 2 clock reads: %.1f ns, counter: %.1f ns, op call with its "
      "inline run (4 clock reads, 2 spans): %.1f ns\n",
      double(t1 - t0) / kN, double(t2 - t1) / kN, double(t3 - t2) / kN);
  EXPECT_EQ(Collect().events.size(), size_t{4 * kN});
}

}  // namespace
}  // namespace profiler
}  // namespace oneflow_like
