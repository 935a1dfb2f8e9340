// Lowerings of the index family: masked_fill (and masked_fill_, which a trace records as
// masked_fill + copy_, see ops/index.cc) -> select. one_hot, gather/scatter, index and
// index_put keep their kernel calls: they validate indices and raise, which HLO cannot. Reads
// the attribute structs of oneflow_like/opdefs/index.def.
#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/index.h"

namespace oneflow_like {
namespace lazy {
namespace {

// masked_fill(x, mask; value): mask ? static_cast<T>(value) : x (mask broadcast to x's shape).
Status LowerMaskedFill(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (m.dtype == DType::kF16 || m.dtype == DType::kBF16 || ctx.in_meta(op, 0).dtype != m.dtype)
    return ctx.LowerAsKernelCall(op);  // no f16/bf16 codegen
  ASSIGN_OR_RETURN(auto in, BroadcastInputs(ctx, op, m.shape));
  double value = opdefs::ReadAttrs<opdefs::MaskedFillAttrs>(op.attrs).value;
  ASSIGN_OR_RETURN(auto* v, Splat(ctx, m.dtype, value, m.shape));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Select(in[1], v, in[0]));
  ctx.set(op, 0, r);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(masked_fill, LowerMaskedFill);

}  // namespace lazy
}  // namespace oneflow_like
