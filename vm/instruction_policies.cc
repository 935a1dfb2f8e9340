#include "vm/instruction_policies.h"

#include "vm/stream.h"

namespace oneflow_like {
namespace vm {

OpCallInstructionPolicy::OpCallInstructionPolicy(absl::InlinedVector<BlobPtr, 4> inputs,
                                                 absl::InlinedVector<BlobPtr, 2> outputs,
                                                 std::unique_ptr<OpKernelCall> call)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)), call_(std::move(call)) {
  for (auto& b : inputs_) in_deps_.push_back(b->dependence());
  for (auto& b : outputs_) out_deps_.push_back(b->dependence());
}

Status OpCallInstructionPolicy::Prepare(Instruction*) {
  for (auto& b : outputs_) RETURN_IF_ERROR(b->EnsureAllocated());
  return Status();
}

Status OpCallInstructionPolicy::Compute(Instruction* instr) {
  return call_->Compute(instr->stream()->policy()->device_stream());
}

AccessBlobByCallbackInstructionPolicy::AccessBlobByCallbackInstructionPolicy(
    BlobPtr blob, AccessMode mode, Callback cb, std::shared_ptr<SyncPoint> sync)
    : blob_(std::move(blob)), mode_(mode), cb_(std::move(cb)), sync_(std::move(sync)) {
  in_.push_back(blob_->dependence());
  if (mode_ == AccessMode::kWrite) out_.push_back(blob_->dependence());
}

AccessBlobByCallbackInstructionPolicy::~AccessBlobByCallbackInstructionPolicy() {
  // Never leave a waiter hanging, even if the instruction was dropped without running.
  if (sync_)
    sync_->Signal(ran_ ? result_
                       : Internal("[access_blob_by_callback] instruction dropped before it ran"));
}

BarrierInstructionPolicy::~BarrierInstructionPolicy() {
  if (sync_)
    sync_->Signal(ran_ ? Status() : Internal("[barrier] instruction dropped before it ran"));
}

Status AccessBlobByCallbackInstructionPolicy::Prepare(Instruction*) {
  return Status();
}

Status AccessBlobByCallbackInstructionPolicy::Compute(Instruction* instr) {
  Status s = instr->input_error();
  if (s.ok()) s = before_;
  if (s.ok() && mode_ == AccessMode::kWrite) s = blob_->EnsureAllocated();
  if (s.ok()) {
    if (!blob_->allocated()) {
      s = Internal("[access_blob_by_callback] blob read before anything wrote it");
    } else {
      s = cb_(blob_->data());
    }
  }
  ran_ = true;
  result_ = s;  // the waiter is signalled by the destructor, after retirement
  // A failed input is reported to the waiter, not re-raised as this instruction's own error.
  return instr->input_error().ok() ? s : Status();
}

Status RecordEventInstructionPolicy::Compute(Instruction* instr) {
  oneflow_like::Stream* ds = instr->stream()->policy()->device_stream();
  return ds ? event_->Record(ds) : Status();
}

Status WaitEventInstructionPolicy::Compute(Instruction* instr) {
  oneflow_like::Stream* ds = instr->stream()->policy()->device_stream();
  return ds ? event_->WaitOn(ds) : Status();
}

}  // namespace vm
}  // namespace oneflow_like
