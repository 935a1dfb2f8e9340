#include "oneflow_like/lazy/launch_lazy_job_instruction_policy.h"

#include <algorithm>
#include <cstring>

#include "kernels/kernel.h"
#include "oneflow_like/base/thread_pool.h"
#include "vm/stream.h"

namespace oneflow_like {
namespace lazy {

LaunchLazyJobInstructionPolicy::LaunchLazyJobInstructionPolicy(
    std::string name, std::shared_ptr<hlo::Executable> exe, std::vector<BufferRef> args,
    std::vector<BufferRef> outputs, std::vector<BufferRef> assigned,
    std::shared_ptr<AssignScratch> scratch)
    : name_(std::move(name)),
      exe_(std::move(exe)),
      args_(std::move(args)),
      outputs_(std::move(outputs)),
      assigned_(std::move(assigned)),
      scratch_(scratch ? std::move(scratch) : std::make_shared<AssignScratch>()) {
  for (auto& a : args_) in_.push_back(a.blob->dependence());
  for (auto& o : outputs_) out_.push_back(o.blob->dependence());
  for (auto& o : assigned_) out_.push_back(o.blob->dependence());
}

LaunchLazyJobInstructionPolicy::LaunchLazyJobInstructionPolicy(
    std::string name, std::shared_ptr<hlo::DeviceExecutable> exe, std::vector<BufferRef> args,
    std::vector<BufferRef> outputs, std::vector<BufferRef> assigned,
    std::shared_ptr<AssignScratch> scratch)
    : LaunchLazyJobInstructionPolicy(std::move(name), std::shared_ptr<hlo::Executable>(),
                                     std::move(args), std::move(outputs), std::move(assigned),
                                     std::move(scratch)) {
  dev_exe_ = std::move(exe);
}

namespace {
thread_local uint64_t t_nonce = 0;
struct RandomNonceScope {
  explicit RandomNonceScope(uint64_t n) : prev(t_nonce) { t_nonce = n; }
  ~RandomNonceScope() { t_nonce = prev; }
  uint64_t prev;
};
}  // namespace

uint64_t CurrentRandomNonce() {
  return t_nonce;
}

Status LaunchLazyJobInstructionPolicy::Prepare(vm::Instruction*) {
  for (auto& o : outputs_) RETURN_IF_ERROR(o.blob->EnsureAllocated());
  return Status();
}

Status LaunchLazyJobInstructionPolicy::Compute(vm::Instruction* instr) {
  std::vector<const void*> args;
  for (auto& a : args_) args.push_back(static_cast<char*>(a.blob->data()) + a.offset_bytes);
  std::vector<void*> outs;
  for (auto& o : outputs_) outs.push_back(static_cast<char*>(o.blob->data()) + o.offset_bytes);
  // Assigned tensors are also arguments: the graph writes their new values to scratch blobs,
  // which take the tensors' place once the whole run has read the old values.
  AssignScratch& sc = *scratch_;
  if (sc.blobs.size() != assigned_.size()) {
    sc.blobs.clear();
    for (auto& a : assigned_)
      sc.blobs.push_back(std::make_shared<vm::Blob>(device(), static_cast<size_t>(a.bytes)));
  }
  auto in_place = [&](size_t i) { return i < in_place_.size() && in_place_[i]; };
  for (size_t i = 0; i < assigned_.size(); ++i) {
    if (static_cast<int64_t>(sc.blobs[i]->bytes()) != assigned_[i].bytes)
      return Internal("[launch_lazy_job:%s] assigned tensor %d changed size", name_, int(i));
    if (in_place(i)) {
      outs.push_back(static_cast<char*>(assigned_[i].blob->data()) + assigned_[i].offset_bytes);
      continue;
    }
    RETURN_IF_ERROR(sc.blobs[i]->EnsureAllocated());
    outs.push_back(sc.blobs[i]->data());
  }
  {
    RandomNonceScope nonce(nonce_);
    if (dev_exe_) {
      // Enqueued on this VM stream's device stream: later eager ops on it run after the graph,
      // and the scratch swaps below only exchange addresses.
      oneflow_like::Stream* stream = instr->stream()->policy()->device_stream();
      if (stream == nullptr)
        return Internal(
            "[launch_lazy_job:%s] the %s graph was pushed on a stream without a device "
            "stream",
            name_, device().ToString());
      RETURN_IF_ERROR(dev_exe_->Run(args, outs, stream));
    } else {
      RETURN_IF_ERROR(exe_->Run(args, outs));
    }
  }
  for (size_t i = 0; i < assigned_.size(); ++i) {
    if (in_place(i)) continue;
    vm::Blob& target = *assigned_[i].blob;
    if (assigned_[i].offset_bytes == 0 &&
        static_cast<int64_t>(target.bytes()) == assigned_[i].bytes) {
      target.SwapMemory(*sc.blobs[i]);  // the whole storage: swap, no copy
      continue;
    }
    RETURN_IF_ERROR(CopyBack(instr, i));
  }
  return Status();
}

Status LaunchLazyJobInstructionPolicy::CopyBack(vm::Instruction* instr, size_t i) {
  AssignScratch& sc = *scratch_;
  vm::Blob& target = *assigned_[i].blob;
  if (dev_exe_) {  // the device's copy kernel on the graph's stream, bytes as a u8 vector
    ASSIGN_OR_RETURN(kernels::KernelFn copy, kernels::FindKernel("contiguous", device().type()));
    kernels::TensorView from, to;
    from.dtype = to.dtype = DType::kU8;
    from.shape = to.shape = Shape({assigned_[i].bytes});
    from.strides = to.strides = DimVector{1};
    from.data = sc.blobs[i]->data();
    to.data = static_cast<char*>(target.data()) + assigned_[i].offset_bytes;
    absl::InlinedVector<kernels::TensorView, 1> iv{from}, ov{to};
    AttrMap none;
    kernels::KernelContext ctx("launch_lazy_job", device(), none, iv, ov,
                               instr->stream()->policy()->device_stream());
    return copy(ctx);
  }
  constexpr int64_t kChunk = 1 << 18;  // bytes per parallel copy chunk
  char* dst = static_cast<char*>(target.data()) + assigned_[i].offset_bytes;
  const char* src = static_cast<const char*>(sc.blobs[i]->data());
  const int64_t n = assigned_[i].bytes;
  if (n < 2 * kChunk) {
    std::memcpy(dst, src, n);
    return Status();
  }
  IntraOpPool()->ParallelFor((n + kChunk - 1) / kChunk, 1, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b * kChunk, src + b * kChunk, std::min(n, e * kChunk) - b * kChunk);
  });
  return Status();
}

}  // namespace lazy
}  // namespace oneflow_like
