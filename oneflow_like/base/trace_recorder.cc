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

// An event as stored: plain data (no std::string to construct, assign or destroy on the hot
// path); dynamic names and args point into the thread's text blocks. Collect makes TraceEvents.
struct Slot {
  EventType type;
  uint32_t name_len, args_len;
  int64_t track, begin, end;
  uint64_t flow_id, call_id;
  int64_t value;
  const char* static_name;
  const char* category;
  const char* name;
  const char* args;
};

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
std::atomic<uint64_t> g_next_call_id{1};

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
thread_local BufferHolder t_holder;             // retires the buffer when the thread exits
thread_local ThreadBuffer* t_buffer = nullptr;  // trivially destructible: no TLS guard
thread_local int64_t t_current_track = 0;
thread_local uint64_t t_current_call = 0;

ThreadBuffer* NewLocalBuffer() {
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
  t_buffer = b;
  return b;
}
inline ThreadBuffer* LocalBuffer() {
  ThreadBuffer* b = t_buffer;
  return b != nullptr ? b : NewLocalBuffer();
}

}  // namespace

bool RecordShapes() {
  return g_record_shapes.load(std::memory_order_relaxed);
}

int64_t ThisThreadTrack() {
  static thread_local int64_t tid = 0;
  if (tid == 0) tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
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

inline void Commit(ThreadBuffer* b) {
  b->committed.store(b->committed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}
}  // namespace

void Record(TraceEvent&& e) {
  ThreadBuffer* b = LocalBuffer();
  Slot* slot = Reserve(b);
  if (slot == nullptr) return;
  slot->type = e.type;
  slot->track = e.track;
  slot->begin = e.begin_ns;
  slot->end = e.end_ns;
  slot->flow_id = e.flow_id;
  slot->call_id = e.call_id;
  slot->value = e.value;
  slot->static_name = e.static_name;
  slot->category = e.category;
  slot->name = CopyText(b, e.name, &slot->name_len);
  slot->args = CopyText(b, e.args, &slot->args_len);
  Commit(b);
}

// The fast paths fill the slot in place: reused slots keep their strings' capacity.
void RecordSpan(int64_t track, std::string_view name, const char* category, int64_t begin_ns,
                int64_t end_ns, uint64_t flow_in, uint64_t call_id, std::string_view args) {
  ThreadBuffer* b = LocalBuffer();
  Slot* e = Reserve(b);
  if (e == nullptr) return;
  e->type = EventType::kComplete;
  e->track = track;
  e->begin = begin_ns;
  e->end = end_ns;
  e->flow_id = flow_in;
  e->call_id = call_id;
  e->value = 0;
  e->static_name = nullptr;
  e->category = category;
  e->name = CopyText(b, name, &e->name_len);
  e->args = CopyText(b, args, &e->args_len);
  Commit(b);
}

void RecordFlowStart(uint64_t flow_id, uint64_t call_id) {
  ThreadBuffer* b = LocalBuffer();
  Slot* e = Reserve(b);
  if (e == nullptr) return;
  e->type = EventType::kFlowStart;
  e->track = ThisThreadTrack();
  e->begin = e->end = 0;
  e->flow_id = flow_id;
  e->call_id = call_id;
  e->value = 0;
  e->static_name = nullptr;
  e->category = "flow";
  e->name = e->args = nullptr;
  e->name_len = e->args_len = 0;
  Commit(b);
}

void RecordCounter(const char* name, int64_t value) {
  ThreadBuffer* b = LocalBuffer();
  Slot* e = Reserve(b);
  if (e == nullptr) return;
  e->type = EventType::kCounter;
  e->track = ThisThreadTrack();
  e->begin = e->end = NowTicks();
  e->flow_id = e->call_id = 0;
  e->value = value;
  e->static_name = name;
  e->category = "counter";
  e->name = e->args = nullptr;
  e->name_len = e->args_len = 0;
  Commit(b);
}

void NameTrack(int64_t track, std::string_view name) {
  std::lock_guard<std::mutex> l(RegistryMu());
  TrackNames()[track] = std::string(name);
}

int64_t CurrentTrack() {
  return t_current_track;
}
void SetCurrentTrack(int64_t track) {
  t_current_track = track;
}
uint64_t CurrentCallId() {
  return t_current_call;
}
uint64_t EnterCall() {
  uint64_t prev = t_current_call;
  t_current_call = g_next_call_id.fetch_add(1, std::memory_order_relaxed);
  return prev;
}
void ExitCall(uint64_t previous) {
  t_current_call = previous;
}

void Start(bool record_shapes, bool profile_memory) {
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
  out.events.reserve(total);
  for (ThreadBuffer* b : Buffers()) {
    if (b->generation.load(std::memory_order_acquire) != gen) continue;
    const size_t n = b->committed.load(std::memory_order_acquire);
    out.dropped += b->dropped.load(std::memory_order_relaxed);
    const Chunk* c = &b->head;
    for (size_t i = 0; i < n; ++i) {
      if (i > 0 && i % kChunkEvents == 0) c = c->next.load(std::memory_order_acquire);
      const Slot& s = c->events[i % kChunkEvents];
      TraceEvent& e = out.events.emplace_back();
      e.type = s.type;
      e.track = s.track;
      e.begin_ns = s.begin;
      e.end_ns = s.end;
      e.flow_id = s.flow_id;
      e.call_id = s.call_id;
      e.value = s.value;
      e.static_name = s.static_name;
      e.category = s.category;
      if (s.name_len > 0) e.name.assign(s.name, s.name_len);
      if (s.args_len > 0) e.args.assign(s.args, s.args_len);
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
