// VM streams and stream policies. A vm::Stream is a queue of ready instructions bound to one
// device and role; its StreamPolicy says where and how the queue runs:
//   - CPU compute: one named worker thread per device ("ofl_cpu0"); kernels inside use the
//     intra-op pool. Small instructions may run inline on the caller's thread when idle.
//   - control: runs inline on whichever thread made the instruction ready (barriers, callbacks
//     that only signal a waiter); no thread of its own.
//   - CUDA compute / H2D / D2H (kernels/cuda): one worker thread each, completion via events.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "oneflow_like/base/device.h"
#include "oneflow_like/base/stream.h"
#include "vm/instruction.h"

namespace oneflow_like {
namespace vm {

// kCollective: the CPU stream collectives (distributed/) run on, a worker thread of its own (they
// block on peers over the network while compute goes on); inline only for an instruction whose
// CostHint asks for it: a blocking collective waited on at once by the thread that issued it
// (distributed/collective_instruction_policy.h).
enum class StreamRole : int8_t { kCompute = 0, kH2D, kD2H, kControl, kLazyJob, kCollective };
constexpr int kNumStreamRoles = 6;
const char* StreamRoleName(StreamRole role);

class StreamPolicy {
 public:
  virtual ~StreamPolicy() = default;
  // True: instructions run on the thread that made them ready (no worker thread).
  virtual bool RunsInline() const { return false; }
  // True: small instructions may run on the caller's thread when the stream is idle.
  virtual bool AllowsInlineSmall() const { return false; }
  // Called once on the worker thread before the first instruction (set device, make handles).
  virtual Status InitThread(const Device&) { return Status(); }
  // Runs one instruction. The default runs Prepare+Compute synchronously; device streams
  // launch the work and wait for completion on an event before returning.
  virtual void Run(Instruction* instr) { ExecuteInstruction(instr); }
  // The device stream behind this VM stream, if any (CUDA).
  virtual oneflow_like::Stream* device_stream() { return nullptr; }
};

// Creates the policy for a (device type, role); backends register theirs at load time.
using StreamPolicyFactory = std::function<std::unique_ptr<StreamPolicy>(const Device&, StreamRole)>;
void RegisterStreamPolicyFactory(DeviceType type, StreamPolicyFactory factory);
StatusOr<std::unique_ptr<StreamPolicy>> CreateStreamPolicy(const Device& device, StreamRole role);

class Stream {
 public:
  Stream(Device device, StreamRole role, std::unique_ptr<StreamPolicy> policy)
      : device_(device), role_(role), policy_(std::move(policy)) {}
  Device device() const { return device_; }
  StreamRole role() const { return role_; }
  StreamPolicy* policy() const { return policy_.get(); }
  std::string name() const;

 private:
  friend class VirtualMachine;
  Device device_;
  StreamRole role_;
  std::unique_ptr<StreamPolicy> policy_;
  // Worker state (unused for inline streams); guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Instruction*> queue_;
  std::atomic<int64_t> queued_{0};
  std::atomic<bool> busy_{false};
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace vm
}  // namespace oneflow_like
