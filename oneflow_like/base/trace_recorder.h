// Profiler recording: timed events appended to per-thread buffers, read back when a session
// stops (flow.profiler, python/oneflow_like/profiler). Depends on abseil only so that base (the
// allocator's counters), vm (instructions), the op library and the compiler (thunks) can record.
//
// Note [Profiler recording]
// Hot path: `Enabled()` is one relaxed atomic load; with profiling off nothing else runs. With it
// on, a thread appends to its own buffer (registered once in a global list, under a mutex, the
// first time the thread records in a session): no lock, no shared cache line. A buffer is a chain
// of fixed chunks that never move; the owner writes an event, then publishes it by bumping
// `committed` (release), so a collector reading concurrently sees only whole events. A new
// session bumps a generation number; each owner resets its own buffer on its first record in the
// new generation, so no thread ever writes another's buffer. Buffers of exited threads are kept
// until the next session starts, so their events are still collected. Per op, the hooks cost one
// thread-local lookup per pair (BeginOpCall/EndOpCall, BeginInstruction/EndInstruction), and an
// op call's inline run or queued issue rides in the call's own event (one event per inline op).
// with_stack: EndOpCall asks the binding's hook for the interned Python stack's id.
// Build cost: Bazel 4 puts every header of a library's dependencies among the inputs of each
// compile of its dependents, so making :base or //vm depend on this library recompiled the whole
// tree. The layers below the Python binding therefore declare the few recording functions they
// call themselves, weakly; only the binding (and tests) depend on :trace_recorder.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oneflow_like {
namespace profiler {

enum class EventType : uint8_t {
  kComplete = 0,   // a timed span on a track (chrome "X")
  kFlowStart = 1,  // the issue of instruction `flow_id` from a caller thread (chrome "s")
  kCounter = 2,    // a sampled value, e.g. allocator bytes in use (chrome "C")
  // Recording only (Collect expands it into two kComplete events): an op call's span with the
  // inline run of the instruction it issued (TryRunInline), stored as one event.
  kCallWithInlineRun = 3,
  // Recording only: an op call's span with the issue (kFlowStart) of the instruction it queued.
  kCallWithIssue = 4,
};

// Tracks: a thread's own track is its OS thread id (below kStreamTrackBase); a VM stream's track
// is StreamTrack(device, role), named by the VM when the stream is created.
constexpr int64_t kStreamTrackBase = int64_t{1} << 24;
inline int64_t StreamTrack(int device_type, int device_index, int role) {
  return kStreamTrackBase + (int64_t{device_type} * 1024 + device_index) * 8 + role;
}

struct TraceEvent {
  EventType type = EventType::kComplete;
  int64_t track = 0;
  int64_t begin_ns = 0;  // TSC ticks while recorded (NowTicks); ns once Collect returns them
  int64_t end_ns = 0;    // kComplete only
  uint64_t flow_id = 0;  // kComplete: the flow this span ends (0: none); kFlowStart: its id
  uint64_t call_id = 0;  // op-call span's id; on a kFlowStart or an inline run's span, the issuer
  int64_t value = 0;     // kCounter: the value; an op call's span: its Python stack id (0: none)
  const char* static_name = nullptr;  // used when set (op names live forever), else `name`
  std::string name;
  const char* category = "";  // a literal: "cpu_op", "instruction", "thunk", ...
  std::string args;           // JSON object members without braces, already escaped ("" = none)
};

// ---- Recording: called from the VM, the op library, the compiler and the allocator. ----------
// Those layers do not include this header (Note [Profiler recording], last paragraph): they
// declare the functions below `__attribute__((weak))` and check `&g_enabled` for null, so a
// binary without the recorder links and records nothing. Keep those declarations (in
// base/allocator.cc, vm/virtual_machine.cc, framework/op.cc, lazy/graph.cc,
// compiler/thunks/thunks.cc) identical to these; test_profiler.py fails if one stops resolving.
extern std::atomic<bool> g_enabled;
// Whether the allocators record bytes in use as counter events (profile(profile_memory=True), as
// torch.profiler: off by default, so a session costs two events per op less).
extern std::atomic<bool> g_record_memory;
inline bool Enabled() {
  return g_enabled.load(std::memory_order_relaxed);
}
// Whether ops record their inputs' shapes and dtypes (profile(record_shapes=True)).
bool RecordShapes();

// CLOCK_MONOTONIC in ns: the clock of Python's time.monotonic_ns(), so Python-side ranges line up.
inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}
// What events are stamped with: the TSC (~8 ns to read against ~32 ns for clock_gettime here;
// invariant on the x86-64 machines we run on). Collect converts ticks to NowNs's clock from two
// (ticks, ns) pairs: one taken at the first Start, one at Collect.
inline int64_t NowTicks() {
#if defined(__x86_64__)
  return static_cast<int64_t>(__builtin_ia32_rdtsc());
#else
  return NowNs();
#endif
}

// The calling thread's OS id (its track).
int64_t ThisThreadTrack();
// A span on `track` (`category` must be a literal; times from NowTicks); `flow_in`: the flow
// (instruction issue) it ends, 0 if none; `call_id`: the op call it is (caller-thread spans) or,
// on an inline run's span, the call that ran it, 0 if none; `args`: JSON object members, already
// escaped.
void RecordSpan(int64_t track, std::string_view name, const char* category, int64_t begin_ns,
                int64_t end_ns, uint64_t flow_in, uint64_t call_id, std::string_view args);
// The issue of flow `flow_id` by op call `call_id` on this thread's track (drawn from the call's
// start: the call encloses the issue, and no clock is read).
void RecordFlowStart(uint64_t flow_id, uint64_t call_id);
// `name` must outlive the process's recording (the allocator keeps one string per device).
void RecordCounter(const char* name, int64_t value);
// Names a track (a VM stream); kept across sessions.
void NameTrack(int64_t track, std::string_view name);

// The track of the instruction running on this thread (thunks nest under it); 0 outside one.
int64_t CurrentTrack();
void SetCurrentTrack(int64_t track);
// The op call running on this thread (0: none); instructions it issues get flow arrows from it.
uint64_t CurrentCallId();
// Makes a fresh call id current and returns the previous one, which ExitCall restores.
uint64_t EnterCall();
void ExitCall(uint64_t previous);

// ---- The op-call and instruction fast paths (framework/op.cc, vm/virtual_machine.cc) -------
// BeginOpCall: EnterCall's fast form; returns this thread's recording state, which the matching
// EndOpCall (on the same thread) takes back, so the pair costs one thread-local lookup.
// EndOpCall: records the span of the op call begun at `begin` (ticks) on this thread's track,
// named by `op_name` (a literal or an OpDef's name, which are literals: not copied), with `args`
// (record_shapes), its Python stack when with_stack is on, and the inline run NoteInlineRun saw
// during the call merged into the same event; then restores `previous`.
struct ThreadRecorder;
ThreadRecorder* BeginOpCall(uint64_t* previous);
void EndOpCall(ThreadRecorder* recorder, const char* op_name, int64_t begin, uint64_t previous,
               std::string_view args);
// The VM ran the current call's instruction inline on `track` (TryRunInline): kept on the
// thread until EndOpCall stores it with the call's span (a call with no EndOpCall, or a second
// inline run, gets a span of its own). Outside an op call nothing is recorded.
void NoteInlineRun(int64_t track, int64_t begin, int64_t end, bool error);
// The VM received an instruction (flow `flow_id`) from the current op call: RecordFlowStart's
// fast form, kept on the thread until EndOpCall stores it with the call's span (a second issue
// in one call gets an event of its own). Outside an op call nothing is recorded.
void NoteIssue(uint64_t flow_id);
// An instruction running on this thread: BeginInstruction makes `track` the current track (thunks
// nest under it) and returns the previous one in `*outer`; EndInstruction restores it and
// records the instruction's span (flow_in: the issue it ends), named by `literal` when not null
// (stored as a pointer: it must live forever; "" leaves the naming to the issuing op call at
// export), else by `name` (copied). One thread-local lookup for the pair.
ThreadRecorder* BeginInstruction(int64_t track, int64_t* outer);
void EndInstruction(ThreadRecorder* recorder, int64_t outer, int64_t track, const char* literal,
                    std::string_view name, int64_t begin, int64_t end, uint64_t flow_in,
                    bool error);

// with_stack: the binding installs a hook that interns the calling Python thread's stack and
// returns its id (0: none, e.g. the thread does not hold the GIL). Called only while recording
// with with_stack on, from EndOpCall.
using StackHook = uint64_t (*)();
void SetStackHook(StackHook hook);
bool WithStack();

// Appends to this thread's buffer (drops the event, counted, past a per-thread cap).
void Record(TraceEvent&& e);

// Session control (the Python binding). Start discards earlier events; Stop turns recording off
// (events of instructions still in flight may land until the VM drains: sync first).
void Start(bool record_shapes, bool profile_memory, bool with_stack = false);
void Stop();
struct Collected {
  std::vector<TraceEvent> events;
  std::vector<std::pair<int64_t, std::string>> track_names;  // streams and recording threads
  int64_t dropped = 0;
};
Collected Collect();

// Appends `s` to `out` as the body of a JSON string (quotes, backslashes, control chars escaped).
void AppendJsonEscaped(std::string* out, const char* s, size_t n);

}  // namespace profiler
}  // namespace oneflow_like
