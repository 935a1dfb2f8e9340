// LaunchLazyJob: runs a compiled graph (hlo::Executable) as ONE VM instruction. It reads the
// blobs of the graph's inputs and captured tensors and writes its outputs and the captured
// tensors the graph assigns, so it orders against eager work on the same tensors by the usual
// read/write dependences.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/device_compile.h"
#include "oneflow_like/framework/tensor.h"
#include "vm/instruction.h"

namespace oneflow_like {
namespace lazy {

struct BufferRef {
  vm::BlobPtr blob;
  int64_t offset_bytes = 0;
  int64_t bytes = 0;
};

// Scratch buffers for the new values of assigned tensors, kept by the compiled graph across
// runs (its runs write the same tensors, so the VM never runs two of them at once).
// Buffers receiving the new values of assigned tensors, kept across runs. After a run a whole
// assigned storage trades memory with its buffer (no copy); a partial view is copied back.
struct AssignScratch {
  std::vector<vm::BlobPtr> blobs;
};

class LaunchLazyJobInstructionPolicy : public vm::InstructionPolicy {
 public:
  LaunchLazyJobInstructionPolicy(std::string name, std::shared_ptr<hlo::Executable> exe,
                                 std::vector<BufferRef> args, std::vector<BufferRef> outputs,
                                 std::vector<BufferRef> assigned,
                                 std::shared_ptr<AssignScratch> scratch = nullptr);
  // A graph on a device: pushed on the device's compute stream, it enqueues the executable on
  // that stream (the VM retires it once enqueued, as every eager op there).
  LaunchLazyJobInstructionPolicy(std::string name, std::shared_ptr<hlo::DeviceExecutable> exe,
                                 std::vector<BufferRef> args, std::vector<BufferRef> outputs,
                                 std::vector<BufferRef> assigned,
                                 std::shared_ptr<AssignScratch> scratch = nullptr);
  const vm::DependenceVector& input_dependences() const override { return in_; }
  const vm::DependenceVector& output_dependences() const override { return out_; }
  Status Prepare(vm::Instruction*) override;
  Status Compute(vm::Instruction*) override;
  std::string DebugName(const vm::Instruction&) const override {
    return "launch_lazy_job:" + name_;
  }
  // Random ops inside the graph mix this per-run value into their traced seeds (0: none).
  void set_random_nonce(uint64_t nonce) { nonce_ = nonce; }
  // Per assigned tensor: the executable writes its new value over the old one (the compiler
  // accepted the donation), so it gets the tensor's own buffer and no scratch.
  void set_in_place(std::vector<bool> in_place) { in_place_ = std::move(in_place); }

 private:
  std::string name_;
  uint64_t nonce_ = 0;
  // Copies the new values of assigned tensors that are views of a larger storage back.
  Status CopyBack(vm::Instruction* instr, size_t i);
  Device device() const { return dev_exe_ ? dev_exe_->device() : Device::CPU(); }

  std::shared_ptr<hlo::Executable> exe_;
  std::shared_ptr<hlo::DeviceExecutable> dev_exe_;
  std::vector<BufferRef> args_, outputs_, assigned_;
  std::vector<bool> in_place_;
  std::shared_ptr<AssignScratch> scratch_;
  vm::DependenceVector in_, out_;
};

// The per-run nonce of the graph running on this thread (see kernel_call.cc).
uint64_t CurrentRandomNonce();

}  // namespace lazy
}  // namespace oneflow_like
