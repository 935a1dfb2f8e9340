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

}  // namespace oneflow_like::hlo
