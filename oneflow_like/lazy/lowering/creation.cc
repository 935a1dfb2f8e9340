// Lowerings of the creation family traced inside a graph (kernels/cpu/creation.cc): arange,
// linspace and eye from iotas. Values are formed in double as the kernels do, then converted
// to the output dtype (static_cast, bool as != 0); f16/bf16 outputs keep the kernel call.
#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/creation.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::HloInstruction;
using hlo::HloOpcode;

bool Lowerable(DType t) {
  return t != DType::kF16 && t != DType::kBF16;
}

// The f64 value `v` (shape `m`) converted to m's dtype.
Status SetConverted(LowerCtx& ctx, const TracedOp& op, const TensorMeta& m, HloInstruction* v) {
  if (m.dtype != DType::kF64) {
    ASSIGN_OR_RETURN(v, ctx.b().Convert(v, m.dtype));
  }
  ctx.set(op, 0, v);
  return Status();
}

// arange: start + double(i) * step.
Status LowerArange(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(m.dtype) || m.shape.ndim() != 1) return ctx.LowerAsKernelCall(op);
  const TensorMeta f64{m.shape, DType::kF64, m.device};
  ExprBuilder e{ctx, f64, Status()};
  HloInstruction* i = e.Ok(ctx.b().Iota(hlo::HloShape(DType::kF64, m.shape.dims()), 0));
  const opdefs::ArangeAttrs a = opdefs::ReadAttrs<opdefs::ArangeAttrs>(op.attrs);
  HloInstruction* v = e.Add(e.C(a.start), e.Mul(i, e.C(a.step)));
  RETURN_IF_ERROR(e.status);
  return SetConverted(ctx, op, m, v);
}

// linspace (symmetric, both ends exact): step = (end - start) / (n - 1); element i is
// start + i * step for i < (n + 1) / 2, else end - (n - 1 - i) * step.
Status LowerLinspace(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(m.dtype) || m.shape.ndim() != 1) return ctx.LowerAsKernelCall(op);
  const int64_t n = m.shape.numel();
  const opdefs::LinspaceAttrs a = opdefs::ReadAttrs<opdefs::LinspaceAttrs>(op.attrs);
  const double start = a.start, end = a.end;
  const double step = n > 1 ? (end - start) / static_cast<double>(n - 1) : 0.0;
  const TensorMeta f64{m.shape, DType::kF64, m.device};
  ExprBuilder e{ctx, f64, Status()};
  HloInstruction* i = e.Ok(ctx.b().Iota(hlo::HloShape(DType::kF64, m.shape.dims()), 0));
  HloInstruction* st = e.C(step);
  HloInstruction* lo = e.Add(e.C(start), e.Mul(i, st));
  HloInstruction* hi = e.Sub(e.C(end), e.Mul(e.Sub(e.C(static_cast<double>(n - 1)), i), st));
  HloInstruction* first_half =
      e.Cmp(i, e.C(static_cast<double>((n + 1) / 2)), hlo::ComparisonDirection::kLt);
  HloInstruction* v = e.Sel(first_half, lo, hi);
  RETURN_IF_ERROR(e.status);
  return SetConverted(ctx, op, m, v);
}

// eye: 1 where row == column, else 0.
Status LowerEye(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (!Lowerable(m.dtype) || m.shape.ndim() != 2) return ctx.LowerAsKernelCall(op);
  const hlo::HloShape idx(DType::kI64, m.shape.dims());
  ASSIGN_OR_RETURN(auto* row, ctx.b().Iota(idx, 0));
  ASSIGN_OR_RETURN(auto* col, ctx.b().Iota(idx, 1));
  ASSIGN_OR_RETURN(auto* diag, ctx.b().Compare(row, col, hlo::ComparisonDirection::kEq));
  ExprBuilder e{ctx, m, Status()};
  return e.Set(op, e.Sel(diag, e.C(1), e.C(0)));
}

}  // namespace

OFL_REGISTER_LOWERING(arange, LowerArange);
OFL_REGISTER_LOWERING(linspace, LowerLinspace);
OFL_REGISTER_LOWERING(eye, LowerEye);

}  // namespace lazy
}  // namespace oneflow_like
