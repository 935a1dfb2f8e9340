#include "compiler/passes/algebraic_simplifier.h"

#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

bool IsIdentityPermutation(const DimVector& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// Returns the replacement for `i`, or nullptr when no rule applies.
HloInstruction* Simplify(HloInstruction* i) {
  HloComputation* c = i->parent();
  const HloOpcode op = i->opcode();
  auto same = [&](HloInstruction* x) { return x->shape().Compatible(i->shape()) ? x : nullptr; };
  switch (op) {
    case HloOpcode::kAdd:
      if (IsSplat(i->operand(1), 0)) return same(i->operand(0));
      if (IsSplat(i->operand(0), 0)) return same(i->operand(1));
      break;
    case HloOpcode::kSubtract:
      if (IsSplat(i->operand(1), 0)) return same(i->operand(0));
      break;
    case HloOpcode::kMultiply:
      if (IsSplat(i->operand(1), 1)) return same(i->operand(0));
      if (IsSplat(i->operand(0), 1)) return same(i->operand(1));
      break;
    case HloOpcode::kDivide:
      if (IsSplat(i->operand(1), 1)) return same(i->operand(0));
      break;
    case HloOpcode::kNegate:
      if (i->operand(0)->opcode() == HloOpcode::kNegate) return same(i->operand(0)->operand(0));
      break;
    case HloOpcode::kConvert:
      if (i->operand(0)->shape().dtype() == i->shape().dtype()) return same(i->operand(0));
      break;
    case HloOpcode::kSelect: {
      double p;
      if (i->operand(0)->shape().rank() == 0 && GetSplatValue(i->operand(0), &p))
        return same(i->operand(p != 0 ? 1 : 2));
      if (i->operand(1) == i->operand(2)) return same(i->operand(1));
      break;
    }
    case HloOpcode::kReshape: {
      HloInstruction* x = i->operand(0);
      if (x->shape().dims() == i->shape().dims()) return same(x);
      if (x->opcode() == HloOpcode::kReshape)
        return AddInst(c, HloOpcode::kReshape, i->shape(), {x->operand(0)});
      break;
    }
    case HloOpcode::kTranspose: {
      HloInstruction* x = i->operand(0);
      if (IsIdentityPermutation(i->dimensions())) return same(x);
      if (x->opcode() == HloOpcode::kTranspose) {
        HloAttrs a;
        for (int64_t d : i->dimensions()) a.dimensions.push_back(x->dimensions()[d]);
        if (IsIdentityPermutation(a.dimensions)) return same(x->operand(0));
        return AddInst(c, HloOpcode::kTranspose, i->shape(), {x->operand(0)}, a);
      }
      break;
    }
    case HloOpcode::kBroadcast: {
      HloInstruction* x = i->operand(0);
      if (x->shape().dims() == i->shape().dims() && IsIdentityPermutation(i->dimensions()))
        return same(x);
      if (x->opcode() == HloOpcode::kBroadcast) {
        HloAttrs a;
        for (int64_t d : x->dimensions()) a.dimensions.push_back(i->dimensions()[d]);
        return AddInst(c, HloOpcode::kBroadcast, i->shape(), {x->operand(0)}, a);
      }
      break;
    }
    case HloOpcode::kSlice:
      if (i->shape().dims() == i->operand(0)->shape().dims()) return same(i->operand(0));
      break;
    case HloOpcode::kPad: {
      bool noop = true;
      for (const PadDim& p : i->attrs().padding) noop &= p.lo == 0 && p.hi == 0 && p.interior == 0;
      if (noop) return same(i->operand(0));
      break;
    }
    case HloOpcode::kConcatenate:
      if (i->operand_count() == 1) return same(i->operand(0));
      break;
    default: break;
  }
  // op(broadcast(scalar c1), broadcast(scalar c2)) -> broadcast(op(c1, c2)).
  if (IsElementwise(op) && i->shape().rank() > 0 && i->operand_count() > 0) {
    std::vector<HloInstruction*> scalars;
    for (HloInstruction* o : i->operands()) {
      if (o->opcode() != HloOpcode::kBroadcast || !o->operand(0)->IsScalarConstant())
        return nullptr;
      scalars.push_back(o->operand(0));
    }
    HloShape scalar_shape = HloShape::Scalar(i->shape().dtype());
    HloInstruction* s = c->AddInstruction(i->CloneWithNewOperands(scalar_shape, scalars));
    HloAttrs a;
    return AddInst(c, HloOpcode::kBroadcast, HloShape(i->shape().dtype(), i->shape().dims()), {s},
                   a);
  }
  return nullptr;
}

}  // namespace

StatusOr<bool> AlgebraicSimplifier::Run(HloModule* module) {
  bool changed = false;
  for (int iter = 0; iter < 8; ++iter) {
    bool round = false;
    for (HloComputation* c : module->MakeComputationPostOrder()) {
      for (HloInstruction* i : c->MakeInstructionPostOrder()) {
        if (i->user_count() == 0 && !i->IsRoot()) continue;  // dead: DCE's job
        HloInstruction* r = Simplify(i);
        if (r == nullptr || r == i) continue;
        if (r->shape().is_array() && i->shape().has_layout() && r->shape() != i->shape()) {
          // Keep the consumer-visible layout: a rewrite must not change it.
          if (r->user_count() == 0 && r->opcode() != HloOpcode::kParameter && !r->IsRoot()) {
            r->set_shape(i->shape());
          } else {
            continue;
          }
        }
        RETURN_IF_ERROR(i->ReplaceAllUsesWith(r));
        round = true;
      }
    }
    if (!round) break;
    changed = true;
  }
  return changed;
}

}  // namespace oneflow_like::hlo
