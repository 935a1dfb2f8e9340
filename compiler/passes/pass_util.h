// Small helpers shared by the passes: building replacement instructions and matching constants.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

// Adds `op(operands)` with `shape` to `comp` (attributes via `attrs`).
HloInstruction* AddInst(HloComputation* comp, HloOpcode op, const HloShape& shape,
                        std::vector<HloInstruction*> operands, const HloAttrs& attrs = {});
HloInstruction* AddScalarConstant(HloComputation* comp, DType t, double v);
// Scalar constant, or broadcast of one: its value; nullopt otherwise.
bool GetSplatValue(const HloInstruction* inst, double* value);
bool IsSplat(const HloInstruction* inst, double value);
// Computations other than fusion bodies, callees first (entry last).
std::vector<HloComputation*> NonFusionComputations(const HloModule& module);
// Structural equality of two computations (names ignored).
bool ComputationsEqual(const HloComputation& a, const HloComputation& b);
// True if `to` can be reached from `from` along operand->user edges.
bool Reachable(const HloInstruction* from, const HloInstruction* to);
// Shape with the default layout on every array leaf.
HloShape WithDefaultLayout(HloShape s);

}  // namespace oneflow_like::hlo
