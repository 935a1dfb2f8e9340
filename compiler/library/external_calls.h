// External custom-call targets: a layer above the compiler (the lazy runtime) registers a
// handler for a target prefix; custom-calls whose target starts with it run that handler on
// row-major buffers. This keeps compiler/ free of any dependency on the op library while graphs
// can still call every kernel it has.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/shape.h"
#include "oneflow_like/base/stream.h"

namespace oneflow_like::hlo {

struct ExternalBuffer {
  void* data;
  DType dtype;
  DimVector dims;
};

using ExternalCallFn = std::function<Status(const std::string& target, const std::string& config,
                                            absl::Span<const ExternalBuffer> operands,
                                            absl::Span<const ExternalBuffer> results)>;

void RegisterExternalCallPrefix(const std::string& prefix, ExternalCallFn fn);
// The handler for `target`, or null.
const ExternalCallFn* FindExternalCall(const std::string& target);

// The same calls on an accelerator (the GPU backend's library-call thunk): buffers are device
// addresses and `stream` is the runtime's stream of the device the executable runs on, whose
// native handle is the stream the run is enqueued on. `check` runs at compile time: OK when the
// target can run on devices of this type (its op has a kernel there), else the reason.
struct DeviceExternalCall {
  std::function<Status(const std::string& target)> check;
  std::function<Status(const std::string& target, const std::string& config,
                       absl::Span<const ExternalBuffer> operands,
                       absl::Span<const ExternalBuffer> results, oneflow_like::Stream* stream)>
      run;
};
void RegisterDeviceExternalCallPrefix(DeviceType type, const std::string& prefix,
                                      DeviceExternalCall call);
// The handler for `target` on devices of `type`, or null; it lives as long as the process.
const DeviceExternalCall* FindDeviceExternalCall(DeviceType type, const std::string& target);

// Asynchronous pairs (XLA's async start/done, as custom-calls): a call whose target ends in
// kAsyncStartSuffix starts work that goes on while the thunks after it run; its result buffer
// belongs to that work until the call ending in kAsyncDoneSuffix that takes the start's result as
// operand 0, which waits for it. The scheduler (passes/hlo_scheduler.cc) puts every start as
// early and every done as late as their operands and users allow, so the work overlaps the
// instructions between them.
inline constexpr const char* kAsyncStartSuffix = "_async_start";
inline constexpr const char* kAsyncDoneSuffix = "_async_done";
bool IsAsyncStartTarget(const std::string& target);
bool IsAsyncDoneTarget(const std::string& target);
// Handlers that start asynchronous work register a drain: called after every run of an
// executable, failed or not, it waits (bounded) for the work this thread started and no done
// collected, so no work outlives the run that owns its buffers.
void RegisterExternalCallDrain(std::function<void()> drain);
void DrainExternalCalls();

}  // namespace oneflow_like::hlo
