#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {

StatusOr<hlo::HloInstruction*> BroadcastTo(LowerCtx& ctx, hlo::HloInstruction* h, const Shape& from, const Shape& to) {
  if (from == to) return h;
  int64_t lead = to.ndim() - from.ndim();
  DimVector kept_dims, mapping;
  for (int64_t i = 0; i < from.ndim(); ++i) {
    if (from[i] == to[i + lead]) {
      kept_dims.push_back(from[i]);
      mapping.push_back(i + lead);
    }
  }
  hlo::HloInstruction* r = h;
  if (kept_dims.size() != static_cast<size_t>(from.ndim())) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(h, kept_dims));
  }
  return ctx.b().Broadcast(r, to.dims(), mapping);
}

StatusOr<hlo::HloInstruction*> Splat(LowerCtx& ctx, DType t, double v, const Shape& shape) {
  hlo::HloInstruction* c = ctx.Scalar(t, v);
  if (shape.ndim() == 0) return c;
  return ctx.b().Broadcast(c, shape.dims(), {});
}

}  // namespace lazy
}  // namespace oneflow_like
