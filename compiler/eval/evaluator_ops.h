// Per-opcode reference implementations for HloEvaluator (array-valued ops and control flow).
#pragma once
#include "absl/types/span.h"
#include "compiler/eval/hlo_evaluator.h"

namespace oneflow_like::hlo::eval_ops {

StatusOr<Literal> EvaluateArrayOp(const HloInstruction& inst, absl::Span<const Literal* const> ops,
                                  HloEvaluator* evaluator);
// Scalar element functions shared with the evaluator's tests and constant folding.
double EvalUnary(HloOpcode op, DType t, double x);
double EvalBinary(const HloInstruction& inst, DType t, double x, double y);
double ReduceIdentityCombine(ReduceKind k, double acc, double v);

}  // namespace oneflow_like::hlo::eval_ops
