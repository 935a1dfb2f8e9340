// Mixed precision at the one dispatch point: f16/bf16 compute for ops whose kernels take only
// f32/f64 (inputs cast up, outputs cast back, as PyTorch's CPU kernels compute in float), and
// autocast (torch.autocast): per-thread, per-device-type state that casts an op's floating
// inputs by PyTorch's op lists before the op runs. Both are applied by Dispatch, nowhere else.
#pragma once
#include <atomic>
#include <optional>

#include "oneflow_like/framework/tensor.h"

namespace oneflow_like {

struct OpDef;

struct AutocastState {
  bool enabled = false;
  DType dtype = DType::kBF16;  // the lower precision type of the region
  bool cache_enabled = true;
};
// The calling thread's state for `device` (CPU or CUDA); regions set and restore it.
AutocastState GetAutocastState(DeviceType device);
void SetAutocastState(DeviceType device, const AutocastState& state);
// Nesting depth of autocast regions on this thread; leaving the outermost clears the cache.
int AutocastIncrementNesting();
int AutocastDecrementNesting();
// Drops the weight-cast cache (leaf tensors that require grad, cast once per region).
void ClearAutocastCache();

// Suspends autocast on this thread (the autograd engine runs backward formulas under it).
class AutocastSuspend {
 public:
  AutocastSuspend();
  ~AutocastSuspend();
  AutocastSuspend(const AutocastSuspend&) = delete;
  AutocastSuspend& operator=(const AutocastSuspend&) = delete;

 private:
  bool prev_;
};

// How autocast treats an op (PyTorch's lists, by device type): run in the region's lower
// precision, in f32, in the widest input type, or unchanged.
enum class AutocastPolicy { kNone, kLower, kF32, kPromote };
AutocastPolicy AutocastPolicyOf(const char* op_name, DeviceType device);

// Autocast states enabled on any thread: Dispatch skips the autocast lookup while there are none
// (a thread always sees its own enabling).
extern std::atomic<int> g_autocast_enabled_states;
inline bool AutocastMaybeActive() {
  return g_autocast_enabled_states.load(std::memory_order_relaxed) != 0;
}

// The inputs `op` runs on under the active autocast region, or nullopt when nothing changes.
StatusOr<std::optional<TensorList>> AutocastInputs(const OpDef& op, TensorSpan inputs);
// The same for a composite functional entry (a loss written with other ops) named as PyTorch's
// op is: its floating inputs cast to what the lists say; unchanged tensors are returned as they
// are.
StatusOr<TensorList> AutocastArgs(const char* op_name, const TensorList& inputs);

// True when `op` must compute the f16/bf16 inputs in f32: its kernels on that device take only
// f32/f64. Sets *low to the low precision type (the outputs' type).
bool NeedsF32Compute(const OpDef& op, TensorSpan inputs, DType* low);

}  // namespace oneflow_like
