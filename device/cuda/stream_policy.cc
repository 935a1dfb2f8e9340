// VM stream policies of the CUDA backend: compute, H2D and D2H, one worker thread each (made by
// the VM), each owning one non-blocking CudaStream on its device.
//
// Note [CUDA instruction completion]: Run() executes the instruction (Prepare + Compute, which
// enqueue work on the stream), then records an event and waits for it before returning. So an
// instruction is retired only when its device work is done, which keeps the VM's dependence
// edges sufficient for cross-stream order (H2D -> compute -> D2H run on different threads and
// overlap with each other, but never with their own successors), makes freeing memory safe
// without per-stream tracking in the allocator, and lets CUDA kernels attribute asynchronous
// faults to the op that caused them (kernels/cuda/kernel_util.h waits inside the kernel for
// that reason, so the wait here is usually already satisfied). The price is one host wait per
// instruction; removing it needs the VM to carry errors found after Run returns.
#include <cstdio>

#include "device/cuda/device.h"
#include "vm/instruction.h"
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
    vm::ExecuteInstruction(instr);
    if (!stream_) return;
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
