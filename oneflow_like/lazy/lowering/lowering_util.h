// Helpers shared by the per-family lowerings.
#pragma once
#include <vector>

#include "oneflow_like/lazy/lower.h"

namespace oneflow_like {
namespace lazy {

// `h` (shape `from`) broadcast NumPy-style to `to`.
StatusOr<hlo::HloInstruction*> BroadcastTo(LowerCtx& ctx, hlo::HloInstruction* h, const Shape& from,
                                           const Shape& to);
// The boolean environment variable `name`: `default_on` when unset or "", false for "0", true
// otherwise (read at each call: flag-gated lowerings check it when a graph is traced).
bool EnvFlag(const char* name, bool default_on = false);
// A scalar constant of `t` broadcast to `shape`.
StatusOr<hlo::HloInstruction*> Splat(LowerCtx& ctx, DType t, double v, const Shape& shape);
// The inputs of `op` broadcast to `shape` (dtypes unchanged).
StatusOr<std::vector<hlo::HloInstruction*>> BroadcastInputs(LowerCtx& ctx, const TracedOp& op,
                                                            const Shape& shape);
// `h` reversed along `dim` (the IR has no reverse: size-1 slices concatenated in reverse order).
StatusOr<hlo::HloInstruction*> ReverseDim(LowerCtx& ctx, hlo::HloInstruction* h, int64_t dim);
// The dtypes whose kernels the float lowerings reproduce (f16/bf16 have no codegen).
inline bool IsF32OrF64(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}

// Small expression builder over one output meta: every value has the output's shape and dtype.
// The first error is kept in `status`; later calls return nullptr.
struct ExprBuilder {
  LowerCtx& ctx;
  const TensorMeta& m;
  Status status;
  hlo::HloInstruction* Ok(StatusOr<hlo::HloInstruction*> r) {
    if (!r.ok()) {
      if (status.ok()) status = r.status();
      return nullptr;
    }
    return *r;
  }
  hlo::HloInstruction* C(double v) { return Ok(Splat(ctx, m.dtype, v, m.shape)); }
  hlo::HloInstruction* U(hlo::HloOpcode op, hlo::HloInstruction* x) {
    return status.ok() ? Ok(ctx.b().Unary(op, x)) : nullptr;
  }
  hlo::HloInstruction* B(hlo::HloOpcode op, hlo::HloInstruction* x, hlo::HloInstruction* y) {
    return status.ok() ? Ok(ctx.b().Binary(op, x, y)) : nullptr;
  }
  hlo::HloInstruction* Add(hlo::HloInstruction* x, hlo::HloInstruction* y) {
    return B(hlo::HloOpcode::kAdd, x, y);
  }
  hlo::HloInstruction* Sub(hlo::HloInstruction* x, hlo::HloInstruction* y) {
    return B(hlo::HloOpcode::kSubtract, x, y);
  }
  hlo::HloInstruction* Mul(hlo::HloInstruction* x, hlo::HloInstruction* y) {
    return B(hlo::HloOpcode::kMultiply, x, y);
  }
  hlo::HloInstruction* Div(hlo::HloInstruction* x, hlo::HloInstruction* y) {
    return B(hlo::HloOpcode::kDivide, x, y);
  }
  hlo::HloInstruction* Cmp(hlo::HloInstruction* x, hlo::HloInstruction* y,
                           hlo::ComparisonDirection d) {
    return status.ok() ? Ok(ctx.b().Compare(x, y, d)) : nullptr;
  }
  hlo::HloInstruction* Sel(hlo::HloInstruction* p, hlo::HloInstruction* x, hlo::HloInstruction* y) {
    return status.ok() ? Ok(ctx.b().Select(p, x, y)) : nullptr;
  }
  hlo::HloInstruction* Sigmoid(hlo::HloInstruction* x) {
    return U(hlo::HloOpcode::kLogistic, x);
  }  // 1 / (1 + exp(-x))
  // Sets output 0 of `op` to `r`, or returns the first error.
  Status Set(const TracedOp& op, hlo::HloInstruction* r) {
    RETURN_IF_ERROR(status);
    if (r == nullptr) return Internal("[lower %s] no result", op.op->name);
    ctx.set(op, 0, r);
    return Status();
  }
};

}  // namespace lazy
}  // namespace oneflow_like
