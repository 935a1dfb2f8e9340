#include "distributed/collective_instruction_policy.h"

#include <algorithm>
#include <chrono>

#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace distributed {

bool Work::IsCompleted() {
  std::shared_ptr<DeviceCompletion> device;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!done_) return false;
    device = device_;
  }
  if (!device) return true;
  StatusOr<bool> finished = device->Query();
  if (finished.ok() && !*finished) return false;
  std::lock_guard<std::mutex> l(mu_);  // finished or failed: Wait reports which
  if (!finished.ok() && status_.ok()) status_ = finished.status();
  if (device_ == device) device_.reset();
  return true;
}

Status Work::Wait(int64_t timeout_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<DeviceCompletion> device;
  {
    std::unique_lock<std::mutex> l(mu_);
    if (timeout_ms < 0) {
      cv_.wait(l, [&] { return done_; });
    } else if (!cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return done_; })) {
      return absl::DeadlineExceededError(
          absl::StrFormat("[work.wait] not completed after %d ms", timeout_ms));
    }
    if (!status_.ok()) {
      vm::VirtualMachine::Get()->ForgetError(status_);
      return status_;
    }
    device = device_;
  }
  if (!device) return Status();
  int64_t left = -1;
  if (timeout_ms >= 0) {
    const int64_t spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    left = std::max<int64_t>(0, timeout_ms - spent);
  }
  StatusOr<bool> finished = device->Wait(left);
  if (finished.ok() && !*finished)
    return absl::DeadlineExceededError(
        absl::StrFormat("[work.wait] the device work was not completed after %d ms", timeout_ms));
  std::lock_guard<std::mutex> l(mu_);
  if (!finished.ok() && status_.ok()) status_ = finished.status();
  if (device_ == device) device_.reset();
  return status_;
}

void Work::SetDeviceCompletion(std::shared_ptr<DeviceCompletion> device) {
  std::lock_guard<std::mutex> l(mu_);
  device_ = std::move(device);
}

void Work::Signal(Status s) {
  {
    std::lock_guard<std::mutex> l(mu_);
    status_ = std::move(s);
    done_ = true;
  }
  cv_.notify_all();
}

StatusOr<TensorBytes> BytesOf(const Tensor& t, const char* op_name) {
  if (!t.defined()) return InvalidArgument("[%s] got an undefined tensor", op_name);
  if (t.is_lazy())
    return InvalidArgument("[%s] collectives take eager tensors, not values traced by nn.Graph",
                           op_name);
  if (!t.device().is_cpu())
    return InvalidArgument("[%s] the gloo backend takes CPU tensors: got a tensor on %s", op_name,
                           t.device().ToString());
  if (!t.is_contiguous())
    return InvalidArgument("[%s] tensors must be contiguous: got %s with strides that are not",
                           op_name, t.meta_string());
  const int64_t esize = DTypeSize(t.dtype());
  return TensorBytes{t.blob(), t.offset() * esize, t.numel() * esize};
}

CollectiveInstructionPolicy::CollectiveInstructionPolicy(std::string name,
                                                         std::vector<TensorBytes> reads,
                                                         std::vector<TensorBytes> writes,
                                                         vm::BlobPtr order, Fn fn,
                                                         std::shared_ptr<Work> work)
    : name_(std::move(name)),
      reads_(std::move(reads)),
      writes_(std::move(writes)),
      order_(std::move(order)),
      fn_(std::move(fn)),
      work_(std::move(work)) {
  AddDependences();
}

CollectiveInstructionPolicy::CollectiveInstructionPolicy(std::string name,
                                                         std::vector<TensorBytes> reads,
                                                         std::vector<TensorBytes> writes,
                                                         vm::BlobPtr order, DeviceFn fn,
                                                         std::shared_ptr<Work> work)
    : name_(std::move(name)),
      reads_(std::move(reads)),
      writes_(std::move(writes)),
      order_(std::move(order)),
      device_fn_(std::move(fn)),
      work_(std::move(work)) {
  AddDependences();
}

void CollectiveInstructionPolicy::AddDependences() {
  auto add = [](vm::DependenceVector* v, vm::Dependence* d) {
    for (vm::Dependence* e : *v)
      if (e == d) return;
    v->push_back(d);
  };
  for (auto& r : reads_) add(&in_, r.blob->dependence());
  for (auto& w : writes_) add(&out_, w.blob->dependence());
  add(&out_, order_->dependence());
}

CollectiveInstructionPolicy::~CollectiveInstructionPolicy() {
  if (!work_) return;
  if (!ran_ && result_.ok())
    result_ = absl::AbortedError(absl::StrFormat(
        "[%s] not run: an input tensor carries the error of the work that produced it", name_));
  work_->Signal(result_);
}

namespace {
// The error exactly as the VM will record it (vm/instruction.cc: "[name] " once, then the
// instruction id), so Work::Wait can tell the VM that the user has seen it.
Status AsRecorded(const Status& s, const std::string& name, const vm::Instruction& instr) {
  if (s.ok()) return s;
  std::string msg(s.message());
  if (msg.rfind("[" + name + "]", 0) != 0) msg = absl::StrCat("[", name, "] ", msg);
  return Status(s.code(), absl::StrCat(msg, " (in instruction #", instr.id(), ")"));
}
}  // namespace

Status CollectiveInstructionPolicy::Prepare(vm::Instruction* instr) {
  Status st;
  for (auto& t : reads_) st.Update(t.blob->EnsureAllocated());
  for (auto& t : writes_) st.Update(t.blob->EnsureAllocated());
  result_ = AsRecorded(st, name_, *instr);
  return st;
}

Status CollectiveInstructionPolicy::Compute(vm::Instruction* instr) {
  ran_ = true;
  Status st;
  try {
    if (device_fn_)
      st = device_fn_(instr->stream()->policy()->device_stream(), work_.get(), reads_, writes_);
    else
      st = fn_(reads_, writes_);
  } catch (const std::exception& e) {
    st = Internal("[%s] %s", name_, e.what());
  }
  result_ = AsRecorded(st, name_, *instr);
  return st;
}

}  // namespace distributed
}  // namespace oneflow_like
