// Fusion mechanics shared by priority fusion, multi-output fusion and the fusion wrapper.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

// Can be fused into its users (cheap to recompute per element).
bool IsFusibleProducer(const HloInstruction* i);
// Can take producers into itself (a loop or a reduction as the fusion root).
bool IsFusibleConsumer(const HloInstruction* i);
// Wraps `inst` into a single-instruction fusion in place; returns the fusion.
StatusOr<HloInstruction*> WrapInFusion(HloInstruction* inst);
// Clones `producer` (inlining it if it is itself a fusion) into `consumer` (wrapped first if
// needed). Removes `producer` once unused. Returns the consumer fusion.
StatusOr<HloInstruction*> FuseProducerIntoConsumer(HloInstruction* producer,
                                                   HloInstruction* consumer);
// Instructions inside a fusion (1 for any other op).
int64_t FusedInstructionCount(const HloInstruction* i);
// Fusions with a tuple root (multi-output).
bool IsMultiOutputFusion(const HloInstruction* i);
// Does fusion `f` read its operand `x` only at the element it computes (through elementwise ops
// of x's dims inside f)? True when x is not an operand.
bool ReadsOperandElementwise(const HloInstruction* f, const HloInstruction* x);

}  // namespace oneflow_like::hlo
