#include "vm/instructions_builder.h"

namespace oneflow_like {
namespace vm {

Status InstructionsBuilder::Push(const Device& device, StreamRole role,
                                 std::unique_ptr<InstructionPolicy> policy) {
  ASSIGN_OR_RETURN(Stream * stream, vm_->GetStream(device, role));
  instrs_.push_back(std::make_unique<Instruction>(stream, std::move(policy)));
  return Status();
}

Status InstructionsBuilder::Call(const Device& device, absl::InlinedVector<BlobPtr, 4> inputs,
                                 absl::InlinedVector<BlobPtr, 2> outputs,
                                 std::unique_ptr<OpKernelCall> call, StreamRole role) {
  return Push(device, role,
              std::make_unique<OpCallInstructionPolicy>(std::move(inputs), std::move(outputs),
                                                        std::move(call)));
}

Status InstructionsBuilder::ReleaseTensor(BlobPtr blob) {
  Device d = blob->device();
  return Push(d, StreamRole::kCompute,
              std::make_unique<ReleaseTensorInstructionPolicy>(std::move(blob)));
}

Status InstructionsBuilder::AccessBlobByCallback(BlobPtr blob, AccessMode mode,
                                                 AccessBlobByCallbackInstructionPolicy::Callback cb,
                                                 std::shared_ptr<SyncPoint> sync) {
  Device d = blob->device();
  return Push(d, StreamRole::kCompute,
              std::make_unique<AccessBlobByCallbackInstructionPolicy>(
                  std::move(blob), mode, std::move(cb), std::move(sync)));
}

Status InstructionsBuilder::Barrier(std::shared_ptr<SyncPoint> sync) {
  return Push(Device::CPU(), StreamRole::kControl,
              std::make_unique<BarrierInstructionPolicy>(std::move(sync)));
}

Status SyncAccessBlob(BlobPtr blob, AccessMode mode,
                      AccessBlobByCallbackInstructionPolicy::Callback cb) {
  return SyncAccessBlob(VirtualMachine::Get(), std::move(blob), mode, std::move(cb));
}

Status SyncAccessBlob(VirtualMachine* vm, BlobPtr blob, AccessMode mode,
                      AccessBlobByCallbackInstructionPolicy::Callback cb) {
  auto sync = std::make_shared<SyncPoint>();
  RETURN_IF_ERROR(PhysicalRun(vm, [&](InstructionsBuilder* b) {
    return b->AccessBlobByCallback(std::move(blob), mode, std::move(cb), sync);
  }));
  Status s = sync->Wait();
  vm->ForgetError(s);  // raised here: a later SyncAll need not raise it again
  return s;
}

}  // namespace vm
}  // namespace oneflow_like
