#include "oneflow_like/lazy/launch_lazy_job_instruction_policy.h"

#include <cstring>

namespace oneflow_like {
namespace lazy {

LaunchLazyJobInstructionPolicy::LaunchLazyJobInstructionPolicy(std::string name, std::shared_ptr<hlo::Executable> exe,
                                                               std::vector<BufferRef> args,
                                                               std::vector<BufferRef> outputs,
                                                               std::vector<BufferRef> assigned)
    : name_(std::move(name)), exe_(std::move(exe)), args_(std::move(args)), outputs_(std::move(outputs)),
      assigned_(std::move(assigned)) {
  for (auto& a : args_) in_.push_back(a.blob->dependence());
  for (auto& o : outputs_) out_.push_back(o.blob->dependence());
  for (auto& o : assigned_) out_.push_back(o.blob->dependence());
}

Status LaunchLazyJobInstructionPolicy::Prepare(vm::Instruction*) {
  for (auto& o : outputs_) RETURN_IF_ERROR(o.blob->EnsureAllocated());
  return Status();
}

Status LaunchLazyJobInstructionPolicy::Compute(vm::Instruction*) {
  std::vector<const void*> args;
  for (auto& a : args_) args.push_back(static_cast<char*>(a.blob->data()) + a.offset_bytes);
  std::vector<void*> outs;
  for (auto& o : outputs_) outs.push_back(static_cast<char*>(o.blob->data()) + o.offset_bytes);
  // Assigned tensors are also arguments: the graph writes their new values to scratch buffers,
  // copied over once the whole run has read the old ones.
  std::vector<std::vector<char>> scratch(assigned_.size());
  for (size_t i = 0; i < assigned_.size(); ++i) {
    scratch[i].resize(static_cast<size_t>(assigned_[i].bytes));
    outs.push_back(scratch[i].data());
  }
  RETURN_IF_ERROR(exe_->Run(args, outs));
  for (size_t i = 0; i < assigned_.size(); ++i)
    std::memcpy(static_cast<char*>(assigned_[i].blob->data()) + assigned_[i].offset_bytes, scratch[i].data(),
                scratch[i].size());
  return Status();
}

}  // namespace lazy
}  // namespace oneflow_like
