// External custom-call targets: a layer above the compiler (the lazy runtime) registers a
// handler for a target prefix; custom-calls whose target starts with it run that handler on
// row-major buffers. This keeps compiler/ free of any dependency on the op library while graphs
// can still call every kernel it has.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "oneflow_like/base/shape.h"

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
