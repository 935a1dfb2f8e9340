// Allocator interface (one per device) and the CPU caching allocator.
// Allocators are thread-safe. Allocate never throws: failure is a ResourceExhausted Status that
// names the request, the bytes in use and reserved, and the device.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {

struct AllocatorStats {
  int64_t allocated = 0;       // bytes handed out and not yet returned
  int64_t reserved = 0;        // bytes held from the system (allocated + cached)
  int64_t peak_allocated = 0;  // high-water mark of `allocated` since the last reset
  int64_t peak_reserved = 0;   // high-water mark of `reserved` since the last reset
  int64_t num_allocs = 0;      // calls to Allocate that succeeded
  int64_t num_system_allocs = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual StatusOr<void*> Allocate(size_t bytes) = 0;
  virtual void Deallocate(void* ptr) = 0;
  // Deallocate, told the size `ptr` was allocated with (the same `bytes` as its Allocate call):
  // lets an allocator skip its own lookup.
  virtual void Deallocate(void* ptr, size_t bytes) { Deallocate(ptr); }
  virtual AllocatorStats Stats() const = 0;
  virtual void ResetPeak() = 0;
  // Returns cached, unused memory to the system.
  virtual void EmptyCache() = 0;
  virtual Device device() const = 0;
};

// Raw memory source under a caching allocator (malloc, cudaMalloc, ...).
struct SystemMemory {
  std::function<void*(size_t)> alloc;  // returns nullptr on failure
  std::function<void(void*)> free;
};

// Best-fit caching allocator: requests are rounded to 512 bytes; small ones (<1 MiB) are carved
// from 2 MiB segments, large ones get their own segment rounded to 2 MiB. Free blocks sit in
// size-ordered bins (one per pool), are split on reuse and merged with free neighbours on free.
// When the system refuses, the cache is emptied and the request retried once.
// Tiny blocks (<= 4 KiB: the scalars and small vectors of eager loops) freed while their size's
// stack has room are kept whole on a per-size LIFO stack and handed back to the next request of
// that size without touching the bins (no split, merge or tree update); EmptyCache and the
// out-of-memory retry merge them back first.
// With `thread_cache` (one process-wide allocator that is never destroyed: the CPU one), each
// thread also keeps a few tiny blocks of each size that it freed through the sized Deallocate,
// handed back to its next request of that size with no lock and no lookup (the statistics are
// atomics, so they stay exact). A thread's cached blocks return to the shared stacks when it
// exits or calls EmptyCache; another thread's EmptyCache does not reach them (at most
// kThreadCacheDepth blocks of each tiny size per thread).
class CachingAllocator : public Allocator {
 public:
  CachingAllocator(Device device, SystemMemory sys, bool thread_cache = false);
  ~CachingAllocator() override;
  StatusOr<void*> Allocate(size_t bytes) override;
  void Deallocate(void* ptr) override;
  void Deallocate(void* ptr, size_t bytes) override;
  AllocatorStats Stats() const override;
  void ResetPeak() override;
  void EmptyCache() override;
  Device device() const override { return device_; }
  // Caps reserved bytes (0 = no cap); used by tests and by users who share a machine.
  void SetLimit(int64_t bytes);
  // Hands the calling thread's cached tiny blocks back (thread exit does it) and closes its cache.
  void FlushThreadCache();

  struct ThreadCache;  // public for the thread-exit hook in allocator.cc
  static ThreadCache& ThisThreadCache();

 private:
  struct Block {
    char* ptr;
    size_t size;
    bool free;
    bool small;
    Block* prev = nullptr;
    Block* next = nullptr;  // neighbours inside the same segment
  };
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };
  using Bin = std::set<Block*, BySize>;
  static constexpr size_t kStackedMax = 4096;  // bytes; sizes are multiples of 512
  static constexpr size_t kStackDepth = 64;
  static constexpr int kThreadCacheDepth = 4;
  size_t DeallocateLocked(void* ptr);  // the block's size, 0 if `ptr` is not ours
  void Counted(size_t size);           // statistics of a successful allocation
  Block* TryAllocate(size_t size);
  Block* NewSegment(size_t size, bool small);
  void FreeBlockLocked(Block* b);  // to its bin, merged with free neighbours
  void EmptyCacheLocked();

  Device device_;
  SystemMemory sys_;
  mutable std::mutex mu_;
  Bin small_bin_, large_bin_;
  std::vector<Block*> stacked_[kStackedMax / 512];  // by size / 512 - 1; blocks not free
  absl::flat_hash_map<void*, Block*> live_;         // every block handed out or in a thread cache
  AllocatorStats stats_;  // reserved and num_system_allocs; the rest are the atomics below
  std::atomic<int64_t> allocated_{0}, peak_allocated_{0}, num_allocs_{0};
  const bool thread_cache_;
  int64_t limit_ = 0;
};

// The allocator of each device; CPU is built in, other backends register theirs at load time.
Allocator* GetAllocator(const Device& device);
CachingAllocator* CpuAllocator();
void RegisterAllocatorFactory(DeviceType type, std::function<Allocator*(int index)> factory);

}  // namespace oneflow_like
