// Helpers shared by the per-family lowerings.
#pragma once
#include "oneflow_like/lazy/lower.h"

namespace oneflow_like {
namespace lazy {

// `h` (shape `from`) broadcast NumPy-style to `to`.
StatusOr<hlo::HloInstruction*> BroadcastTo(LowerCtx& ctx, hlo::HloInstruction* h, const Shape& from, const Shape& to);
// A scalar constant of `t` broadcast to `shape`.
StatusOr<hlo::HloInstruction*> Splat(LowerCtx& ctx, DType t, double v, const Shape& shape);

}  // namespace lazy
}  // namespace oneflow_like
