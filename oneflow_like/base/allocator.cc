#include "oneflow_like/base/allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

// Profiler hooks, declared weakly (Note [Profiler recording], base/trace_recorder.h).
namespace oneflow_like::profiler {
extern std::atomic<bool> g_enabled __attribute__((weak));
extern std::atomic<bool> g_record_memory __attribute__((weak));
void RecordCounter(const char* name, int64_t value) __attribute__((weak));
}  // namespace oneflow_like::profiler

namespace oneflow_like {
namespace {
// Whether allocations are being recorded (then every call takes the locked path, which records).
inline bool MemoryProfiling() {
  return &profiler::g_enabled != nullptr && profiler::g_enabled.load(std::memory_order_relaxed) &&
         profiler::g_record_memory.load(std::memory_order_relaxed);
}
// Bytes in use as a profiler counter ("C" event), sampled at every change while recording with
// profile_memory=True.
void RecordBytesInUse(const Device& device, int64_t allocated) {
  if (!MemoryProfiling()) return;
  // One name per device, made once (the allocator's lock is held: one writer per device).
  static std::string* names = new std::string[kNumDeviceTypes * 64];
  std::string& name = names[static_cast<int>(device.type()) * 64 + (device.index() & 63)];
  if (name.empty()) name = absl::StrCat("bytes in use (", device.ToString(), ")");
  profiler::RecordCounter(name.c_str(), allocated);
}
constexpr size_t kRound = 512;
constexpr size_t kSmallLimit = 1 << 20;
constexpr size_t kSmallSegment = 2 << 20;
constexpr size_t kLargeRound = 2 << 20;
constexpr size_t kMinSplitSmall = 512;
constexpr size_t kMinSplitLarge = 1 << 20;
size_t RoundUp(size_t n, size_t m) {
  return (n + m - 1) / m * m;
}
}  // namespace

CachingAllocator::CachingAllocator(Device device, SystemMemory sys, bool thread_cache)
    : device_(device), sys_(std::move(sys)), thread_cache_(thread_cache) {}

CachingAllocator::~CachingAllocator() {
  // Live blocks at exit belong to tensors that outlive the allocator; leak them rather than crash.
  std::lock_guard<std::mutex> l(mu_);
  EmptyCacheLocked();
}

// A thread's tiny blocks (by size / 512 - 1), for the one thread-cached allocator. Trivially
// destructible, so it stays usable while the thread's other thread_locals (which may free
// tensors) are destroyed; ThreadCacheFlusher hands the blocks back and closes it.
struct CachingAllocator::ThreadCache {
  CachingAllocator* owner;
  bool closed;
  int count[kStackedMax / 512];
  void* blocks[kStackedMax / 512][kThreadCacheDepth];
  void FlushLocked() {
    for (int c = 0; c < static_cast<int>(kStackedMax / 512); ++c) {
      for (int i = 0; i < count[c]; ++i) owner->DeallocateLocked(blocks[c][i]);
      count[c] = 0;
    }
  }
};
namespace {
thread_local CachingAllocator::ThreadCache* t_cache_for_flusher = nullptr;
struct ThreadCacheFlusher {
  ~ThreadCacheFlusher();
};
}  // namespace
CachingAllocator::ThreadCache& CachingAllocator::ThisThreadCache() {
  static thread_local ThreadCache cache;  // zero-initialised
  return cache;
}
namespace {
ThreadCacheFlusher::~ThreadCacheFlusher() {
  CachingAllocator::ThreadCache* tc = t_cache_for_flusher;
  if (tc == nullptr || tc->owner == nullptr) return;
  tc->owner->FlushThreadCache();
}
}  // namespace

void CachingAllocator::FlushThreadCache() {
  ThreadCache& tc = ThisThreadCache();
  if (tc.owner != this) return;
  std::lock_guard<std::mutex> l(mu_);
  tc.FlushLocked();
  tc.owner = nullptr;
  tc.closed = true;  // at thread exit: later frees take the shared path
}

CachingAllocator::Block* CachingAllocator::NewSegment(size_t size, bool small) {
  size_t seg = small ? kSmallSegment : RoundUp(size, kLargeRound);
  if (limit_ > 0 && stats_.reserved + int64_t(seg) > limit_) return nullptr;
  void* p = sys_.alloc(seg);
  if (!p) return nullptr;
  stats_.reserved += seg;
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  stats_.num_system_allocs++;
  return new Block{static_cast<char*>(p), seg, true, small};
}

CachingAllocator::Block* CachingAllocator::TryAllocate(size_t size) {
  bool small = size < kSmallLimit;
  Bin& bin = small ? small_bin_ : large_bin_;
  Block key{nullptr, size, true, small};
  auto it = bin.lower_bound(&key);
  Block* b;
  if (it != bin.end()) {
    b = *it;
    bin.erase(it);
  } else {
    b = NewSegment(size, small);
    if (!b) return nullptr;
  }
  size_t rest = b->size - size;
  if (rest >= (small ? kMinSplitSmall : kMinSplitLarge)) {
    Block* r = new Block{b->ptr + size, rest, true, small, b, b->next};
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    bin.insert(r);
  }
  b->free = false;
  return b;
}

void CachingAllocator::Counted(size_t size) {
  const int64_t now =
      allocated_.fetch_add(int64_t(size), std::memory_order_relaxed) + int64_t(size);
  int64_t peak = peak_allocated_.load(std::memory_order_relaxed);
  while (now > peak &&
         !peak_allocated_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
}

StatusOr<void*> CachingAllocator::Allocate(size_t bytes) {
  size_t size = RoundUp(std::max<size_t>(bytes, 1), kRound);
  if (thread_cache_ && size <= kStackedMax && !MemoryProfiling()) {
    ThreadCache& tc = ThisThreadCache();
    int& n = tc.count[size / kRound - 1];
    if (tc.owner == this && n > 0) {
      Counted(size);
      return tc.blocks[size / kRound - 1][--n];
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  Block* b = nullptr;
  if (size <= kStackedMax && !stacked_[size / kRound - 1].empty()) {
    b = stacked_[size / kRound - 1].back();
    stacked_[size / kRound - 1].pop_back();
  } else {
    b = TryAllocate(size);
  }
  if (!b) {  // shrink the cache (this thread's tiny blocks too) and retry once
    ThreadCache& tc = ThisThreadCache();
    if (tc.owner == this) tc.FlushLocked();
    EmptyCacheLocked();
    b = TryAllocate(size);
  }
  if (!b)
    return OutOfMemory(
        "[allocator] out of memory on %s: requested %d bytes, %d allocated, %d reserved%s",
        device_.ToString(), int64_t(bytes), allocated_.load(std::memory_order_relaxed),
        stats_.reserved, limit_ > 0 ? absl::StrCat(", limit ", limit_) : std::string());
  live_[b->ptr] = b;
  Counted(b->size);
  RecordBytesInUse(device_, allocated_.load(std::memory_order_relaxed));
  return static_cast<void*>(b->ptr);
}

void CachingAllocator::Deallocate(void* ptr, size_t bytes) {
  if (!ptr) return;
  size_t size = RoundUp(std::max<size_t>(bytes, 1), kRound);
  if (thread_cache_ && size <= kStackedMax && !MemoryProfiling()) {
    ThreadCache& tc = ThisThreadCache();
    if (tc.owner == nullptr && !tc.closed) {
      static thread_local ThreadCacheFlusher flusher;  // registers the flush at thread exit
      (void)flusher;
      t_cache_for_flusher = &tc;
      tc.owner = this;
    }
    int& n = tc.count[size / kRound - 1];
    if (tc.owner == this && n < kThreadCacheDepth) {
      tc.blocks[size / kRound - 1][n++] = ptr;  // stays in live_ (and its segment stays split)
      allocated_.fetch_sub(int64_t(size), std::memory_order_relaxed);
      return;
    }
  }
  Deallocate(ptr);
}

void CachingAllocator::Deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> l(mu_);
  size_t size = DeallocateLocked(ptr);
  if (size == 0) return;
  allocated_.fetch_sub(int64_t(size), std::memory_order_relaxed);
  RecordBytesInUse(device_, allocated_.load(std::memory_order_relaxed));
}

size_t CachingAllocator::DeallocateLocked(void* ptr) {
  auto it = live_.find(ptr);
  if (it == live_.end()) return 0;  // not ours: programmer bug, ignore rather than corrupt
  Block* b = it->second;
  live_.erase(it);
  const size_t size = b->size;
  if (b->size <= kStackedMax) {
    std::vector<Block*>& stack = stacked_[b->size / kRound - 1];
    if (stack.size() < kStackDepth) {
      stack.push_back(b);  // stays marked in use, so no neighbour merges with it
      return size;
    }
  }
  FreeBlockLocked(b);
  return size;
}

void CachingAllocator::FreeBlockLocked(Block* b) {
  b->free = true;
  Bin& bin = b->small ? small_bin_ : large_bin_;
  if (b->prev && b->prev->free) {  // merge with the previous free block
    Block* p = b->prev;
    bin.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (b->next && b->next->free) {
    Block* n = b->next;
    bin.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  bin.insert(b);
}

void CachingAllocator::EmptyCacheLocked() {
  for (std::vector<Block*>& stack : stacked_) {
    for (Block* b : stack) FreeBlockLocked(b);
    stack.clear();
  }
  for (Bin* bin : {&small_bin_, &large_bin_}) {
    for (auto it = bin->begin(); it != bin->end();) {
      Block* b = *it;
      if (!b->prev && !b->next) {  // a whole free segment
        stats_.reserved -= b->size;
        sys_.free(b->ptr);
        delete b;
        it = bin->erase(it);
      } else {
        ++it;
      }
    }
  }
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> l(mu_);
  ThreadCache& tc = ThisThreadCache();
  if (tc.owner == this) tc.FlushLocked();
  EmptyCacheLocked();
}
AllocatorStats CachingAllocator::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  AllocatorStats s = stats_;
  s.allocated = allocated_.load(std::memory_order_relaxed);
  s.peak_allocated = peak_allocated_.load(std::memory_order_relaxed);
  s.num_allocs = num_allocs_.load(std::memory_order_relaxed);
  return s;
}
void CachingAllocator::ResetPeak() {
  std::lock_guard<std::mutex> l(mu_);
  peak_allocated_.store(allocated_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  stats_.peak_reserved = stats_.reserved;
}
void CachingAllocator::SetLimit(int64_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  limit_ = bytes;
}

CachingAllocator* CpuAllocator() {
  // Intentionally leaked: tensors may be released by threads that outlive static destruction.
  static CachingAllocator* a =
      new CachingAllocator(Device::CPU(),
                           SystemMemory{[](size_t n) { return std::aligned_alloc(64, n); },
                                        [](void* p) { std::free(p); }},
                           /*thread_cache=*/true);
  return a;
}

namespace {
// Function-local for the reason given in vm/stream.cc: device/cuda registers from a static
// initializer that may run before this file's.
struct AllocatorFactories {
  std::mutex mu;
  std::function<Allocator*(int)> by_type[kNumDeviceTypes];
};
AllocatorFactories& GetAllocatorFactories() {
  static AllocatorFactories* f = new AllocatorFactories();  // leaked on purpose, as CpuAllocator
  return *f;
}
}  // namespace

void RegisterAllocatorFactory(DeviceType type, std::function<Allocator*(int)> factory) {
  AllocatorFactories& fs = GetAllocatorFactories();
  std::lock_guard<std::mutex> l(fs.mu);
  fs.by_type[int(type)] = std::move(factory);
}

Allocator* GetAllocator(const Device& device) {
  if (device.is_cpu()) return CpuAllocator();
  AllocatorFactories& fs = GetAllocatorFactories();
  std::lock_guard<std::mutex> l(fs.mu);
  auto& f = fs.by_type[int(device.type())];
  return f ? f(device.index()) : nullptr;
}

}  // namespace oneflow_like
