// Test helpers for vm/*_test.cc: an instruction policy made of a lambda over declared blob
// reads and writes, and small blob helpers. testonly.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vm/instruction_policies.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace vm {
namespace testing {

// Runs `fn` after allocating the written blobs. Counts its own destruction in `destroyed`.
class FnPolicy : public InstructionPolicy {
 public:
  using Fn = std::function<Status()>;
  FnPolicy(std::string name, std::vector<BlobPtr> reads, std::vector<BlobPtr> writes, Fn fn,
           int64_t cost = -1, std::atomic<int>* destroyed = nullptr)
      : name_(std::move(name)),
        reads_(std::move(reads)),
        writes_(std::move(writes)),
        fn_(std::move(fn)),
        cost_(cost),
        destroyed_(destroyed) {
    for (auto& b : reads_) in_.push_back(b->dependence());
    for (auto& b : writes_) out_.push_back(b->dependence());
  }
  ~FnPolicy() override {
    if (destroyed_) destroyed_->fetch_add(1);
  }
  const DependenceVector& input_dependences() const override { return in_; }
  const DependenceVector& output_dependences() const override { return out_; }
  Status Prepare(Instruction*) override {
    for (auto& b : writes_) RETURN_IF_ERROR(b->EnsureAllocated());
    return Status();
  }
  Status Compute(Instruction*) override { return fn_ ? fn_() : Status(); }
  std::string DebugName(const Instruction&) const override { return name_; }
  int64_t CostHint() const override { return cost_; }

 private:
  std::string name_;
  std::vector<BlobPtr> reads_, writes_;
  Fn fn_;
  int64_t cost_;
  std::atomic<int>* destroyed_;
  DependenceVector in_, out_;
};

// A one-shot gate on std::mutex (visible to ThreadSanitizer, unlike Debian's absl::Notification).
class Latch {
 public:
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return open_; });
  }
  bool WaitFor(double seconds) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::duration<double>(seconds), [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

inline BlobPtr NewBlob(size_t bytes = sizeof(int64_t), Device d = Device::CPU()) {
  return std::make_shared<Blob>(d, bytes);
}
inline int64_t& I64(const BlobPtr& b) {
  return *static_cast<int64_t*>(b->data());
}

// Pushes a FnPolicy instruction on (device, role) of `vm`.
inline Status Issue(VirtualMachine* vm, std::string name, std::vector<BlobPtr> reads,
                    std::vector<BlobPtr> writes, FnPolicy::Fn fn, int64_t cost = -1,
                    Device device = Device::CPU(), StreamRole role = StreamRole::kCompute) {
  return PhysicalRun(vm, [&](InstructionsBuilder* b) {
    return b->Push(device, role,
                   std::make_unique<FnPolicy>(std::move(name), std::move(reads), std::move(writes),
                                              std::move(fn), cost));
  });
}

// Reads a blob's int64 value through a sync access (the way .item() does).
inline StatusOr<int64_t> ReadI64(VirtualMachine* vm, const BlobPtr& b) {
  int64_t v = 0;
  Status s = SyncAccessBlob(vm, b, AccessMode::kRead, [&](void* p) {
    std::memcpy(&v, p, sizeof(v));
    return Status();
  });
  if (!s.ok()) return s;
  return v;
}

}  // namespace testing
}  // namespace vm
}  // namespace oneflow_like
