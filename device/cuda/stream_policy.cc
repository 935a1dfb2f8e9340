// VM stream policies of the CUDA backend: compute, H2D and D2H, one worker thread each (made by
// the VM), each owning one non-blocking CudaStream on its device.
//
// Note [CUDA instruction completion]: on the compute stream, Run() executes the instruction
// (Prepare + Compute enqueue its work on the stream) and retires it without waiting for the
// device, as PyTorch and OneFlow do: the host runs ahead of the GPU. That is safe because
//  - every CUDA op of a device runs on this one compute stream, so device work is ordered as
//    issued; a later op reading an earlier op's output waits in the stream, not on the host;
//  - memory freed on the host goes back to the caching allocator while kernels may still use
//    it, and the next user is a kernel enqueued later on the same stream (stream order again);
//  - whatever reads device memory on the host waits first: to_device (to or from host memory)
//    synchronizes inside the kernel, host access callbacks (AccessBlobByCallback: DLPack
//    export, the C++ API's data access) wait here before running, and kernels that read
//    device-side checks back (index, loss, embedding, integer division, bernoulli) wait
//    themselves; flow.cuda.synchronize() drains the VM and then every stream.
// Transfers (to_device) run on this compute stream too (framework/op.cc): on a separate copy
// stream they would not be ordered with queued kernels. The H2D and D2H roles (unused by the
// dispatch; overlapping copies needs cross-stream events first) wait after every instruction.
// An asynchronous fault (illegal address) surfaces at the next sync point or launch on the
// device; the CUDA context is then lost (cuda_status.h's IsStickyError) and every later CUDA op
// reports that, while CPU work keeps running.
#include <cstdio>

#include "device/cuda/device.h"
#include "vm/instruction.h"
#include "vm/instruction_policies.h"
#include "vm/stream.h"

namespace oneflow_like {
namespace cuda {
namespace {

class CudaStreamPolicy : public vm::StreamPolicy {
 public:
  explicit CudaStreamPolicy(vm::StreamRole role) : role_(role) {}

  Status InitThread(const Device& device) override {
    RETURN_IF_ERROR(CheckDevice(device.index()));
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device.index()));
    ASSIGN_OR_RETURN(stream_, CudaStream::Create(device.index()));
    return Status();
  }

  void Run(vm::Instruction* instr) override {
    const bool compute = role_ == vm::StreamRole::kCompute;
    auto* access = stream_ && compute
                       ? dynamic_cast<vm::AccessBlobByCallbackInstructionPolicy*>(instr->policy())
                       : nullptr;
    if (access != nullptr) {
      // The callback reads or writes the blob's device memory from the host: a sync point, where
      // a device fault or a deferred device check (Note [Deferred device checks]) is raised.
      Status s = stream_->Synchronize();
      if (!s.ok()) access->FailBefore(std::move(s));
    }
    vm::ExecuteInstruction(instr);
    if (!stream_ || compute) return;
    Status s = stream_->Synchronize();
    if (!s.ok() && instr->status().ok()) {
      // The instruction's own status cannot be changed here; the fault is sticky in CUDA, so
      // the next instruction on this device reports it too. Say which one ran.
      std::fprintf(stderr, "[cuda] device fault after %s on %s stream: %s\n",
                   instr->DebugName().c_str(), vm::StreamRoleName(role_),
                   std::string(s.message()).c_str());
    }
  }

  oneflow_like::Stream* device_stream() override { return stream_.get(); }

 private:
  vm::StreamRole role_;
  std::unique_ptr<CudaStream> stream_;
};

const bool g_registered = [] {
  vm::RegisterStreamPolicyFactory(
      DeviceType::kCUDA,
      [](const Device& device, vm::StreamRole role) -> std::unique_ptr<vm::StreamPolicy> {
        if (role != vm::StreamRole::kCompute && role != vm::StreamRole::kH2D &&
            role != vm::StreamRole::kD2H)
          return nullptr;
        // No device: the VM reports "backend for cuda:N has no <role> stream"; callers check
        // is_available() first for a better message.
        if (device.index() < 0 || device.index() >= DeviceCount()) return nullptr;
        return std::make_unique<CudaStreamPolicy>(role);
      });
  return true;
}();

}  // namespace
}  // namespace cuda
}  // namespace oneflow_like
