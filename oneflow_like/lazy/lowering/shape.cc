// Lowerings of the shape, reduce and creation families' core ops.
#include "oneflow_like/lazy/lowering/lowering_util.h"

namespace oneflow_like {
namespace lazy {
namespace {

Status LowerReshape(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reshape(ctx.in(op, 0), ctx.out_meta(op, 0).shape.dims()));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerExpand(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape, ctx.out_meta(op, 0).shape));
  ctx.set(op, 0, r);
  return Status();
}

// transpose(dot(a, b)) of a 2-D dot nothing else uses yet -> dot(b, a) with the contracting
// dims swapped ((A B)^T = B^T A^T, the transposes folded into the GEMM): autograd's weight
// gradient of a linear layer is exactly this, and a strided transpose of it costs more than
// the GEMM. (Should the first dot gain a user later, both are computed: correct, just slower.)
StatusOr<hlo::HloInstruction*> TransposedDot(LowerCtx& ctx, hlo::HloInstruction* x, const std::vector<int64_t>& p) {
  if (x->opcode() != hlo::HloOpcode::kDot || x->user_count() != 0 || x->shape().rank() != 2 || p.size() != 2 ||
      p[0] != 1 || p[1] != 0)
    return nullptr;
  const hlo::DotDims& d = x->attrs().dot;
  if (!d.lhs_batch.empty() || d.lhs_contracting.size() != 1) return nullptr;
  hlo::DotDims t;
  t.lhs_contracting = d.rhs_contracting;
  t.rhs_contracting = d.lhs_contracting;
  return ctx.b().Dot(x->operand(1), x->operand(0), t);
}

Status LowerPermute(LowerCtx& ctx, const TracedOp& op) {
  const auto& p = op.attrs.Ints("perm");
  ASSIGN_OR_RETURN(auto* swapped, TransposedDot(ctx, ctx.in(op, 0), p));
  if (swapped) {
    ctx.set(op, 0, swapped);
    return Status();
  }
  ASSIGN_OR_RETURN(auto* r, ctx.b().Transpose(ctx.in(op, 0), DimVector(p.begin(), p.end())));
  ctx.set(op, 0, r);
  return Status();
}

// A sum over the leading dims of a large float tensor (a bias gradient: [rows, cols] -> [cols])
// as ones[1, rows] x X[rows, cols] on the GEMM: the fused-loop emitter reduces one output at a
// time, which walks such a reduction column-wise (stride cols) through memory.
StatusOr<hlo::HloInstruction*> ColumnSumAsDot(LowerCtx& ctx, hlo::HloInstruction* x, const Shape& in,
                                              const TensorMeta& out, const std::vector<int64_t>& dims) {
  if ((out.dtype != DType::kF32 && out.dtype != DType::kF64) || dims.empty() ||
      static_cast<int64_t>(dims.size()) >= in.ndim())
    return nullptr;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return nullptr;
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < in.ndim(); ++i) (i < static_cast<int64_t>(dims.size()) ? rows : cols) *= in[i];
  if (rows < 64 || cols < 64) return nullptr;
  ASSIGN_OR_RETURN(auto* x2, ctx.b().Reshape(x, {rows, cols}));
  ASSIGN_OR_RETURN(auto* ones, Splat(ctx, out.dtype, 1.0, Shape{1, rows}));
  hlo::DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  ASSIGN_OR_RETURN(auto* dot, ctx.b().Dot(ones, x2, d));
  return ctx.b().Reshape(dot, out.shape.dims());
}

Status LowerSum(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  hlo::HloInstruction* x = ctx.in(op, 0);
  if (ctx.in_meta(op, 0).dtype != m.dtype) { ASSIGN_OR_RETURN(x, ctx.b().Convert(x, m.dtype)); }
  const auto& dims = op.attrs.Ints("dims");
  ASSIGN_OR_RETURN(auto* col, ColumnSumAsDot(ctx, x, ctx.in_meta(op, 0).shape, m, dims));
  if (col) {
    ctx.set(op, 0, col);
    return Status();
  }
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reduce(x, ctx.Scalar(m.dtype, 0.0), DimVector(dims.begin(), dims.end()),
                                           hlo::ReduceKind::kAdd));
  if (op.attrs.Bool("keepdim")) { ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, m.shape.dims())); }
  ctx.set(op, 0, r);
  return Status();
}

// squeeze/unsqueeze: graph values are contiguous, so a view is a reshape to its shape.
Status LowerToOutShape(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reshape(ctx.in(op, 0), ctx.out_meta(op, 0).shape.dims()));
  ctx.set(op, 0, r);
  return Status();
}

// slice(x; dim, start, length, step) and select(x; dim, index) views -> an HLO slice (copies).
Status LowerSliceView(LowerCtx& ctx, const TracedOp& op, bool is_select) {
  const Shape& in = ctx.in_meta(op, 0).shape;
  const int64_t d = op.attrs.Int("dim");
  std::vector<hlo::SliceDim> sl(in.ndim());
  for (int64_t i = 0; i < in.ndim(); ++i) sl[i] = hlo::SliceDim{0, in[i], 1};
  if (is_select) {
    const int64_t index = op.attrs.Int("index");
    sl[d] = hlo::SliceDim{index, index + 1, 1};
  } else {
    const int64_t start = op.attrs.Int("start"), length = op.attrs.Int("length"), step = op.attrs.Int("step");
    sl[d] = hlo::SliceDim{start, length > 0 ? start + (length - 1) * step + 1 : start, step};
  }
  ASSIGN_OR_RETURN(auto* r, ctx.b().Slice(ctx.in(op, 0), sl));
  if (r->shape().dims() != ctx.out_meta(op, 0).shape.dims()) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, ctx.out_meta(op, 0).shape.dims()));
  }
  ctx.set(op, 0, r);
  return Status();
}

Status LowerFull(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  ASSIGN_OR_RETURN(auto* r, Splat(ctx, m.dtype, op.attrs.Float("value"), m.shape));
  ctx.set(op, 0, r);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(reshape, LowerReshape);
OFL_REGISTER_LOWERING(expand, LowerExpand);
OFL_REGISTER_LOWERING(permute, LowerPermute);
OFL_REGISTER_LOWERING(sum, LowerSum);
OFL_REGISTER_LOWERING(full, LowerFull);
OFL_REGISTER_LOWERING(squeeze, LowerToOutShape);
OFL_REGISTER_LOWERING(unsqueeze, LowerToOutShape);
OFL_REGISTER_LOWERING(slice, [](LowerCtx& c, const TracedOp& o) { return LowerSliceView(c, o, false); });
OFL_REGISTER_LOWERING(select, [](LowerCtx& c, const TracedOp& o) { return LowerSliceView(c, o, true); });
OFL_REGISTER_LOWERING(fill_, LowerFull);

}  // namespace lazy
}  // namespace oneflow_like
