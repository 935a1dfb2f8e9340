// HloEvaluator: the reference interpreter. Computes every op in double precision on logical
// (row-major) literals; integer results wrap to their type. Used by constant folding and as the
// oracle the compiled executables are tested against. Slow by design; clarity first.
#pragma once
#include <vector>

#include "absl/types/span.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class HloEvaluator {
 public:
  // rng ops draw from a generator seeded with `seed`.
  explicit HloEvaluator(uint64_t seed = 42) : seed_(seed) {}
  StatusOr<Literal> Evaluate(const HloModule& module, absl::Span<const Literal> args);
  StatusOr<Literal> Evaluate(const HloComputation& comp, absl::Span<const Literal> args);
  // One instruction given literals for its operands (used by constant folding).
  StatusOr<Literal> EvaluateInstruction(const HloInstruction& inst,
                                        absl::Span<const Literal* const> operands);

 private:
  uint64_t seed_;
  uint64_t draws_ = 0;
};

}  // namespace oneflow_like::hlo
