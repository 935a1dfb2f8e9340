// Lowering of the pooling family (oneflow_like/ops/pool.cc, kernels/cpu/pool.cc) to elementwise
// HLO for non-overlapping windows. The IR has no reduce-window or select-and-scatter, but when the
// windows tile the input (stride == kernel, no padding, no dilation, floor output: the extra rows
// and columns the eager kernel drops are dropped here too) every window tap (i, j) is one strided
// slice of x, x[:, :, i::kh, j::kw] cut to [N, C, OH, OW], and every op is a loop over the output:
//   max_pool2d       the kernel's running maximum over the taps in row-major order: a later tap
//                    wins if it is greater, or if it is NaN and the maximum so far is not (ties
//                    keep the first tap; the first NaN wins), as a chain of compare + select, which
//                    also carries the winning tap's offset i * W + j; indices = the window
//                    corner's flat index (oh * kh) * W + ow * kw plus that offset (s64).
//   max_pool2d_grad  dx[h, w] = dy[h / kh, w / kw] where indices[h / kh, w / kw] == h * W + w,
//                    else 0 (dy and indices broadcast over the window and reshaped to the
//                    covered [OH * kh, OW * kw] block, then padded with zeros to H x W). Exact for
//                    any indices the forward gave (lowered or kernel), ties included.
//   avg_pool2d       0 + x_(0,0) + x_(0,1) + ... in tap order, divided by kh * kw (or
//                    divisor_override): without padding count_include_pad does not matter.
//   avg_pool2d_grad  dy / divisor broadcast over the window, padded with zeros.
// The kernel stores 0 + v, so a gradient of -0 comes out +0 there and -0 here (equal as floats;
// the simplifier folds x + 0). Overlapping or padded windows, dilation, ceil_mode outputs
// larger than the floor's and dtypes other than f32/f64 keep the kernel call: expressing them
// needs a window op (or kh * kw overlapping scatters) the IR does not have.
//
// Off by default (ONEFLOW_LIKE_LOWER_POOLS=1 turns it on): on the CPU backend these loops are
// slower than the kernels (kernels/cpu/pool.cc, AVX2 2x2 path). Measured on the benchmark CNN's
// first pool (relu'd [64,32,26,26], 2x2, forward + backward, 1 thread, min of 30 graph runs):
// max pool 2.5-3.0 ms as kernel calls, 26.5 ms as HLO; avg pool 7.1-7.3 vs 8.6-8.9 ms. Why:
// the gradients write [H, W] rows from [OH, OW] values (w / kw inside the row), which the row
// codegen cannot make affine: the loop computes 64-bit index divisions per element and GCC's
// vectorised version of it (gathers) runs 7.6 ms where the scalar one runs 3.0 ms and the
// kernel 0.8 ms; the indices' chain fuses into that loop (each window recomputed kh * kw
// times); the forward rows are OW = 13 long with stride-2 loads; and priority fusion
// counts a tap slice as reading its whole operand, so taps shared by y's and the indices' loops
// (or the gradient's) are materialised instead of fused. Turn it on once the codegen handles
// rows of strided / interleaved accesses.
#include <cstdlib>
#include <string>

#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/pool.h"

namespace oneflow_like {
namespace lazy {
namespace {

using hlo::ComparisonDirection;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool PoolsAsHlo() {
  return EnvFlag("ONEFLOW_LIKE_LOWER_POOLS");
}

// x [N, C, H, W] pooled to [N, C, OH, OW] by kh x kw windows that tile its top-left corner.
struct Tiling {
  int64_t n, c, h, w, oh, ow, kh, kw;
  DimVector out() const { return {n, c, oh, ow}; }
  DimVector covered() const { return {n, c, oh * kh, ow * kw}; }
  DimVector window() const { return {n, c, oh, kh, ow, kw}; }
};

// Whether the op's windows tile x (x: the pooled input's shape, y: the pooled shape; the backward
// ops' PoolGradAttrs are read as PoolAttrs).
bool Tiles(const opdefs::PoolAttrs& a, const Shape& x, const Shape& y, DType t, Tiling* g) {
  if (t != DType::kF32 && t != DType::kF64) return false;
  if (x.ndim() != 4 || y.ndim() != 4) return false;
  const auto &k = a.kernel, &s = a.stride, &p = a.padding, &d = a.dilation;
  if (k.size() != 2 || s.size() != 2 || p.size() != 2 || d.size() != 2) return false;
  for (int i = 0; i < 2; ++i) {
    if (s[i] != k[i] || p[i] != 0 || (d[i] != 1 && k[i] != 1)) return false;
    if (y[2 + i] != x[2 + i] / k[i] || y[2 + i] < 1)
      return false;  // a ceil_mode partial window: kernel
  }
  *g = Tiling{x[0], x[1], x[2], x[3], y[2], y[3], k[0], k[1]};
  return true;
}

// Tap (i, j) of every window: x[:, :, i : i + (OH-1)*kh + 1 : kh, j : j + (OW-1)*kw + 1 : kw].
StatusOr<HloInstruction*> Tap(LowerCtx& ctx, HloInstruction* x, const Tiling& g, int64_t i,
                              int64_t j) {
  return ctx.b().Slice(x, {hlo::SliceDim{0, g.n, 1}, hlo::SliceDim{0, g.c, 1},
                           hlo::SliceDim{i, i + (g.oh - 1) * g.kh + 1, g.kh},
                           hlo::SliceDim{j, j + (g.ow - 1) * g.kw + 1, g.kw}});
}

// iota(dim 2) * a + iota(dim 3) * b over `dims` in s64: flat plane positions.
StatusOr<HloInstruction*> PlaneIndex(LowerCtx& ctx, const DimVector& dims, int64_t a, int64_t b) {
  const Shape s(absl::MakeConstSpan(dims));
  ASSIGN_OR_RETURN(HloInstruction * r, ctx.b().Iota(hlo::HloShape(DType::kI64, dims), 2));
  ASSIGN_OR_RETURN(HloInstruction * c, ctx.b().Iota(hlo::HloShape(DType::kI64, dims), 3));
  ASSIGN_OR_RETURN(HloInstruction * ka, Splat(ctx, DType::kI64, static_cast<double>(a), s));
  ASSIGN_OR_RETURN(HloInstruction * kb, Splat(ctx, DType::kI64, static_cast<double>(b), s));
  ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kMultiply, r, ka));
  ASSIGN_OR_RETURN(c, ctx.b().Binary(HloOpcode::kMultiply, c, kb));
  return ctx.b().Binary(HloOpcode::kAdd, r, c);
}

// v [N, C, OH, OW] repeated over each window: [N, C, OH * kh, OW * kw].
StatusOr<HloInstruction*> OverWindows(LowerCtx& ctx, HloInstruction* v, const Tiling& g) {
  ASSIGN_OR_RETURN(HloInstruction * b, ctx.b().Broadcast(v, g.window(), {0, 1, 2, 4}));
  return ctx.b().Reshape(b, g.covered());
}

// The covered block padded with zeros to the input's H x W (the rows and columns no window reads).
StatusOr<HloInstruction*> PadToInput(LowerCtx& ctx, HloInstruction* v, const Tiling& g, DType t) {
  const int64_t dh = g.h - g.oh * g.kh, dw = g.w - g.ow * g.kw;
  if (dh == 0 && dw == 0) return v;
  return ctx.b().Pad(v, ctx.Scalar(t, 0.0),
                     {hlo::PadDim{}, hlo::PadDim{}, hlo::PadDim{0, dh, 0}, hlo::PadDim{0, dw, 0}});
}

Status LowerMaxPool(LowerCtx& ctx, const TracedOp& op) {
  if (!PoolsAsHlo()) return ctx.LowerAsKernelCall(op);
  const TensorMeta& m = ctx.out_meta(op, 0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(op.attrs);
  Tiling g;
  if (!Tiles(a, ctx.in_meta(op, 0).shape, m.shape, m.dtype, &g)) return ctx.LowerAsKernelCall(op);
  HloInstruction* x = ctx.in(op, 0);
  const Shape os(g.out());
  // y: the kernel's running maximum, taps in row-major order; a later tap wins if greater, or if
  // it is NaN (!(v == v)) and the maximum so far is not.
  std::vector<HloInstruction*> taps;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      ASSIGN_OR_RETURN(HloInstruction * v, Tap(ctx, x, g, i, j));
      taps.push_back(v);
    }
  HloInstruction* best = taps[0];
  for (size_t t = 1; t < taps.size(); ++t) {
    HloInstruction* v = taps[t];
    ASSIGN_OR_RETURN(HloInstruction * gt, ctx.b().Compare(v, best, ComparisonDirection::kGt));
    ASSIGN_OR_RETURN(HloInstruction * v_num, ctx.b().Compare(v, v, ComparisonDirection::kEq));
    ASSIGN_OR_RETURN(HloInstruction * v_nan, ctx.b().Unary(HloOpcode::kNot, v_num));
    ASSIGN_OR_RETURN(HloInstruction * best_num,
                     ctx.b().Compare(best, best, ComparisonDirection::kEq));
    ASSIGN_OR_RETURN(HloInstruction * nan_first, ctx.b().Binary(HloOpcode::kAnd, v_nan, best_num));
    ASSIGN_OR_RETURN(HloInstruction * take, ctx.b().Binary(HloOpcode::kOr, gt, nan_first));
    ASSIGN_OR_RETURN(best, ctx.b().Select(take, v, best));
  }
  // indices, a second loop over the taps that reads y: the winner is the first tap equal to y (a
  // later equal tap never replaces it; +0 == -0), or the first NaN when y is NaN (no tap is NaN
  // otherwise), so off = the first tap t with v_t == y or v_t != v_t, selected last to first.
  // Its compares are not y's (v != v here, !(v == v) there), so CSE does not merge them into
  // values that both loops would read from memory; only the taps are common.
  ASSIGN_OR_RETURN(HloInstruction * off,
                   Splat(ctx, DType::kI64, static_cast<double>((g.kh - 1) * g.w + g.kw - 1), os));
  for (int64_t t = static_cast<int64_t>(taps.size()) - 2; t >= 0; --t) {
    HloInstruction* v = taps[t];
    ASSIGN_OR_RETURN(HloInstruction * eq, ctx.b().Compare(v, best, ComparisonDirection::kEq));
    ASSIGN_OR_RETURN(HloInstruction * nan, ctx.b().Compare(v, v, ComparisonDirection::kNe));
    ASSIGN_OR_RETURN(HloInstruction * hit, ctx.b().Binary(HloOpcode::kOr, eq, nan));
    const int64_t i = t / g.kw, j = t % g.kw;
    ASSIGN_OR_RETURN(HloInstruction * k,
                     Splat(ctx, DType::kI64, static_cast<double>(i * g.w + j), os));
    ASSIGN_OR_RETURN(off, ctx.b().Select(hit, k, off));
  }
  ASSIGN_OR_RETURN(HloInstruction * corner, PlaneIndex(ctx, g.out(), g.kh * g.w, g.kw));
  ASSIGN_OR_RETURN(HloInstruction * idx, ctx.b().Binary(HloOpcode::kAdd, corner, off));
  ctx.set(op, 0, best);
  ctx.set(op, 1, idx);
  return Status();
}

// max_pool2d_grad(dy, indices) -> dx (shape from the "input_shape" attr).
Status LowerMaxPoolGrad(LowerCtx& ctx, const TracedOp& op) {
  if (!PoolsAsHlo()) return ctx.LowerAsKernelCall(op);
  const TensorMeta& m = ctx.out_meta(op, 0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(op.attrs);
  Tiling g;
  if (!Tiles(a, m.shape, ctx.in_meta(op, 0).shape, m.dtype, &g) ||
      ctx.in_meta(op, 1).dtype != DType::kI64)
    return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(HloInstruction * dy, OverWindows(ctx, ctx.in(op, 0), g));
  ASSIGN_OR_RETURN(HloInstruction * idx, OverWindows(ctx, ctx.in(op, 1), g));
  ASSIGN_OR_RETURN(HloInstruction * pos, PlaneIndex(ctx, g.covered(), g.w, 1));
  ASSIGN_OR_RETURN(HloInstruction * hit, ctx.b().Compare(idx, pos, ComparisonDirection::kEq));
  ASSIGN_OR_RETURN(HloInstruction * zero, Splat(ctx, m.dtype, 0.0, Shape(g.covered())));
  ASSIGN_OR_RETURN(HloInstruction * dx, ctx.b().Select(hit, dy, zero));
  ASSIGN_OR_RETURN(dx, PadToInput(ctx, dx, g, m.dtype));
  ctx.set(op, 0, dx);
  return Status();
}

// The kernel's divisor for a window inside the input: divisor_override, else kh * kw.
double AvgDivisor(const opdefs::PoolAttrs& a, const Tiling& g) {
  const int64_t over = a.divisor_override;
  return static_cast<double>(over > 0 ? over : g.kh * g.kw);
}

Status LowerAvgPool(LowerCtx& ctx, const TracedOp& op) {
  if (!PoolsAsHlo()) return ctx.LowerAsKernelCall(op);
  const TensorMeta& m = ctx.out_meta(op, 0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(op.attrs);
  Tiling g;
  if (!Tiles(a, ctx.in_meta(op, 0).shape, m.shape, m.dtype, &g)) return ctx.LowerAsKernelCall(op);
  const Shape os(g.out());
  ASSIGN_OR_RETURN(HloInstruction * sum, Splat(ctx, m.dtype, 0.0, os));
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      ASSIGN_OR_RETURN(HloInstruction * v, Tap(ctx, ctx.in(op, 0), g, i, j));
      ASSIGN_OR_RETURN(sum, ctx.b().Binary(HloOpcode::kAdd, sum, v));
    }
  // The kernel divides its T sum by a double divisor and rounds to T: for f32 that is the
  // correctly rounded quotient, i.e. the f32 division.
  ASSIGN_OR_RETURN(HloInstruction * div, Splat(ctx, m.dtype, AvgDivisor(a, g), os));
  ASSIGN_OR_RETURN(HloInstruction * y, ctx.b().Binary(HloOpcode::kDivide, sum, div));
  ctx.set(op, 0, y);
  return Status();
}

// avg_pool2d_grad(dy) -> dx (shape from the "input_shape" attr).
Status LowerAvgPoolGrad(LowerCtx& ctx, const TracedOp& op) {
  if (!PoolsAsHlo()) return ctx.LowerAsKernelCall(op);
  const TensorMeta& m = ctx.out_meta(op, 0);
  const auto a = opdefs::ReadAttrs<opdefs::PoolAttrs>(op.attrs);
  Tiling g;
  if (!Tiles(a, m.shape, ctx.in_meta(op, 0).shape, m.dtype, &g)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(HloInstruction * div, Splat(ctx, m.dtype, AvgDivisor(a, g), Shape(g.out())));
  ASSIGN_OR_RETURN(HloInstruction * v, ctx.b().Binary(HloOpcode::kDivide, ctx.in(op, 0), div));
  ASSIGN_OR_RETURN(HloInstruction * dx, OverWindows(ctx, v, g));
  ASSIGN_OR_RETURN(dx, PadToInput(ctx, dx, g, m.dtype));
  ctx.set(op, 0, dx);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(max_pool2d, LowerMaxPool);
OFL_REGISTER_LOWERING(max_pool2d_grad, LowerMaxPoolGrad);
OFL_REGISTER_LOWERING(avg_pool2d, LowerAvgPool);
OFL_REGISTER_LOWERING(avg_pool2d_grad, LowerAvgPoolGrad);

}  // namespace lazy
}  // namespace oneflow_like
