// ShapeInference: the result shape (dims and element type, no layout) of an op from its operand
// shapes and attributes, with `[opcode] ...` errors. Used by the builder (to append ops) and the
// verifier (to check declared shapes). Ops whose result cannot be inferred (parameter, constant,
// iota, rng, reshape, broadcast, bitcast, custom-call, fusion) take it from `declared`, checked.
#pragma once
#include "absl/types/span.h"
#include "compiler/ir/hlo_instruction.h"

namespace oneflow_like::hlo {

StatusOr<HloShape> InferShape(HloOpcode op, absl::Span<const HloShape* const> operands,
                              const HloAttrs& attrs, absl::Span<HloComputation* const> called,
                              const HloShape* declared);
// Same, for an existing instruction (its own shape is `declared`).
StatusOr<HloShape> InferShape(const HloInstruction& inst);

}  // namespace oneflow_like::hlo
