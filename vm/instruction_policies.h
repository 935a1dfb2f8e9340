// The VM's built-in instruction policies: OpCall, ReleaseTensor, AccessBlobByCallback, Barrier,
// RecordEvent / WaitEvent. The op library implements OpKernelCall; the compiler's LaunchLazyJob
// policy (oneflow_like/lazy) implements InstructionPolicy directly.
#pragma once
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/synchronization/notification.h"
#include "oneflow_like/base/stream.h"
#include "vm/instruction.h"

namespace oneflow_like {
namespace vm {

// Where a synchronous caller waits for an instruction's outcome. The hand-over goes through a
// std::mutex (pthread, visible to ThreadSanitizer; Debian's absl is not instrumented); `done`
// is kept for callers that poll HasBeenNotified().
struct SyncPoint {
  absl::Notification done;
  Status status;
  void Signal(Status s) {
    {
      std::lock_guard<std::mutex> l(mu_);
      status = std::move(s);
      signalled_ = true;
    }
    cv_.notify_all();
    done.Notify();
  }
  Status Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return signalled_; });
    return status;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool signalled_ = false;
};

// A kernel invocation, implemented by the op library (inputs/outputs are blobs it holds).
class OpKernelCall {
 public:
  virtual ~OpKernelCall() = default;
  virtual const char* op_name() const = 0;
  // `device_stream` is the stream's device stream (CUDA), null on the CPU.
  virtual Status Compute(oneflow_like::Stream* device_stream) = 0;
  virtual int64_t CostHint() const { return -1; }
};

class OpCallInstructionPolicy : public InstructionPolicy {
 public:
  OpCallInstructionPolicy(absl::InlinedVector<BlobPtr, 4> inputs,
                          absl::InlinedVector<BlobPtr, 2> outputs,
                          std::unique_ptr<OpKernelCall> call);
  const DependenceVector& input_dependences() const override { return in_deps_; }
  const DependenceVector& output_dependences() const override { return out_deps_; }
  Status Prepare(Instruction*) override;  // allocates the outputs
  Status Compute(Instruction* instr) override;
  std::string DebugName(const Instruction&) const override { return call_->op_name(); }
  int64_t CostHint() const override { return call_->CostHint(); }

 private:
  absl::InlinedVector<BlobPtr, 4> inputs_;
  absl::InlinedVector<BlobPtr, 2> outputs_;
  std::unique_ptr<OpKernelCall> call_;
  DependenceVector in_deps_, out_deps_;
};

// Frees a blob's memory once every earlier access is done (it "writes" the blob).
class ReleaseTensorInstructionPolicy : public InstructionPolicy {
 public:
  explicit ReleaseTensorInstructionPolicy(BlobPtr blob)
      : blob_(std::move(blob)), out_{blob_->dependence()} {}
  const DependenceVector& input_dependences() const override { return none_; }
  const DependenceVector& output_dependences() const override { return out_; }
  bool RunsOnFailedInput() const override { return true; }
  Status Compute(Instruction*) override {
    blob_->Free();
    return Status();
  }
  std::string DebugName(const Instruction&) const override { return "release_tensor"; }
  int64_t CostHint() const override { return 0; }

 private:
  BlobPtr blob_;
  DependenceVector none_, out_;
};

enum class AccessMode { kRead, kWrite };

// Runs `callback(data)` on the blob's stream once earlier writes (and, for kWrite, reads) are
// done. If `sync` is set the caller waits on it and receives the callback's or the input's error;
// it is signalled when the instruction is retired, so the blob's access record is clean by then.
class AccessBlobByCallbackInstructionPolicy : public InstructionPolicy {
 public:
  using Callback = std::function<Status(void* data)>;
  AccessBlobByCallbackInstructionPolicy(BlobPtr blob, AccessMode mode, Callback cb,
                                        std::shared_ptr<SyncPoint> sync);
  ~AccessBlobByCallbackInstructionPolicy() override;
  const DependenceVector& input_dependences() const override { return in_; }
  const DependenceVector& output_dependences() const override { return out_; }
  bool RunsOnFailedInput() const override { return true; }
  Status Prepare(Instruction*) override;
  Status Compute(Instruction* instr) override;
  std::string DebugName(const Instruction&) const override { return "access_blob_by_callback"; }
  int64_t CostHint() const override { return static_cast<int64_t>(blob_->bytes() / 4); }
  // The stream found `s` before the callback ran (a device error, a deferred device check): the
  // callback is skipped and the access fails with it.
  void FailBefore(Status s) { before_ = std::move(s); }

 private:
  BlobPtr blob_;
  Status before_;
  AccessMode mode_;
  Callback cb_;
  std::shared_ptr<SyncPoint> sync_;
  bool ran_ = false;
  Status result_;
  DependenceVector in_, out_;
};

// Orders after every instruction received before it; signals `sync` once it has run and been
// retired (so the waiter sees no trace of it in the engine).
class BarrierInstructionPolicy : public InstructionPolicy {
 public:
  explicit BarrierInstructionPolicy(std::shared_ptr<SyncPoint> sync) : sync_(std::move(sync)) {}
  ~BarrierInstructionPolicy() override;
  const DependenceVector& input_dependences() const override { return none_; }
  const DependenceVector& output_dependences() const override { return none_; }
  bool IsBarrier() const override { return true; }
  Status Compute(Instruction*) override {
    ran_ = true;
    return Status();
  }
  std::string DebugName(const Instruction&) const override { return "barrier"; }

 private:
  std::shared_ptr<SyncPoint> sync_;
  bool ran_ = false;
  DependenceVector none_;
};

// Cross-stream order without a host round trip: RecordEvent on the producer's stream, then
// WaitEvent on the consumer's. On streams without a device stream (CPU) the engine's own
// dependence edges already give the order and these only check the event is usable.
class RecordEventInstructionPolicy : public InstructionPolicy {
 public:
  RecordEventInstructionPolicy(std::shared_ptr<Event> event, DependenceVector after)
      : event_(std::move(event)), in_(std::move(after)) {}
  const DependenceVector& input_dependences() const override { return in_; }
  const DependenceVector& output_dependences() const override { return none_; }
  Status Compute(Instruction* instr) override;
  std::string DebugName(const Instruction&) const override { return "record_event"; }

 private:
  std::shared_ptr<Event> event_;
  DependenceVector in_, none_;
};

class WaitEventInstructionPolicy : public InstructionPolicy {
 public:
  WaitEventInstructionPolicy(std::shared_ptr<Event> event, DependenceVector before)
      : event_(std::move(event)), out_(std::move(before)) {}
  const DependenceVector& input_dependences() const override { return none_; }
  const DependenceVector& output_dependences() const override { return out_; }
  Status Compute(Instruction* instr) override;
  std::string DebugName(const Instruction&) const override { return "wait_event"; }

 private:
  std::shared_ptr<Event> event_;
  DependenceVector none_, out_;
};

}  // namespace vm
}  // namespace oneflow_like
