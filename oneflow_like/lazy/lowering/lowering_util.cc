#include "oneflow_like/lazy/lowering/lowering_util.h"

#include <cstdlib>
#include <string>

namespace oneflow_like {
namespace lazy {

StatusOr<hlo::HloInstruction*> BroadcastTo(LowerCtx& ctx, hlo::HloInstruction* h, const Shape& from,
                                           const Shape& to) {
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

bool EnvFlag(const char* name, bool default_on) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return default_on;
  return std::string(v) != "0";
}

StatusOr<hlo::HloInstruction*> Splat(LowerCtx& ctx, DType t, double v, const Shape& shape) {
  hlo::HloInstruction* c = ctx.Scalar(t, v);
  if (shape.ndim() == 0) return c;
  return ctx.b().Broadcast(c, shape.dims(), {});
}

StatusOr<std::vector<hlo::HloInstruction*>> BroadcastInputs(LowerCtx& ctx, const TracedOp& op,
                                                            const Shape& shape) {
  std::vector<hlo::HloInstruction*> r;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    ASSIGN_OR_RETURN(auto* x, BroadcastTo(ctx, ctx.in(op, static_cast<int>(i)),
                                          ctx.in_meta(op, static_cast<int>(i)).shape, shape));
    r.push_back(x);
  }
  return r;
}

StatusOr<hlo::HloInstruction*> ReverseDim(LowerCtx& ctx, hlo::HloInstruction* h, int64_t dim) {
  const DimVector& dims = h->shape().dims();
  if (dims[dim] <= 1) return h;
  std::vector<hlo::HloInstruction*> parts;
  for (int64_t i = dims[dim] - 1; i >= 0; --i) {
    std::vector<hlo::SliceDim> sl;
    for (size_t k = 0; k < dims.size(); ++k)
      sl.push_back(static_cast<int64_t>(k) == dim ? hlo::SliceDim{i, i + 1, 1}
                                                  : hlo::SliceDim{0, dims[k], 1});
    ASSIGN_OR_RETURN(auto* s, ctx.b().Slice(h, sl));
    parts.push_back(s);
  }
  return ctx.b().Concatenate(parts, dim);
}

}  // namespace lazy
}  // namespace oneflow_like
