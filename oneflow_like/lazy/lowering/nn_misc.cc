// Lowerings of the NN miscellany family: dropout as fusible HLO. embedding and embedding_grad keep
// their kernel calls: HLO gather clamps an out-of-range index the kernel rejects with an error, and
// gather/scatter have no CPU kernel (evaluator fallback: orders of magnitude slower than the row
// copies).
#include <algorithm>
#include <cmath>

#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/nn_misc.h"

namespace oneflow_like {
namespace lazy {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// A 32-bit integer hash with good avalanche (xor-shift-multiply, "lowbias32" constants) in
// wrapping s32 arithmetic: the same ops on a scalar or on every element of a tensor.
StatusOr<HloInstruction*> Hash32(LowerCtx& ctx, HloInstruction* h, const Shape& shape) {
  auto c = [&](int64_t v) {
    return Splat(ctx, DType::kI32, static_cast<double>(static_cast<int32_t>(v)), shape);
  };
  auto xorshift = [&](HloInstruction* x, int64_t s) -> StatusOr<HloInstruction*> {
    ASSIGN_OR_RETURN(HloInstruction * k, c(s));
    ASSIGN_OR_RETURN(HloInstruction * sh, ctx.b().Binary(HloOpcode::kShiftRightLogical, x, k));
    return ctx.b().Binary(HloOpcode::kXor, x, sh);
  };
  auto mul = [&](HloInstruction* x, uint32_t k) -> StatusOr<HloInstruction*> {
    ASSIGN_OR_RETURN(HloInstruction * kc, c(static_cast<int32_t>(k)));
    return ctx.b().Binary(HloOpcode::kMultiply, x, kc);
  };
  ASSIGN_OR_RETURN(h, xorshift(h, 16));
  ASSIGN_OR_RETURN(h, mul(h, 0x7feb352dU));
  ASSIGN_OR_RETURN(h, xorshift(h, 15));
  ASSIGN_OR_RETURN(h, mul(h, 0x846ca68bU));
  return xorshift(h, 16);
}

// dropout(x; p, seed) -> select(keep, x * 1/(1-p), 0) with keep = hash(i ^ hash(run seed ^ seed))
// >> 1 >= p * 2^31 for the element's linear index i. The run seed is the module's seed
// parameter (fresh each run); the op's gradient is dropout with the same attrs, so it computes
// the same mask. The mask is not the eager kernel's stream (a graph draws different numbers from
// eager mode anyway), but it is the same Bernoulli(1 - p) per element, and it fuses with the
// producer and consumer loops instead of costing a kernel call and two passes over memory.
Status LowerDropout(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  const opdefs::DropoutAttrs a = opdefs::ReadAttrs<opdefs::DropoutAttrs>(op.attrs);
  const double p = a.p;
  if ((m.dtype != DType::kF32 && m.dtype != DType::kF64) || m.shape.numel() >= (int64_t{1} << 31) ||
      !(p >= 0.0))
    return ctx.LowerAsKernelCall(op);
  if (p >= 1.0) {  // everything dropped (the kernel's scale is 0 too)
    ASSIGN_OR_RETURN(auto* z, Splat(ctx, m.dtype, 0.0, m.shape));
    ctx.set(op, 0, z);
    return Status();
  }
  const uint64_t traced = static_cast<uint64_t>(a.seed);
  const int32_t traced32 = static_cast<int32_t>(static_cast<uint32_t>(traced ^ (traced >> 32)));
  ASSIGN_OR_RETURN(HloInstruction * s, ctx.b().Binary(HloOpcode::kXor, ctx.RngSeed(),
                                                      ctx.Scalar(DType::kI32, traced32)));
  ASSIGN_OR_RETURN(s, Hash32(ctx, s, Shape{}));
  ASSIGN_OR_RETURN(HloInstruction * idx,
                   ctx.b().Iota(hlo::HloShape(DType::kI32, {m.shape.numel()}), 0));
  ASSIGN_OR_RETURN(idx, ctx.b().Reshape(idx, m.shape.dims()));
  ASSIGN_OR_RETURN(HloInstruction * sb, ctx.b().Broadcast(s, m.shape.dims(), {}));
  ASSIGN_OR_RETURN(HloInstruction * h, ctx.b().Binary(HloOpcode::kXor, idx, sb));
  ASSIGN_OR_RETURN(h, Hash32(ctx, h, m.shape));
  ASSIGN_OR_RETURN(HloInstruction * one, Splat(ctx, DType::kI32, 1.0, m.shape));
  ASSIGN_OR_RETURN(HloInstruction * u,
                   ctx.b().Binary(HloOpcode::kShiftRightLogical, h, one));  // [0, 2^31)
  const double thr = std::min(std::ceil(p * 2147483648.0), 2147483647.0);
  ASSIGN_OR_RETURN(HloInstruction * t, Splat(ctx, DType::kI32, thr, m.shape));
  ASSIGN_OR_RETURN(HloInstruction * keep, ctx.b().Compare(u, t, hlo::ComparisonDirection::kGe));
  // Same arithmetic as the kernel: x * scale with scale = 1 / (1 - p) rounded to the dtype.
  ASSIGN_OR_RETURN(HloInstruction * scale, Splat(ctx, m.dtype, 1.0 / (1.0 - p), m.shape));
  ASSIGN_OR_RETURN(HloInstruction * xs, ctx.b().Binary(HloOpcode::kMultiply, ctx.in(op, 0), scale));
  ASSIGN_OR_RETURN(HloInstruction * zero, Splat(ctx, m.dtype, 0.0, m.shape));
  ASSIGN_OR_RETURN(HloInstruction * out, ctx.b().Select(keep, xs, zero));
  ctx.set(op, 0, out);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(dropout, LowerDropout);

}  // namespace lazy
}  // namespace oneflow_like
