// InstructionsBuilder + PhysicalRun: the one entry point for callers. The lambda appends
// instructions to a builder; if it succeeds, the whole list is handed to the VM in order.
//   RETURN_IF_ERROR(PhysicalRun([&](InstructionsBuilder* b) { return b->Call(...); }));
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "vm/instruction_policies.h"
#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace vm {

class InstructionsBuilder {
 public:
  explicit InstructionsBuilder(VirtualMachine* vm) : vm_(vm) {}
  // Any policy on the (device, role) stream (used for LaunchLazyJob, events, tests).
  Status Push(const Device& device, StreamRole role, std::unique_ptr<InstructionPolicy> policy);
  Status Call(const Device& device, absl::InlinedVector<BlobPtr, 4> inputs,
              absl::InlinedVector<BlobPtr, 2> outputs, std::unique_ptr<OpKernelCall> call,
              StreamRole role = StreamRole::kCompute);
  Status ReleaseTensor(BlobPtr blob);
  // With `sync` non-null the caller waits on it after PhysicalRun returns.
  Status AccessBlobByCallback(BlobPtr blob, AccessMode mode,
                              AccessBlobByCallbackInstructionPolicy::Callback cb,
                              std::shared_ptr<SyncPoint> sync);
  Status Barrier(std::shared_ptr<SyncPoint> sync);
  std::vector<std::unique_ptr<Instruction>>& instructions() { return instrs_; }

 private:
  VirtualMachine* vm_;
  std::vector<std::unique_ptr<Instruction>> instrs_;
};

// PhysicalRun on a given VM (tests, benchmarks, embedders with their own VM instance).
template <typename F>
Status PhysicalRun(VirtualMachine* vm, F&& fn) {
  InstructionsBuilder builder(vm);
  RETURN_IF_ERROR(fn(&builder));
  vm->Receive(std::move(builder.instructions()));
  return Status();
}

template <typename F>
Status PhysicalRun(F&& fn) {
  return PhysicalRun(VirtualMachine::Get(), std::forward<F>(fn));
}

// Runs `cb` on the blob's data after earlier writes, blocking the caller; returns the error of
// the blob's producer or of `cb`.
Status SyncAccessBlob(BlobPtr blob, AccessMode mode,
                      AccessBlobByCallbackInstructionPolicy::Callback cb);
Status SyncAccessBlob(VirtualMachine* vm, BlobPtr blob, AccessMode mode,
                      AccessBlobByCallbackInstructionPolicy::Callback cb);

}  // namespace vm
}  // namespace oneflow_like
