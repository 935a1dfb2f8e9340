// Lowering of the linear-algebra family: matmul(a, b[, bias]; alpha, beta) =
// beta * bias + alpha * (a @ b) (oneflow_like/ops/matmul.cc; 1-D operands were reshaped to 2-D
// by the functional layer). a: [..., M, K], b: [..., K, N], batch dims broadcast.
//   - b 2-D: a's batch dims fold into M -> one [B*M, K] x [K, N] dot (as the eager kernel does);
//   - otherwise both operands broadcast to the output's batch, flattened to one batch dim -> a
//     [B, M, K] x [B, K, N] dot.
// A transpose of an operand's last two dims (autograd's a^T / b^T) folds into the dot's
// contracting dims, so the GEMM thunk reads it transposed instead of a copy kernel writing it.
#include "oneflow_like/lazy/lowering/lowering_util.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/opdefs/matmul.h"

namespace oneflow_like {
namespace lazy {
namespace {
using hlo::HloInstruction;
using hlo::HloOpcode;

int64_t Prod(const DimVector& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

// `h` is transpose(x) swapping only its last two dims: returns x.
HloInstruction* SwappedLastTwo(HloInstruction* h) {
  if (h->opcode() != HloOpcode::kTranspose) return nullptr;
  const auto& p = h->dimensions();
  const int64_t r = static_cast<int64_t>(p.size());
  if (r < 2 || p[r - 1] != r - 2 || p[r - 2] != r - 1) return nullptr;
  for (int64_t i = 0; i + 2 < r; ++i)
    if (p[i] != i) return nullptr;
  return h->operand(0);
}

// Operand `h` (logical [batch..., rows, cols]) as a rank-(nb+2) dot operand with nb (0 or 1)
// leading batch dims; *transposed: the result is stored [batch, cols, rows].
StatusOr<HloInstruction*> AsDotOperand(LowerCtx& ctx, HloInstruction* h, const Shape& logical,
                                       const DimVector& batch, bool* transposed) {
  const int64_t r = logical.ndim(), rows = logical[r - 2], cols = logical[r - 1];
  const int64_t b = Prod(batch, 0, batch.size());
  *transposed = false;
  DimVector full = batch;
  full.push_back(rows);
  full.push_back(cols);
  if (Shape(full) == logical) {
    // Peel every swap (autograd transposes a weight that was itself a transpose: W^T^T = W).
    while (HloInstruction* x = SwappedLastTwo(h)) {
      *transposed = !*transposed;
      h = x;
    }
  } else {
    ASSIGN_OR_RETURN(h, BroadcastTo(ctx, h, logical, Shape(full)));
  }
  DimVector dims;
  if (!batch.empty()) dims.push_back(b);
  dims.push_back(*transposed ? cols : rows);
  dims.push_back(*transposed ? rows : cols);
  if (h->shape().dims() == dims) return h;
  return ctx.b().Reshape(h, dims);
}

Status LowerMatmul(LowerCtx& ctx, const TracedOp& op) {
  const TensorMeta& m = ctx.out_meta(op, 0);
  if (m.dtype != DType::kF32 && m.dtype != DType::kF64) return ctx.LowerAsKernelCall(op);
  const Shape &sa = ctx.in_meta(op, 0).shape, &sb = ctx.in_meta(op, 1).shape;
  const DimVector& out = m.shape.dims();
  const int64_t M = sa[sa.ndim() - 2], K = sa[sa.ndim() - 1], N = sb[sb.ndim() - 1];
  HloInstruction* dot;
  hlo::DotDims d;
  if (sb.ndim() == 2) {
    const int64_t rows = Prod(sa.dims(), 0, sa.ndim() - 1);
    bool ta = false, tb = false;
    HloInstruction* a = ctx.in(op, 0);
    if (sa.ndim() == 2) {
      ASSIGN_OR_RETURN(a, AsDotOperand(ctx, a, sa, {}, &ta));
    } else {
      ASSIGN_OR_RETURN(a, ctx.b().Reshape(a, {rows, K}));
    }
    ASSIGN_OR_RETURN(auto* b, AsDotOperand(ctx, ctx.in(op, 1), sb, {}, &tb));
    d.lhs_contracting = {ta ? 0 : 1};
    d.rhs_contracting = {tb ? 1 : 0};
    ASSIGN_OR_RETURN(dot, ctx.b().Dot(a, b, d));
  } else {
    DimVector batch(out.begin(), out.end() - 2);
    bool ta = false, tb = false;
    ASSIGN_OR_RETURN(auto* a, AsDotOperand(ctx, ctx.in(op, 0), sa, batch, &ta));
    ASSIGN_OR_RETURN(auto* b, AsDotOperand(ctx, ctx.in(op, 1), sb, batch, &tb));
    d.lhs_batch = {0};
    d.rhs_batch = {0};
    d.lhs_contracting = {ta ? 1 : 2};
    d.rhs_contracting = {tb ? 2 : 1};
    ASSIGN_OR_RETURN(dot, ctx.b().Dot(a, b, d));
  }
  (void)M;
  (void)N;
  HloInstruction* r = dot;
  if (r->shape().dims() != out) {
    ASSIGN_OR_RETURN(r, ctx.b().Reshape(r, out));
  }
  const auto attrs = opdefs::ReadAttrs<opdefs::MatmulAttrs>(op.attrs);
  const double alpha = attrs.alpha, beta = attrs.beta;
  if (alpha != 1.0) {
    ASSIGN_OR_RETURN(auto* s, Splat(ctx, m.dtype, alpha, m.shape));
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kMultiply, s, r));
  }
  if (op.inputs.size() == 3 && beta != 0.0) {  // the kernel ignores the bias when beta == 0
    ASSIGN_OR_RETURN(auto* bias,
                     BroadcastTo(ctx, ctx.in(op, 2), ctx.in_meta(op, 2).shape, m.shape));
    if (beta != 1.0) {
      ASSIGN_OR_RETURN(auto* s, Splat(ctx, m.dtype, beta, m.shape));
      ASSIGN_OR_RETURN(bias, ctx.b().Binary(HloOpcode::kMultiply, s, bias));
    }
    ASSIGN_OR_RETURN(r, ctx.b().Binary(HloOpcode::kAdd, bias, r));
  }
  ctx.set(op, 0, r);
  return Status();
}

}  // namespace

OFL_REGISTER_LOWERING(matmul, LowerMatmul);

}  // namespace lazy
}  // namespace oneflow_like
