// Lowering of the convolution family (oneflow_like/ops/conv.cc) to HLO `convolution`s, the way
// XLA expresses backward convolutions: x [N,C,H,W], w [K,C/g,R,S], y/dy [N,K,OH,OW]; attrs
// stride s, padding p, dilation d (2 each), groups g.
//   conv2d             convolution(x, w), window {size R, stride s, pad p_p, rhs_dilate d},
//                      dim_labels bf01_oi01->bf01, feature_group_count g; a bias is an ordinary
//                      broadcast + add (it fuses with a following relu).
//   conv2d_grad_input  dx = convolution(dy, w'), window {stride 1, lhs_dilate s, rhs_dilate d,
//                      pad_lo (R-1)d - p, pad_hi H-1-(OH-1)s+p}, dim_labels bf01_io01->bf01,
//                      groups g: w' is w reversed in space with i/o swapped ([K/g, C, R, S]; a
//                      reshape/transpose when g > 1). The IR has no `reverse` op, so the reversal
//                      is a concatenate of size-1 slices in reverse order along each spatial dim
//                      (one small fused loop over the weights).
//   conv2d_grad_weight dw = convolution(x, dy), window {size OH, stride d, rhs_dilate s, pad_lo p,
//                      pad_hi (R-1)d+(OH-1)s+1-H-p}, dim_labels fb01_io01->fb01 (x's channels are
//                      the batch, the samples are contracted). With g > 1 the IR has no
//                      batch_group_count: one such convolution per group on channel slices of x
//                      and dy, concatenated along K.
// The CPU backend runs these as oneDNN forward / backward_data / backward_weights
// (compiler/backends/cpu/conv_thunk.h). dtypes other than f32/f64 keep the kernel call.
#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/conv.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::HloInstruction;
using hlo::WindowDim;

// f32/f64 on the CPU; on a device the convolution runs as the op's kernel (cuDNN on CUDA):
// the GPU backend has no convolution thunk.
bool Lowerable(const LowerCtx& ctx, DType t) {
  return ctx.device().is_cpu() && (t == DType::kF32 || t == DType::kF64);
}

StatusOr<hlo::ConvDims> Labels(const char* text) {
  return hlo::ConvDims::Parse(text);
}

// A channel slice [lo, hi) of an NCHW-like array along dim `dim`.
StatusOr<HloInstruction*> SliceDim1(LowerCtx& ctx, HloInstruction* h, int64_t dim, int64_t lo,
                                    int64_t hi) {
  std::vector<hlo::SliceDim> sl;
  for (int64_t k = 0; k < h->shape().rank(); ++k)
    sl.push_back(k == dim ? hlo::SliceDim{lo, hi, 1} : hlo::SliceDim{0, h->shape().dim(k), 1});
  return ctx.b().Slice(h, sl);
}

using Attrs = opdefs::ConvAttrs;

StatusOr<Attrs> ConvAttrsOf(const TracedOp& op) {
  Attrs a = opdefs::ReadAttrs<Attrs>(op.attrs);
  if (a.stride.size() != 2 || a.padding.size() != 2 || a.dilation.size() != 2 || a.groups < 1)
    return InvalidArgument("[%s] expected 2 strides, paddings and dilations and groups >= 1",
                           op.op->name);
  return a;
}

Status LowerConv2d(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(ctx, m.dtype)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(Attrs a, ConvAttrsOf(op));
  const Shape& ws = ctx.in_meta(op, 1).shape;
  std::vector<WindowDim> win(2);
  for (int i = 0; i < 2; ++i)
    win[i] = WindowDim{ws[2 + i], a.stride[i], a.padding[i], a.padding[i], 1, a.dilation[i]};
  ASSIGN_OR_RETURN(auto dims, Labels("bf01_oi01->bf01"));
  ASSIGN_OR_RETURN(HloInstruction * y,
                   ctx.b().Convolution(ctx.in(op, 0), ctx.in(op, 1), win, dims, a.groups));
  if (y->shape().dims() != m.shape.dims())
    return Internal("[conv2d] convolution of %s and %s gives %s, the op says %s",
                    ctx.in(op, 0)->shape().ToString(), ctx.in(op, 1)->shape().ToString(),
                    y->shape().ToString(), m.shape.ToString());
  if (op.inputs.size() > 2) {
    ASSIGN_OR_RETURN(auto* b, ctx.b().Broadcast(ctx.in(op, 2), m.shape.dims(), {1}));
    ASSIGN_OR_RETURN(y, ctx.b().Binary(hlo::HloOpcode::kAdd, y, b));
  }
  ctx.set(op, 0, y);
  return Status();
}

// conv2d_grad_input(dy, w) -> dx (shape from the "input_shape" attr).
Status LowerConv2dGradInput(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(ctx, m.dtype)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(Attrs a, ConvAttrsOf(op));
  const Shape &dys = ctx.in_meta(op, 0).shape, &ws = ctx.in_meta(op, 1).shape, &xs = m.shape;
  if (dys.ndim() != 4 || ws.ndim() != 4 || xs.ndim() != 4)
    return InvalidArgument("[conv2d_grad_input] expected dy, w and dx of rank 4, got %s, %s and %s",
                           dys.ToString(), ws.ToString(), xs.ToString());
  const int64_t g = a.groups, K = ws[0], cg = ws[1], R = ws[2], S = ws[3];
  HloInstruction* w = ctx.in(op, 1);
  if (g > 1) {  // [K, C/g, R, S] -> [g, K/g, C/g, R, S] -> [K/g, g, C/g, R, S] -> [K/g, C, R, S]
    ASSIGN_OR_RETURN(w, ctx.b().Reshape(w, {g, K / g, cg, R, S}));
    ASSIGN_OR_RETURN(w, ctx.b().Transpose(w, {1, 0, 2, 3, 4}));
    ASSIGN_OR_RETURN(w, ctx.b().Reshape(w, {K / g, g * cg, R, S}));
  }
  ASSIGN_OR_RETURN(w, ReverseDim(ctx, w, 2));
  ASSIGN_OR_RETURN(w, ReverseDim(ctx, w, 3));
  std::vector<WindowDim> win(2);
  for (int i = 0; i < 2; ++i) {
    const int64_t k = ws[2 + i], s = a.stride[i], p = a.padding[i], d = a.dilation[i];
    win[i] = WindowDim{k, 1, (k - 1) * d - p, xs[2 + i] - 1 - (dys[2 + i] - 1) * s + p, s, d};
  }
  ASSIGN_OR_RETURN(auto dims, Labels("bf01_io01->bf01"));
  ASSIGN_OR_RETURN(HloInstruction * dx, ctx.b().Convolution(ctx.in(op, 0), w, win, dims, g));
  if (dx->shape().dims() != xs.dims())
    return Internal("[conv2d_grad_input] dy %s and weight %s give %s, expected %s", dys.ToString(),
                    ws.ToString(), dx->shape().ToString(), xs.ToString());
  ctx.set(op, 0, dx);
  return Status();
}

// conv2d_grad_weight(dy, x) -> dw (shape from the "weight_shape" attr).
Status LowerConv2dGradWeight(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(ctx, m.dtype)) return ctx.LowerAsKernelCall(op);
  ASSIGN_OR_RETURN(Attrs a, ConvAttrsOf(op));
  const Shape &dys = ctx.in_meta(op, 0).shape, &xs = ctx.in_meta(op, 1).shape, &ws = m.shape;
  if (dys.ndim() != 4 || ws.ndim() != 4 || xs.ndim() != 4)
    return InvalidArgument(
        "[conv2d_grad_weight] expected dy, x and dw of rank 4, got %s, %s and %s", dys.ToString(),
        xs.ToString(), ws.ToString());
  std::vector<WindowDim> win(2);
  for (int i = 0; i < 2; ++i) {
    const int64_t r = ws[2 + i], oh = dys[2 + i], s = a.stride[i], p = a.padding[i],
                  d = a.dilation[i];
    win[i] = WindowDim{oh, d, p, (r - 1) * d + (oh - 1) * s + 1 - xs[2 + i] - p, 1, s};
  }
  ASSIGN_OR_RETURN(auto dims, Labels("fb01_io01->fb01"));
  const int64_t g = a.groups, C = xs[1], K = dys[1];
  std::vector<HloInstruction*> parts;
  for (int64_t j = 0; j < g; ++j) {
    HloInstruction *x = ctx.in(op, 1), *dy = ctx.in(op, 0);
    if (g > 1) {
      ASSIGN_OR_RETURN(x, SliceDim1(ctx, x, 1, j * C / g, (j + 1) * C / g));
      ASSIGN_OR_RETURN(dy, SliceDim1(ctx, dy, 1, j * K / g, (j + 1) * K / g));
    }
    ASSIGN_OR_RETURN(auto* dw, ctx.b().Convolution(x, dy, win, dims, 1));
    parts.push_back(dw);
  }
  HloInstruction* dw = parts[0];
  if (g > 1) {
    ASSIGN_OR_RETURN(dw, ctx.b().Concatenate(parts, 0));
  }
  if (dw->shape().dims() != ws.dims())
    return Internal("[conv2d_grad_weight] dy %s and x %s give %s, expected %s", dys.ToString(),
                    xs.ToString(), dw->shape().ToString(), ws.ToString());
  ctx.set(op, 0, dw);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(conv2d, LowerConv2d);
OFL_REGISTER_LOWERING(conv2d_grad_input, LowerConv2dGradInput);
OFL_REGISTER_LOWERING(conv2d_grad_weight, LowerConv2dGradWeight);

}  // namespace lazy
}  // namespace oneflow_like
