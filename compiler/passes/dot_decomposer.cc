#include "compiler/passes/dot_decomposer.h"

#include <algorithm>

#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

bool Contains(const DimVector& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Transposes `x` to (first..., middle..., last...) dims and reshapes to the three products.
HloInstruction* Canonicalize(HloComputation* c, HloInstruction* x, const DimVector& first,
                             const DimVector& mid, const DimVector& last, bool batched) {
  HloAttrs perm;
  for (auto* group : {&first, &mid, &last})
    perm.dimensions.insert(perm.dimensions.end(), group->begin(), group->end());
  DimVector tdims;
  for (int64_t d : perm.dimensions) tdims.push_back(x->shape().dim(d));
  HloInstruction* t = x;
  bool identity = true;
  for (size_t i = 0; i < perm.dimensions.size(); ++i)
    identity &= perm.dimensions[i] == static_cast<int64_t>(i);
  if (!identity)
    t = AddInst(c, HloOpcode::kTranspose, HloShape(x->shape().dtype(), tdims), {x}, perm);
  auto prod = [&](const DimVector& g) {
    int64_t n = 1;
    for (int64_t d : g) n *= x->shape().dim(d);
    return n;
  };
  DimVector out;
  if (batched) out.push_back(prod(first));
  out.push_back(prod(mid));
  out.push_back(prod(last));
  return AddInst(c, HloOpcode::kReshape, HloShape(x->shape().dtype(), out), {t});
}

}  // namespace

bool IsCanonicalDot(const HloInstruction& dot) {
  const DotDims& d = dot.attrs().dot;
  const int64_t nb = d.lhs_batch.size();
  if (nb > 1 || d.lhs_contracting.size() != 1) return false;
  if (dot.operand(0)->shape().rank() != nb + 2 || dot.operand(1)->shape().rank() != nb + 2)
    return false;
  if (nb == 1 && (d.lhs_batch[0] != 0 || d.rhs_batch[0] != 0)) return false;
  return d.lhs_contracting[0] >= nb && d.rhs_contracting[0] >= nb;
}

StatusOr<bool> DotDecomposer::Run(HloModule* module) {
  bool changed = false;
  for (HloComputation* c : NonFusionComputations(*module)) {
    for (HloInstruction* dot : c->MakeInstructionPostOrder()) {
      if (dot->opcode() != HloOpcode::kDot || IsCanonicalDot(*dot)) continue;
      const DotDims& d = dot->attrs().dot;
      HloInstruction *l = dot->operand(0), *r = dot->operand(1);
      DimVector lfree, rfree;
      for (int64_t i = 0; i < l->shape().rank(); ++i)
        if (!Contains(d.lhs_batch, i) && !Contains(d.lhs_contracting, i)) lfree.push_back(i);
      for (int64_t i = 0; i < r->shape().rank(); ++i)
        if (!Contains(d.rhs_batch, i) && !Contains(d.rhs_contracting, i)) rfree.push_back(i);
      const bool batched = !d.lhs_batch.empty();
      // lhs -> [B, M, K] (batch, free, contracting); rhs -> [B, K, N] (batch, contracting, free).
      HloInstruction* lc = Canonicalize(c, l, d.lhs_batch, lfree, d.lhs_contracting, batched);
      HloInstruction* rc = Canonicalize(c, r, d.rhs_batch, d.rhs_contracting, rfree, batched);
      HloAttrs a;
      if (batched) {
        a.dot.lhs_batch = {0};
        a.dot.rhs_batch = {0};
      }
      a.dot.lhs_contracting = {batched ? 2 : 1};
      a.dot.rhs_contracting = {batched ? 1 : 0};
      DimVector out = lc->shape().dims();
      out.back() = rc->shape().dims().back();
      HloInstruction* nd =
          AddInst(c, HloOpcode::kDot, HloShape(dot->shape().dtype(), out), {lc, rc}, a);
      HloInstruction* res = AddInst(c, HloOpcode::kReshape, dot->shape(), {nd});
      RETURN_IF_ERROR(c->ReplaceInstruction(dot, res));
      changed = true;
    }
  }
  return changed;
}

}  // namespace oneflow_like::hlo
