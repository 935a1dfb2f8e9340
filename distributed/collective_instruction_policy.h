// CollectiveInstructionPolicy: one collective (or send/recv) as a VM instruction: on the CPU's
// collective stream (CollectiveStreamDevice(), Gloo) or on a CUDA device's compute stream (NCCL,
// which only enqueues the work there). It reads and writes its tensors' blobs, so it
// orders against the compute that produces and consumes them by the VM's usual dependences, and it
// also writes its process group's order blob, so a group's collectives run in the order they were
// issued (every rank must meet them in the same order; readiness alone would reorder them). Work:
// the completion handle async_op=True returns (wait / is_completed), which also covers the device
// work an NCCL instruction leaves running (DeviceCompletion).
#pragma once
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_like/framework/tensor.h"
#include "vm/instruction.h"
#include "vm/stream.h"

namespace oneflow_like {
namespace distributed {

// The collective stream: the CPU's stream of the collective role, a worker thread of its own that
// never runs work inline ("cpu/collective" in profiles).
inline Device CollectiveStreamDevice() {
  return Device::CPU();
}
constexpr vm::StreamRole kCollectiveStreamRole = vm::StreamRole::kCollective;

// Device work a collective's instruction enqueued and left running when it retired (NCCL kernels
// on a CUDA stream). Both calls are bounded and may be made from any thread.
class DeviceCompletion {
 public:
  virtual ~DeviceCompletion() = default;
  // True once the device work finished; an error when it failed.
  virtual StatusOr<bool> Query() = 0;
  // Waits at most `timeout_ms` (< 0: only the owner's own limit, after which it gives up on the
  // work and fails): true when finished, false when `timeout_ms` passed first.
  virtual StatusOr<bool> Wait(int64_t timeout_ms) = 0;
};

// Completion of one collective: signalled once its instruction has run (or was skipped because
// an input carried an error) and been retired; with a DeviceCompletion attached, also once that
// device work finished.
class Work {
 public:
  bool IsCompleted();
  // Blocks until completion, at most `timeout_ms` (< 0: no limit of its own); returns the op's
  // error, which the VM then forgets (flow.sync() does not raise it a second time).
  Status Wait(int64_t timeout_ms = -1);
  void Signal(Status s);
  // Called by the instruction before it retires (NCCL: the event after the enqueued kernels).
  void SetDeviceCompletion(std::shared_ptr<DeviceCompletion> device);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Status status_;
  std::shared_ptr<DeviceCompletion> device_;  // under mu_; reset once finished or failed
};

// A contiguous tensor's bytes inside its blob, resolved on the caller's thread.
struct TensorBytes {
  vm::BlobPtr blob;
  int64_t offset = 0;  // bytes
  int64_t size = 0;    // bytes
  void* data() const { return static_cast<char*>(blob->data()) + offset; }
};
StatusOr<TensorBytes> BytesOf(const Tensor& t, const char* op_name);

class CollectiveInstructionPolicy : public vm::InstructionPolicy {
 public:
  using Fn = std::function<Status(const std::vector<TensorBytes>& reads,
                                  const std::vector<TensorBytes>& writes)>;
  // For instructions on a device stream: also given that stream (the VM stream's device stream,
  // e.g. the CudaStream of a CUDA compute stream) and the Work, to attach a DeviceCompletion.
  using DeviceFn = std::function<Status(oneflow_like::Stream* device_stream, Work* work,
                                        const std::vector<TensorBytes>& reads,
                                        const std::vector<TensorBytes>& writes)>;
  CollectiveInstructionPolicy(std::string name, std::vector<TensorBytes> reads,
                              std::vector<TensorBytes> writes, vm::BlobPtr order, Fn fn,
                              std::shared_ptr<Work> work);
  CollectiveInstructionPolicy(std::string name, std::vector<TensorBytes> reads,
                              std::vector<TensorBytes> writes, vm::BlobPtr order, DeviceFn fn,
                              std::shared_ptr<Work> work);
  ~CollectiveInstructionPolicy() override;
  const vm::DependenceVector& input_dependences() const override { return in_; }
  const vm::DependenceVector& output_dependences() const override { return out_; }
  Status Prepare(vm::Instruction*) override;
  Status Compute(vm::Instruction*) override;
  std::string DebugName(const vm::Instruction&) const override { return name_; }
  // For a Gloo collective whose issuing thread waits for it at once (async_op=False): when it is
  // ready as it is issued and the collective stream is idle, the VM runs it on the issuing thread
  // (CostHint 0 there, vm::VirtualMachine::CanRunInline) instead of handing it to the stream's
  // worker and waiting for the worker's signal: two thread hand-offs fewer. Anywhere else (a
  // thread that makes it ready later, e.g. a compute worker) it goes to the collective stream.
  void RunOnIssuingThreadIfReady() { issuing_thread_ = std::this_thread::get_id(); }
  int64_t CostHint() const override {
    return issuing_thread_ != std::thread::id() && std::this_thread::get_id() == issuing_thread_
               ? 0
               : -1;
  }

 private:
  void AddDependences();
  std::string name_;
  std::vector<TensorBytes> reads_, writes_;
  vm::BlobPtr order_;
  Fn fn_;
  DeviceFn device_fn_;  // instead of fn_ on device streams
  std::shared_ptr<Work> work_;
  std::thread::id issuing_thread_;  // set by RunOnIssuingThreadIfReady
  bool ran_ = false;
  Status result_;
  vm::DependenceVector in_, out_;
};

}  // namespace distributed
}  // namespace oneflow_like
