// Blob: a piece of device memory plus the dependence object the VM orders its accesses by.
// Memory is allocated lazily (by the first writer's Prepare) and freed by ReleaseTensor, or by
// the destructor if it was never released (e.g. at shutdown).
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "oneflow_like/base/allocator.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like {
namespace vm {

class Instruction;

// Per-blob access record kept by the engine (guarded by the engine's lock): the last writer and
// the readers since that write, all still live. Also the error left by a failed writer.
class Dependence {
 public:
  Dependence() = default;
  Dependence(const Dependence&) = delete;
  Dependence& operator=(const Dependence&) = delete;

  // Error of the last instruction that failed writing this blob (OK if none).
  Status error() const {
    std::lock_guard<std::mutex> l(mu_);
    return error_;
  }
  void set_error(Status s) {
    std::lock_guard<std::mutex> l(mu_);
    error_ = std::move(s);
  }
  bool has_error() const { return has_error_.load(std::memory_order_acquire); }
  void mark_error(Status s) {
    set_error(std::move(s));
    has_error_.store(true, std::memory_order_release);
  }
  void clear_error() {
    if (!has_error()) return;
    set_error(Status());
    has_error_.store(false, std::memory_order_release);
  }

  // Engine bookkeeping.
  Instruction* last_writer = nullptr;
  std::vector<Instruction*> readers;
  bool idle() const { return last_writer == nullptr && readers.empty(); }
  // Live instructions listing this blob, counted by the engine (under its lock) and readable
  // without it: zero means idle(), so releasing the last handle frees the memory without taking
  // the VM lock (no new access can be issued once the last tensor is gone).
  void add_live_access(int delta) {
    live_accesses_.store(live_accesses_.load(std::memory_order_relaxed) + delta,
                         std::memory_order_release);
  }
  bool no_live_access() const { return live_accesses_.load(std::memory_order_acquire) == 0; }

 private:
  mutable std::mutex mu_;
  Status error_;
  std::atomic<bool> has_error_{false};
  std::atomic<int32_t> live_accesses_{0};  // written under the engine's lock only
};

class Blob {
 public:
  Blob(Device device, size_t bytes) : device_(device), bytes_(bytes) {}
  ~Blob() { Free(); }
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;

  Device device() const { return device_; }
  size_t bytes() const { return bytes_; }
  void* data() const { return ptr_; }
  bool allocated() const { return ptr_ != nullptr || bytes_ == 0; }
  Dependence* dependence() { return &dep_; }

  // Allocates if not yet done (idempotent). Called from Prepare on the executing thread.
  Status EnsureAllocated();
  // Wraps memory owned elsewhere (e.g. a NumPy array); `keep_alive` is dropped on Free.
  void AdoptExternal(void* ptr, std::shared_ptr<void> keep_alive);
  void Free();
  // Exchanges the memory (and who owns it) with `other`, of the same size (Free passes bytes() to
  // the sized Deallocate): a compiled graph hands a parameter its freshly written buffer instead
  // of copying it back.
  void SwapMemory(Blob& other) {
    std::swap(ptr_, other.ptr_);
    std::swap(allocator_, other.allocator_);
    std::swap(external_, other.external_);
  }

 private:
  Device device_;
  size_t bytes_;
  void* ptr_ = nullptr;
  Allocator* allocator_ = nullptr;
  std::shared_ptr<void> external_;
  Dependence dep_;
};

using BlobPtr = std::shared_ptr<Blob>;

}  // namespace vm
}  // namespace oneflow_like
