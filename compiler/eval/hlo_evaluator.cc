#include "compiler/eval/hlo_evaluator.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "compiler/eval/evaluator_ops.h"

namespace oneflow_like::hlo {

StatusOr<Literal> HloEvaluator::Evaluate(const HloModule& module, absl::Span<const Literal> args) {
  return Evaluate(*module.entry_computation(), args);
}

StatusOr<Literal> HloEvaluator::Evaluate(const HloComputation& comp,
                                         absl::Span<const Literal> args) {
  if (static_cast<int64_t>(args.size()) != comp.num_parameters())
    return InvalidArgument("[evaluator] %s takes %d arguments, got %d", comp.name(),
                           comp.num_parameters(), static_cast<int64_t>(args.size()));
  absl::flat_hash_map<const HloInstruction*, Literal> values;
  for (HloInstruction* inst : comp.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) {
      const Literal& a = args[inst->parameter_number()];
      if (!a.shape.Compatible(inst->shape()))
        return InvalidArgument("[evaluator] argument %d is %s, expected %s",
                               inst->parameter_number(), a.shape.ToString(false),
                               inst->shape().ToString(false));
      Literal l = a;
      l.shape = inst->shape();  // keep the parameter's layout
      values[inst] = std::move(l);
      continue;
    }
    std::vector<const Literal*> ops;
    for (HloInstruction* o : inst->operands()) ops.push_back(&values.at(o));
    auto r = EvaluateInstruction(*inst, ops);
    if (!r.ok()) return r.status();
    values[inst] = std::move(r).value();
  }
  return values.at(comp.root_instruction());
}

StatusOr<Literal> HloEvaluator::EvaluateInstruction(const HloInstruction& inst,
                                                    absl::Span<const Literal* const> ops) {
  const HloShape& shape = inst.shape();
  switch (inst.opcode()) {
    case HloOpcode::kConstant: return inst.literal();
    case HloOpcode::kFusion:
    case HloOpcode::kCopy:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement: break;
    case HloOpcode::kRng: {
      Literal out(shape);
      std::mt19937_64 gen(seed_ + 7919 * draws_++);
      double lo = ops[0]->data[0], hi = ops[1]->data[0];
      std::uniform_real_distribution<double> uni(lo, hi);
      std::normal_distribution<double> normal(lo, hi);
      for (double& v : out.data)
        v = inst.attrs().distribution == RngDistribution::kUniform ? uni(gen) : normal(gen);
      out.RoundToType();
      return out;
    }
    default: return eval_ops::EvaluateArrayOp(inst, ops, this);
  }
  switch (inst.opcode()) {
    case HloOpcode::kFusion: {
      std::vector<Literal> args;
      for (auto* o : ops) args.push_back(*o);
      return Evaluate(*inst.fused_computation(), args);
    }
    case HloOpcode::kCopy: {
      Literal l = *ops[0];
      l.shape = shape;
      return l;
    }
    case HloOpcode::kTuple: {
      std::vector<Literal> elems;
      for (auto* o : ops) elems.push_back(*o);
      return Literal::MakeTuple(std::move(elems));
    }
    default:  // kGetTupleElement
      return ops[0]->elements.at(inst.tuple_index());
  }
}

}  // namespace oneflow_like::hlo
