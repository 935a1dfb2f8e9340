// In-place dispatch into several targets at once, for the eager-only ops without a gradient that
// update a list of tensors in one kernel (the fused GradScaler ops of ops/amp.cc: every grad
// unscaled and found_inf set by one kernel call). Kept out of op.h so that adding it did not
// recompile every includer of op.h; it belongs there the next time op.h changes anyway.
#pragma once
#include "oneflow_like/framework/op.h"

namespace oneflow_like {

// Runs `op` on `inputs` and writes its outputs into `outs` (shapes and dtypes as inferred; a
// target may also be an input, read before it is written by the same kernel). The op has no
// gradient: a target or input that requires grad while grad mode is on is an error, as is a
// graph trace (eager only). Every tensor must be contiguous and on one device; the kernels take
// every dtype the op's schema accepts (no f32 round trip for f16/bf16). Bumps each target's
// version once.
Status DispatchInplaceMulti(const OpDef& op, TensorSpan inputs, const AttrMap& attrs,
                            TensorSpan outs);

}  // namespace oneflow_like
