// Stream policies of the CPU: compute (a worker thread; small work may run inline on the
// caller's thread) and control (inline wherever the instruction becomes ready).
#pragma once
#include "vm/stream.h"

namespace oneflow_like {
namespace vm {

class CpuStreamPolicy : public StreamPolicy {
 public:
  explicit CpuStreamPolicy(bool allow_inline) : allow_inline_(allow_inline) {}
  bool AllowsInlineSmall() const override { return allow_inline_; }

 private:
  bool allow_inline_;
};

class ControlStreamPolicy : public StreamPolicy {
 public:
  bool RunsInline() const override { return true; }
};

}  // namespace vm
}  // namespace oneflow_like
