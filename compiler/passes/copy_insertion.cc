#include "compiler/passes/copy_insertion.h"

#include "absl/container/flat_hash_set.h"
#include "compiler/passes/pass_util.h"

namespace oneflow_like::hlo {
namespace {

// The instruction whose buffer `i` (an array) ends up in, looking through aliasing ops.
const HloInstruction* Source(const HloInstruction* i) {
  while (true) {
    if (i->opcode() == HloOpcode::kBitcast) {
      i = i->operand(0);
      continue;
    }
    if (i->opcode() == HloOpcode::kGetTupleElement &&
        i->operand(0)->opcode() == HloOpcode::kTuple) {
      i = i->operand(0)->operand(i->tuple_index());
      continue;
    }
    return i;
  }
}

HloInstruction* Copy(HloInstruction* x) {
  return AddInst(x->parent(), HloOpcode::kCopy, x->shape(), {x});
}

// Applies `fix(leaf, index)` to each array leaf of a (possibly tuple) root; rebuilds tuples.
bool FixRootLeaves(HloComputation* c,
                   const std::function<bool(HloInstruction*, int64_t)>& needs_copy) {
  HloInstruction* root = c->root_instruction();
  bool changed = false;
  if (root->opcode() == HloOpcode::kTuple) {
    for (int64_t k = 0; k < root->operand_count(); ++k) {
      HloInstruction* leaf = root->operand(k);
      if (leaf->shape().is_array() && needs_copy(leaf, k)) {
        root->ReplaceOperand(k, Copy(leaf));
        changed = true;
      }
    }
  } else if (root->shape().is_array() && needs_copy(root, 0)) {
    c->set_root_instruction(Copy(root));
    changed = true;
  }
  return changed;
}

}  // namespace

StatusOr<bool> CopyInsertion::Run(HloModule* module) {
  bool changed = false;
  HloComputation* entry = module->entry_computation();
  // An output needs its own buffer: copy leaves that are parameters, constants, elements of a
  // tuple parameter, or a buffer another output already uses. An element of a multi-output
  // fusion (or while/conditional) result is that instruction's own buffer: no copy.
  absl::flat_hash_set<std::pair<const HloInstruction*, int64_t>> seen;
  changed |= FixRootLeaves(entry, [&](HloInstruction* leaf, int64_t) {
    const HloInstruction* s = Source(leaf);
    int64_t index = -1;
    if (s->opcode() == HloOpcode::kGetTupleElement) {
      index = s->tuple_index();
      s = s->operand(0);
      if (!s->shape().tuple_shape(index).is_array()) return true;
    }
    bool shared = s->opcode() == HloOpcode::kParameter || s->opcode() == HloOpcode::kConstant ||
                  s->opcode() == HloOpcode::kGetTupleElement || !seen.insert({s, index}).second;
    return shared;
  });
  for (HloComputation* c : module->computations()) {
    for (HloInstruction* w : c->instructions()) {
      if (w->opcode() != HloOpcode::kWhile) continue;
      HloComputation* body = w->while_body();
      changed |= FixRootLeaves(body, [&](HloInstruction* leaf, int64_t k) {
        const HloInstruction* s = Source(leaf);
        if (s->opcode() == HloOpcode::kConstant) return true;
        if (s->opcode() == HloOpcode::kGetTupleElement &&
            s->operand(0)->opcode() == HloOpcode::kParameter)
          return s->tuple_index() != k;  // the same index passes through untouched
        return s->opcode() == HloOpcode::kParameter;
      });
    }
  }
  return changed;
}

}  // namespace oneflow_like::hlo
