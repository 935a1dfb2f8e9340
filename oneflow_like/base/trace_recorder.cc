#include "oneflow_like/base/trace_recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace oneflow_like {
namespace profiler {

std::atomic<bool> g_enabled{false};
std::atomic<bool> g_record_memory{false};

namespace {

constexpr size_t kChunkEvents = 512;
constexpr size_t kMaxEventsPerThread = size_t{1} << 22;  // ~4M events (~0.3 GB) per thread
constexpr size_t kTextBlock = size_t{1} << 16;           // names and args, per thread
constexpr size_t kMaxText = 4096;                        // longer names/args are cut

// The VM's mark on flow ids of work run inline (vm/virtual_machine.cc: FlowId, kInlineFlowBit).
constexpr uint64_t kInlineFlowBit = uint64_t{1} << 39;
constexpr uint8_t kDynamicName = 1;  // `name` points into the text blocks (name_len bytes)
constexpr uint8_t kError = 2;        // the instruction (or the inline run) failed

// An event as stored: 80 bytes of plain data (no std::string to construct, assign or destroy on
// the hot path); dynamic names and args point into the thread's text blocks, static names (op
// names, literals) are stored as pointers. Collect makes TraceEvents. Tracks fit 32 bits (thread
// ids < 2^22, stream tracks < 2^25). kCallWithInlineRun keeps the inline run in `aux_track` and,
// in `flow_id`, its begin and end as 32-bit offsets (ticks) from the call's begin.
struct Slot {
  EventType type;
  uint8_t flags;
  uint16_t name_len;
  uint32_t args_len;
  int32_t track, aux_track;
  int64_t begin, end;
  uint64_t flow_id, call_id;
  int64_t value;
  const char* name;
  const char* category;
  const char* args;
};
static_assert(sizeof(Slot) == 80, "a recorded event is 80 bytes");

struct Chunk {
  Slot events[kChunkEvents];
  std::atomic<Chunk*> next{nullptr};
};

// Text blocks never move; a new session reuses them from the first.
struct TextBlock {
  char text[kTextBlock];
  TextBlock* next = nullptr;
};

// One recording thread's events (see Note [Profiler recording] in the header).
struct ThreadBuffer {
  int64_t tid = 0;
  std::string thread_name;
  std::atomic<uint64_t> generation{0};
  std::atomic<size_t> committed{0};
  std::atomic<int64_t> dropped{0};
  std::atomic<bool> retired{false};
  Chunk head;
  Chunk* tail = &head;   // owner only
  size_t tail_used = 0;  // owner only
  TextBlock text_head;
  TextBlock* text_tail = &text_head;  // owner only
  size_t text_used = 0;               // owner only

  ~ThreadBuffer() {
    Chunk* c = head.next.load(std::memory_order_relaxed);
    while (c != nullptr) {
      Chunk* n = c->next.load(std::memory_order_relaxed);
      delete c;
      c = n;
    }
    TextBlock* t = text_head.next;
    while (t != nullptr) {
      TextBlock* n = t->next;
      delete t;
      t = n;
    }
  }
};

std::atomic<uint64_t> g_generation{1};
// The first Start's (ticks, ns): one end of the ticks -> ns line (guarded by RegistryMu).
int64_t g_ticks0 = 0, g_ns0 = 0;
std::atomic<bool> g_record_shapes{false};
std::atomic<bool> g_with_stack{false};
std::atomic<StackHook> g_stack_hook{nullptr};
// Call ids are (thread number << 40) | the thread's own count: no shared counter to bump.
std::atomic<uint64_t> g_next_thread_number{1};

std::mutex& RegistryMu() {
  static auto* mu = new std::mutex;
  return *mu;
}
// Leaked on purpose: worker threads may record during static destruction.
std::vector<ThreadBuffer*>& Buffers() {
  static auto* v = new std::vector<ThreadBuffer*>;
  return *v;
}
std::map<int64_t, std::string>& TrackNames() {
  static auto* m = new std::map<int64_t, std::string>;
  return *m;
}

struct BufferHolder {
  ThreadBuffer* buffer = nullptr;
  ~BufferHolder() {
    if (buffer != nullptr) buffer->retired.store(true, std::memory_order_release);
  }
};
thread_local BufferHolder t_holder;  // retires the buffer when the thread exits

}  // namespace

// Everything the hot path keeps per thread, in one trivially destructible block: one TLS
// address lookup per hook (the library is dlopened: each thread_local access costs a
// __tls_get_addr call), none in EndOpCall (BeginOpCall hands the block over), no TLS guard.
struct ThreadRecorder {
  ThreadBuffer* buffer;
  int64_t tid;
  int64_t current_track;
  uint64_t current_call;
  uint64_t call_base;   // thread number << 40 (0: not assigned yet)
  uint64_t call_count;  // low bits of this thread's last call id
  // The inline run NoteInlineRun saw, waiting for its call's EndOpCall (pending_call 0: none).
  uint64_t pending_call;
  int64_t pending_track, pending_begin, pending_end;
  bool pending_error;
  // The issue NoteIssue saw, waiting for its call's EndOpCall (issue_call 0: none).
  uint64_t issue_call, issue_flow;
};

namespace {
using ThreadState = ThreadRecorder;
thread_local ThreadState t_state;

ThreadBuffer* NewLocalBuffer(ThreadState& ts) {
  ThreadBuffer* b = new ThreadBuffer;
  b->tid = ThisThreadTrack();
  char name[32] = {0};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) name[0] = '\0';
  b->thread_name = name;
  {
    std::lock_guard<std::mutex> l(RegistryMu());
    Buffers().push_back(b);
  }
  t_holder.buffer = b;
  ts.buffer = b;
  return b;
}
inline ThreadBuffer* LocalBuffer(ThreadState& ts) {
  ThreadBuffer* b = ts.buffer;
  return b != nullptr ? b : NewLocalBuffer(ts);
}

}  // namespace

bool RecordShapes() {
  return g_record_shapes.load(std::memory_order_relaxed);
}
bool WithStack() {
  return g_with_stack.load(std::memory_order_relaxed);
}
void SetStackHook(StackHook hook) {
  g_stack_hook.store(hook, std::memory_order_release);
}

int64_t ThisThreadTrack() {
  ThreadState& ts = t_state;
  if (ts.tid == 0) ts.tid = static_cast<int64_t>(syscall(SYS_gettid));
  return ts.tid;
}

namespace {
// The next free slot of this thread's buffer, or null when the buffer is full (then counted as
// dropped). The caller fills it and calls Commit.
Slot* Reserve(ThreadBuffer* b) {
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  if (b->generation.load(std::memory_order_relaxed) != gen) {
    // First record of a new session on this thread: reuse the chunks from the start.
    b->committed.store(0, std::memory_order_relaxed);
    b->dropped.store(0, std::memory_order_relaxed);
    b->tail = &b->head;
    b->tail_used = 0;
    b->text_tail = &b->text_head;
    b->text_used = 0;
    b->generation.store(gen, std::memory_order_release);
  }
  if (b->committed.load(std::memory_order_relaxed) >= kMaxEventsPerThread) {
    b->dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (b->tail_used == kChunkEvents) {
    Chunk* next = b->tail->next.load(std::memory_order_acquire);
    if (next == nullptr) {
      next = new Chunk;
      b->tail->next.store(next, std::memory_order_release);
    }
    b->tail = next;
    b->tail_used = 0;
  }
  return &b->tail->events[b->tail_used++];
}
// Copies `s` into the thread's text blocks; returns where (null for empty text).
const char* CopyText(ThreadBuffer* b, std::string_view s, uint32_t* len) {
  const size_t n = std::min(s.size(), kMaxText);
  *len = static_cast<uint32_t>(n);
  if (n == 0) return nullptr;
  if (b->text_used + n > kTextBlock) {
    if (b->text_tail->next == nullptr) b->text_tail->next = new TextBlock;
    b->text_tail = b->text_tail->next;
    b->text_used = 0;
  }
  char* dst = b->text_tail->text + b->text_used;
  std::memcpy(dst, s.data(), n);
  b->text_used += n;
  return dst;
}
inline void SetName(ThreadBuffer* b, Slot* e, std::string_view name) {
  uint32_t n = 0;
  e->name = CopyText(b, name, &n);
  e->name_len = static_cast<uint16_t>(n);
  e->flags = n > 0 ? kDynamicName : 0;
}
inline void SetArgs(ThreadBuffer* b, Slot* e, std::string_view args) {
  if (args.empty()) {
    e->args = nullptr;
    e->args_len = 0;
  } else {
    e->args = CopyText(b, args, &e->args_len);
  }
}

inline void Commit(ThreadBuffer* b) {
  b->committed.store(b->committed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// Fills a span's slot (name copied) and commits it.
void Span(ThreadBuffer* b, int64_t track, std::string_view name, const char* category,
          int64_t begin, int64_t end, uint64_t flow_in, uint64_t call_id, std::string_view args,
          bool error) {
  Slot* e = Reserve(b);
  if (e == nullptr) return;
  e->type = EventType::kComplete;
  SetName(b, e, name);
  if (error) e->flags |= kError;
  e->track = static_cast<int32_t>(track);
  e->aux_track = 0;
  e->begin = begin;
  e->end = end;
  e->flow_id = flow_in;
  e->call_id = call_id;
  e->value = 0;
  e->category = category;
  SetArgs(b, e, args);
  Commit(b);
}

// An event without duration on the thread's own track: a flow start or a counter sample.
void PointEvent(ThreadBuffer* b, EventType type, int64_t ticks, uint64_t flow_id, uint64_t call_id,
                int64_t value, const char* name, const char* category) {
  Slot* e = Reserve(b);
  if (e == nullptr) return;
  e->type = type;
  e->flags = 0;
  e->track = static_cast<int32_t>(b->tid);
  e->aux_track = 0;
  e->begin = e->end = ticks;
  e->flow_id = flow_id;
  e->call_id = call_id;
  e->value = value;
  e->category = category;
  e->name = name;
  e->name_len = 0;
  e->args = nullptr;
  e->args_len = 0;
  Commit(b);
}
// Flow starts are stamped by the issuing call (its begin): no clock read.
void FlowStart(ThreadBuffer* b, uint64_t flow_id, uint64_t call_id) {
  PointEvent(b, EventType::kFlowStart, 0, flow_id, call_id, 0, nullptr, "flow");
}

// The issue waiting on this thread, as an event of its own.
void FlushPendingIssue(ThreadState& ts) {
  if (ts.issue_call == 0) return;
  const uint64_t call = ts.issue_call;
  ts.issue_call = 0;
  FlowStart(LocalBuffer(ts), ts.issue_flow, call);
}

// The inline run waiting on this thread, as a span of its own (its call recorded no span).
void FlushPendingInline(ThreadState& ts) {
  if (ts.pending_call == 0) return;
  const uint64_t call = ts.pending_call;
  ts.pending_call = 0;
  Span(LocalBuffer(ts), ts.pending_track, "", "instruction", ts.pending_begin, ts.pending_end,
       kInlineFlowBit | (call & (kInlineFlowBit - 1)), call, "", ts.pending_error);
}
}  // namespace

void Record(TraceEvent&& e) {
  ThreadBuffer* b = LocalBuffer(t_state);
  Slot* slot = Reserve(b);
  if (slot == nullptr) return;
  slot->type = e.type;
  slot->track = static_cast<int32_t>(e.track);
  slot->aux_track = 0;
  slot->begin = e.begin_ns;
  slot->end = e.end_ns;
  slot->flow_id = e.flow_id;
  slot->call_id = e.call_id;
  slot->value = e.value;
  slot->category = e.category;
  if (e.static_name != nullptr) {
    slot->name = e.static_name;
    slot->name_len = 0;
    slot->flags = 0;
  } else {
    SetName(b, slot, e.name);
  }
  SetArgs(b, slot, e.args);
  Commit(b);
}

void RecordSpan(int64_t track, std::string_view name, const char* category, int64_t begin_ns,
                int64_t end_ns, uint64_t flow_in, uint64_t call_id, std::string_view args) {
  Span(LocalBuffer(t_state), track, name, category, begin_ns, end_ns, flow_in, call_id, args,
       false);
}

ThreadRecorder* BeginInstruction(int64_t track, int64_t* outer) {
  ThreadState& ts = t_state;
  *outer = ts.current_track;
  ts.current_track = track;
  return &ts;
}

void EndInstruction(ThreadRecorder* recorder, int64_t outer, int64_t track, const char* literal,
                    std::string_view name, int64_t begin, int64_t end, uint64_t flow_in,
                    bool error) {
  recorder->current_track = outer;
  ThreadBuffer* b = LocalBuffer(*recorder);
  if (literal == nullptr) {
    Span(b, track, name, "instruction", begin, end, flow_in, 0, "", error);
    return;
  }
  Slot* e = Reserve(b);
  if (e == nullptr) return;
  e->type = EventType::kComplete;
  e->flags = error ? kError : 0;
  e->name_len = 0;
  e->name = literal;
  e->track = static_cast<int32_t>(track);
  e->aux_track = 0;
  e->begin = begin;
  e->end = end;
  e->flow_id = flow_in;
  e->call_id = 0;
  e->value = 0;
  e->category = "instruction";
  e->args = nullptr;
  e->args_len = 0;
  Commit(b);
}

void RecordFlowStart(uint64_t flow_id, uint64_t call_id) {
  FlowStart(LocalBuffer(t_state), flow_id, call_id);
}

void RecordCounter(const char* name, int64_t value) {
  PointEvent(LocalBuffer(t_state), EventType::kCounter, NowTicks(), 0, 0, value, name, "counter");
}

ThreadRecorder* BeginOpCall(uint64_t* previous) {
  ThreadState& ts = t_state;
  *previous = ts.current_call;
  if (ts.call_base == 0)
    ts.call_base = g_next_thread_number.fetch_add(1, std::memory_order_relaxed) << 40;
  ts.current_call = ts.call_base | (++ts.call_count & ((uint64_t{1} << 40) - 1));
  return &ts;
}

void EndOpCall(ThreadRecorder* recorder, const char* op_name, int64_t begin, uint64_t previous,
               std::string_view args) {
  const int64_t end = NowTicks();
  ThreadState& ts = *recorder;
  const uint64_t call = ts.current_call;
  ts.current_call = previous;
  ThreadBuffer* b = LocalBuffer(ts);
  // An inline run of another call (or one that does not fit the offsets) gets its own span.
  const bool merge = ts.pending_call == call && ts.pending_begin >= begin &&
                     ts.pending_end <= end && end - begin < (int64_t{1} << 32);
  if (ts.pending_call != 0 && !merge) FlushPendingInline(ts);
  const bool with_issue = !merge && ts.issue_call == call;
  if (ts.issue_call != 0 && !with_issue) FlushPendingIssue(ts);
  const uint64_t stack = g_with_stack.load(std::memory_order_relaxed) &&
                                 g_stack_hook.load(std::memory_order_acquire) != nullptr
                             ? g_stack_hook.load(std::memory_order_acquire)()
                             : 0;
  Slot* e = Reserve(b);
  if (e == nullptr) {
    ts.pending_call = ts.issue_call = 0;
    return;
  }
  e->name = op_name;
  e->name_len = 0;
  e->flags = 0;
  e->track = static_cast<int32_t>(b->tid);
  e->begin = begin;
  e->end = end;
  e->call_id = call;
  e->value = static_cast<int64_t>(stack);
  e->category = "cpu_op";
  SetArgs(b, e, args);
  if (merge) {
    ts.pending_call = 0;
    e->type = EventType::kCallWithInlineRun;
    if (ts.pending_error) e->flags |= kError;
    e->aux_track = static_cast<int32_t>(ts.pending_track);
    e->flow_id = uint64_t(ts.pending_begin - begin) << 32 | uint64_t(ts.pending_end - begin);
  } else if (with_issue) {
    ts.issue_call = 0;
    e->type = EventType::kCallWithIssue;
    e->aux_track = 0;
    e->flow_id = ts.issue_flow;
  } else {
    e->type = EventType::kComplete;
    e->aux_track = 0;
    e->flow_id = 0;
  }
  Commit(b);
}

void NoteInlineRun(int64_t track, int64_t begin, int64_t end, bool error) {
  ThreadState& ts = t_state;
  if (ts.current_call == 0) return;  // not issued by an op call: nothing names it
  if (ts.pending_call != 0) FlushPendingInline(ts);
  ts.pending_call = ts.current_call;
  ts.pending_track = track;
  ts.pending_begin = begin;
  ts.pending_end = end;
  ts.pending_error = error;
}

void NoteIssue(uint64_t flow_id) {
  ThreadState& ts = t_state;
  if (ts.current_call == 0) return;  // not issued by an op call
  if (ts.issue_call != 0) FlushPendingIssue(ts);
  ts.issue_call = ts.current_call;
  ts.issue_flow = flow_id;
}

int64_t CurrentTrack() {
  return t_state.current_track;
}
void SetCurrentTrack(int64_t track) {
  t_state.current_track = track;
}
uint64_t CurrentCallId() {
  return t_state.current_call;
}
uint64_t EnterCall() {
  uint64_t previous = 0;
  BeginOpCall(&previous);
  return previous;
}
void ExitCall(uint64_t previous) {
  ThreadState& ts = t_state;
  if (ts.pending_call != 0) FlushPendingInline(ts);
  if (ts.issue_call != 0) FlushPendingIssue(ts);
  ts.current_call = previous;
}

void NameTrack(int64_t track, std::string_view name) {
  std::lock_guard<std::mutex> l(RegistryMu());
  TrackNames()[track] = std::string(name);
}

void Start(bool record_shapes, bool profile_memory, bool with_stack) {
  std::lock_guard<std::mutex> l(RegistryMu());
  // Buffers of exited threads were collected by the previous session (if any): free them.
  auto& bufs = Buffers();
  size_t kept = 0;
  for (ThreadBuffer* b : bufs) {
    if (b->retired.load(std::memory_order_acquire)) {
      delete b;
    } else {
      bufs[kept++] = b;
    }
  }
  bufs.resize(kept);
  if (g_ticks0 == 0) {
    g_ticks0 = NowTicks();
    g_ns0 = NowNs();
  }
  g_record_shapes.store(record_shapes, std::memory_order_relaxed);
  g_record_memory.store(profile_memory, std::memory_order_relaxed);
  g_with_stack.store(with_stack, std::memory_order_relaxed);
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  g_enabled.store(true, std::memory_order_release);
}

void Stop() {
  g_enabled.store(false, std::memory_order_release);
}

Collected Collect() {
  Collected out;
  std::lock_guard<std::mutex> l(RegistryMu());
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  size_t total = 0;
  for (ThreadBuffer* b : Buffers())
    if (b->generation.load(std::memory_order_acquire) == gen)
      total += b->committed.load(std::memory_order_acquire);
  out.events.reserve(total + total / 2);
  for (ThreadBuffer* b : Buffers()) {
    if (b->generation.load(std::memory_order_acquire) != gen) continue;
    const size_t n = b->committed.load(std::memory_order_acquire);
    out.dropped += b->dropped.load(std::memory_order_relaxed);
    const Chunk* c = &b->head;
    for (size_t i = 0; i < n; ++i) {
      if (i > 0 && i % kChunkEvents == 0) c = c->next.load(std::memory_order_acquire);
      const Slot& s = c->events[i % kChunkEvents];
      TraceEvent& e = out.events.emplace_back();
      const bool call_span =
          s.type == EventType::kCallWithInlineRun || s.type == EventType::kCallWithIssue;
      e.type = call_span ? EventType::kComplete : s.type;
      e.track = s.track;
      e.begin_ns = s.begin;
      e.end_ns = s.end;
      e.flow_id = call_span ? 0 : s.flow_id;
      e.call_id = s.call_id;
      e.value = s.value;
      e.category = s.category;
      if (s.flags & kDynamicName) {
        e.name.assign(s.name, s.name_len);
      } else {
        e.static_name = s.name;  // null for flow starts
      }
      if (s.args_len > 0) e.args.assign(s.args, s.args_len);
      const bool error = (s.flags & kError) != 0;
      if (s.type == EventType::kCallWithInlineRun) {  // and the inline run, as its own span
        TraceEvent& r = out.events.emplace_back();
        r.type = EventType::kComplete;
        r.track = s.aux_track;
        r.begin_ns = s.begin + static_cast<int64_t>(s.flow_id >> 32);
        r.end_ns = s.begin + static_cast<int64_t>(s.flow_id & 0xFFFFFFFFu);
        r.flow_id = kInlineFlowBit | (s.call_id & (kInlineFlowBit - 1));
        r.call_id = s.call_id;
        r.category = "instruction";
        r.static_name = "";
        if (error) r.args = "\"error\": true";
      } else if (s.type == EventType::kCallWithIssue) {  // and the issue, as its flow start
        TraceEvent& f = out.events.emplace_back();
        f.type = EventType::kFlowStart;
        f.track = s.track;
        f.flow_id = s.flow_id;
        f.call_id = s.call_id;
        f.category = "flow";
      } else if (error) {
        if (!e.args.empty()) e.args += ", ";
        e.args += "\"error\": true";
      }
    }
    if (n > 0) {
      std::string label = b->thread_name.empty() ? "thread" : b->thread_name;
      out.track_names.emplace_back(b->tid, label + " (tid " + std::to_string(b->tid) + ")");
    }
  }
  for (const auto& kv : TrackNames()) out.track_names.emplace_back(kv.first, kv.second);
  // Ticks -> ns. The line's two ends lie at least as far apart as this session's events.
  const int64_t ticks1 = NowTicks(), ns1 = NowNs();
  const double ns_per_tick =
      ticks1 > g_ticks0 ? double(ns1 - g_ns0) / double(ticks1 - g_ticks0) : 1.0;
  auto to_ns = [&](int64_t t) {
    return g_ns0 + static_cast<int64_t>(double(t - g_ticks0) * ns_per_tick);
  };
  for (TraceEvent& e : out.events) {
    if (e.type == EventType::kFlowStart) continue;  // stamped by the issuing call
    e.begin_ns = to_ns(e.begin_ns);
    if (e.type == EventType::kComplete) e.end_ns = to_ns(e.end_ns);
  }
  return out;
}

void AppendJsonEscaped(std::string* out, const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
}

}  // namespace profiler
}  // namespace oneflow_like
