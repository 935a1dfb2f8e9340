// Lowerings of the shape, reduce and creation families' core ops (reshape..full, slicing views and
// their scatter gradients, cat, flip, tril/triu); arange/linspace/eye are in creation.cc. The shape
// ops' attributes are read as the structs of oneflow_like/opdefs/shape.def.
#include <algorithm>
#include <optional>

#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/creation.h"
#include "oneflow_like/opdefs/reduce.h"
#include "oneflow_like/opdefs/shape.h"

namespace oneflow_like {
namespace lazy {
namespace {

using opdefs::ReadAttrs;

Status LowerReshape(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reshape(ctx.in(op, 0), ctx.out_meta(op, 0).shape.dims()));
  ctx.set(op, 0, r);
  return Status();
}

Status LowerExpand(LowerCtx& ctx, const TracedOp& op) {
  ASSIGN_OR_RETURN(auto* r, BroadcastTo(ctx, ctx.in(op, 0), ctx.in_meta(op, 0).shape,
                                        ctx.out_meta(op, 0).shape));
  ctx.set(op, 0, r);
  return Status();
}

// transpose(dot(a, b)) of a 2-D dot nothing else uses yet -> dot(b, a) with the contracting
// dims swapped ((A B)^T = B^T A^T, the transposes folded into the GEMM): autograd's weight
// gradient of a linear layer is exactly this, and a strided transpose of it costs more than
// the GEMM. (Should the first dot gain a user later, both are computed: correct, just slower.)
StatusOr<hlo::HloInstruction*> TransposedDot(LowerCtx& ctx, hlo::HloInstruction* x,
                                             const std::vector<int64_t>& p) {
  if (x->opcode() != hlo::HloOpcode::kDot || x->user_count() != 0 || x->shape().rank() != 2 ||
      p.size() != 2 || p[0] != 1 || p[1] != 0)
    return nullptr;
  const hlo::DotDims& d = x->attrs().dot;
  if (!d.lhs_batch.empty() || d.lhs_contracting.size() != 1) return nullptr;
  hlo::DotDims t;
  t.lhs_contracting = d.rhs_contracting;
  t.rhs_contracting = d.lhs_contracting;
  return ctx.b().Dot(x->operand(1), x->operand(0), t);
}

Status LowerPermute(LowerCtx& ctx, const TracedOp& op) {
  const auto p = ReadAttrs<opdefs::PermuteAttrs>(op.attrs).perm;
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
StatusOr<hlo::HloInstruction*> ColumnSumAsDot(LowerCtx& ctx, hlo::HloInstruction* x,
                                              const Shape& in, const TensorMeta& out,
                                              const std::vector<int64_t>& dims) {
  if ((out.dtype != DType::kF32 && out.dtype != DType::kF64) || dims.empty() ||
      static_cast<int64_t>(dims.size()) >= in.ndim())
    return nullptr;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return nullptr;
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < in.ndim(); ++i)
    (i < static_cast<int64_t>(dims.size()) ? rows : cols) *= in[i];
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
  if (ctx.in_meta(op, 0).dtype != m.dtype) {
    ASSIGN_OR_RETURN(x, ctx.b().Convert(x, m.dtype));
  }
  const auto dims = opdefs::ReadAttrs<opdefs::ReduceAttrs>(op.attrs).dims;
  ASSIGN_OR_RETURN(auto* col, ColumnSumAsDot(ctx, x, ctx.in_meta(op, 0).shape, m, dims));
  if (col) {
    ctx.set(op, 0, col);
    return Status();
  }
  // Reducing trailing dims and leading ones (a conv bias gradient: [N, C, H, W] -> [C]): the
  // trailing block first, as contiguous row sums, then the rest from the much smaller result;
  // one reduction would walk each output's elements with the row stride.
  const int64_t nd = ctx.in_meta(op, 0).shape.ndim();
  std::vector<int64_t> sorted(dims.begin(), dims.end());
  std::sort(sorted.begin(), sorted.end());
  size_t trailing = 0;
  while (trailing < sorted.size() &&
         sorted[sorted.size() - 1 - trailing] == nd - 1 - static_cast<int64_t>(trailing))
    ++trailing;
  DimVector rest(sorted.begin(), sorted.end());
  if (trailing > 0 && trailing < sorted.size()) {
    DimVector inner(sorted.end() - trailing, sorted.end());
    ASSIGN_OR_RETURN(x, ctx.b().Reduce(x, ctx.Scalar(m.dtype, 0.0), inner, hlo::ReduceKind::kAdd));
    rest.assign(sorted.begin(), sorted.end() - trailing);
  }
  ASSIGN_OR_RETURN(auto* r,
                   ctx.b().Reduce(x, ctx.Scalar(m.dtype, 0.0), rest, hlo::ReduceKind::kAdd));
  if (op.attrs.Bool("keepdim")) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, m.shape.dims()));
  }
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
  int64_t d = 0;
  hlo::SliceDim cut;
  if (is_select) {
    const auto a = ReadAttrs<opdefs::SelectAttrs>(op.attrs);
    d = a.dim;
    cut = hlo::SliceDim{a.index, a.index + 1, 1};
  } else {
    const auto a = ReadAttrs<opdefs::SliceAttrs>(op.attrs);
    const int64_t start = a.start, length = a.length, step = a.step;
    d = a.dim;
    cut = hlo::SliceDim{start, length > 0 ? start + (length - 1) * step + 1 : start, step};
  }
  std::vector<hlo::SliceDim> sl(in.ndim());
  for (int64_t i = 0; i < in.ndim(); ++i) sl[i] = hlo::SliceDim{0, in[i], 1};
  sl[d] = cut;
  ASSIGN_OR_RETURN(auto* r, ctx.b().Slice(ctx.in(op, 0), sl));
  if (r->shape().dims() != ctx.out_meta(op, 0).shape.dims()) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, ctx.out_meta(op, 0).shape.dims()));
  }
  ctx.set(op, 0, r);
  return Status();
}

// A strided window (shape, strides, offset) over a contiguous `base` that is a box of it: every
// view dim of size > 1 walks one base dim (in base order) with a positive step, the offset picks
// the box's corner. Returns the box per base dim, or nothing for other windows (overlapping,
// permuted or out-of-range ones stay kernel calls).
std::optional<std::vector<hlo::SliceDim>> WindowAsBox(const Shape& base, const Shape& view,
                                                      const std::vector<int64_t>& strides,
                                                      int64_t offset) {
  const int64_t nb = base.ndim();
  DimVector bstride(nb, 1);
  for (int64_t j = nb - 2; j >= 0; --j) bstride[j] = bstride[j + 1] * base[j + 1];
  std::vector<hlo::SliceDim> box(nb);
  std::vector<int64_t> len(nb, 1), step(nb, 1);
  int64_t next = 0;  // base dims before `next` are taken
  for (int64_t k = 0; k < view.ndim(); ++k) {
    if (view[k] == 1) continue;
    if (view[k] == 0 || strides[k] <= 0) return std::nullopt;
    int64_t j = next;
    while (j < nb && !(strides[k] % bstride[j] == 0 &&
                       strides[k] / bstride[j] < std::max<int64_t>(base[j], 2)))
      ++j;
    if (j == nb) return std::nullopt;
    len[j] = view[k];
    step[j] = strides[k] / bstride[j];
    next = j + 1;
  }
  if (offset < 0) return std::nullopt;
  for (int64_t j = 0; j < nb; ++j) {
    const int64_t start = (offset / bstride[j]) % std::max<int64_t>(base[j], 1);
    offset -= start * bstride[j];
    const int64_t limit = start + (len[j] - 1) * step[j] + 1;
    if (limit > base[j]) return std::nullopt;
    box[j] = hlo::SliceDim{start, limit, step[j]};
  }
  if (offset != 0) return std::nullopt;
  return box;
}

// as_strided(x; shape, strides, offset) of a box of x -> slice + reshape.
Status LowerAsStrided(LowerCtx& ctx, const TracedOp& op) {
  const Shape& view = ctx.out_meta(op, 0).shape;
  const auto a = ReadAttrs<opdefs::AsStridedAttrs>(op.attrs);
  auto box = WindowAsBox(ctx.in_meta(op, 0).shape, view, a.strides, a.offset);
  if (!box) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(auto* r, ctx.b().Slice(ctx.in(op, 0), *box));
  ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, view.dims()));
  ctx.set(op, 0, r);
  return Status();
}

// as_strided_scatter(src; in_shape, ...) into a box of zeros(in_shape) -> a pad of src (the
// backward of slicing q/k/v out of a packed projection: three pads and two adds fuse into one
// loop instead of three scatter kernels).
Status LowerAsStridedScatter(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& out = ctx.out_meta(op, 0);
  const auto a = ReadAttrs<opdefs::AsStridedScatterAttrs>(op.attrs);
  auto box = WindowAsBox(out.shape, ctx.in_meta(op, 0).shape, a.strides, a.offset);
  if (!box) return ctx.LowerAsKernelCall(op);
  DimVector box_dims;
  std::vector<hlo::PadDim> pad;
  for (int64_t j = 0; j < out.shape.ndim(); ++j) {
    const hlo::SliceDim& b = (*box)[j];
    const int64_t n = (b.limit - b.start + b.stride - 1) / b.stride;
    box_dims.push_back(n);
    pad.push_back(
        hlo::PadDim{b.start, out.shape[j] - (b.start + (n - 1) * b.stride + 1), b.stride - 1});
  }
  ASSIGN_OR_RETURN(auto* r, ctx.b().Reshape(ctx.in(op, 0), box_dims));
  ASSIGN_OR_RETURN(r, ctx.b().Pad(r, ctx.Scalar(out.dtype, 0.0), pad));
  ctx.set(op, 0, r);
  return Status();
}

// full / fill_ (FullAttrs, opdefs/creation.def): the value splat to the output.
Status LowerFull(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  const double value = opdefs::ReadAttrs<opdefs::FullAttrs>(op.attrs).value;
  ASSIGN_OR_RETURN(auto* r, Splat(ctx, m.dtype, value, m.shape));
  ctx.set(op, 0, r);
  return Status();
}

// cat(xs...; dim) -> concatenate (inputs share the dtype; empty ones are dropped).
Status LowerCat(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  const int64_t dim = ReadAttrs<opdefs::CatAttrs>(op.attrs).dim;
  std::vector<hlo::HloInstruction*> parts;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const TensorMeta& in = ctx.in_meta(op, static_cast<int>(i));
    if (in.dtype != m.dtype || in.shape.ndim() != m.shape.ndim()) return ctx.LowerAsKernelCall(op);
    if (in.shape.numel() > 0) parts.push_back(ctx.in(op, static_cast<int>(i)));
  }
  hlo::HloInstruction* r = nullptr;
  if (parts.empty()) {
    ASSIGN_OR_RETURN(r, Splat(ctx, m.dtype, 0.0, m.shape));
  } else if (parts.size() == 1)
    r = parts[0];
  else {
    ASSIGN_OR_RETURN(r, ctx.b().Concatenate(parts, dim));
  }
  ctx.set(op, 0, r);
  return Status();
}

// flip(x; dims): each dim reversed. The IR has no reverse, so a reversal is a concatenate of
// size-1 slices; dims longer than kMaxFlipLength keep the kernel call (one slice per element).
constexpr int64_t kMaxFlipLength = 64;
Status LowerFlip(LowerCtx& ctx, const TracedOp& op) {
  const Shape& s = ctx.in_meta(op, 0).shape;
  const auto dims = ReadAttrs<opdefs::FlipAttrs>(op.attrs).dims;
  for (int64_t d : dims)
    if (s[d] > kMaxFlipLength) return ctx.LowerAsKernelCall(op);
  hlo::HloInstruction* r = ctx.in(op, 0);
  for (int64_t d : dims) {
    ASSIGN_OR_RETURN(r, ReverseDim(ctx, r, d));
  }
  ctx.set(op, 0, r);
  return Status();
}

// tril/triu(x; diagonal k, upper) over the last two dims (i, j): keep x where j - i <= k (tril)
// or j - i >= k (triu), else 0.
Status LowerTril(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (m.dtype == DType::kF16 || m.dtype == DType::kBF16)
    return ctx.LowerAsKernelCall(op);  // no f16 codegen
  const auto a = ReadAttrs<opdefs::TrilAttrs>(op.attrs);
  const int64_t nd = m.shape.ndim();
  const hlo::HloShape idx(DType::kI64, m.shape.dims());
  ASSIGN_OR_RETURN(auto* i, ctx.b().Iota(idx, nd - 2));
  ASSIGN_OR_RETURN(auto* j, ctx.b().Iota(idx, nd - 1));
  ASSIGN_OR_RETURN(auto* diff, ctx.b().Binary(hlo::HloOpcode::kSubtract, j, i));
  ASSIGN_OR_RETURN(auto* k, Splat(ctx, DType::kI64, static_cast<double>(a.diagonal), m.shape));
  ASSIGN_OR_RETURN(auto* keep, ctx.b().Compare(diff, k,
                                               a.upper ? hlo::ComparisonDirection::kGe
                                                       : hlo::ComparisonDirection::kLe));
  ASSIGN_OR_RETURN(auto* zero, Splat(ctx, m.dtype, 0.0, m.shape));
  ASSIGN_OR_RETURN(auto* r, ctx.b().Select(keep, ctx.in(op, 0), zero));
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
OFL_REGISTER_LOWERING(slice,
                      [](LowerCtx& c, const TracedOp& o) { return LowerSliceView(c, o, false); });
OFL_REGISTER_LOWERING(select,
                      [](LowerCtx& c, const TracedOp& o) { return LowerSliceView(c, o, true); });
OFL_REGISTER_LOWERING(fill_, LowerFull);
OFL_REGISTER_LOWERING(as_strided, LowerAsStrided);
OFL_REGISTER_LOWERING(as_strided_scatter, LowerAsStridedScatter);
OFL_REGISTER_LOWERING(cat, LowerCat);
OFL_REGISTER_LOWERING(flip, LowerFlip);
OFL_REGISTER_LOWERING(tril, LowerTril);

}  // namespace lazy
}  // namespace oneflow_like
