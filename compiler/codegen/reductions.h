// Reduction roots (reduce with a known kind: add, mul, max, min, and, or).
// C++ row loops (`EmitReductionRows`) and the per-element form (`EmitElementReduction`, the CUDA
// dialect's and the C++ fallback's: one sequential accumulator per output element).
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "compiler/codegen/element_emitter.h"

namespace oneflow_like::hlo::codegen {

// A reduction root. Row reduction (the input's innermost dim is reduced): per output element, the
// trailing reduced block is the inner loop, accumulated in 16 lanes (lane = position % 16, the
// same for any [begin, end)) and folded in lane order after init; integer/pred reductions keep
// one accumulator. Column reduction (innermost dim kept): rows of the output's innermost dim,
// tiles of 256 accumulators, the reduced positions outside, the kept dim inside.
// Returns the loop and its row length (1 for row reductions: one output element per row).
StatusOr<std::pair<std::string, int64_t>> EmitReductionRows(const HloInstruction* r);
// Appends to `e` the reduction of output element `idx` of reduce `r` into `o<k>[i]`: the reduced
// positions in row-major order, combined sequentially after the init value.
Status EmitElementReduction(LoopEmitter& e, const HloInstruction* r, const LoopEmitter::Index& idx,
                            int64_t k);
// CUDA, a fusion whose one root is this f32/f64 add/mul/max/min reduce over at least
// kWarpReductionMin elements: the kernel body of one warp per output element (the thunk must
// launch kWarpReductionLanes threads per element: blocks and launch ranges are multiples of 32,
// so a warp never straddles two elements). Lane l accumulates reduced positions l, l + 32, ...
// from the identity, the lanes combine by __shfl_down_sync, lane 0 stores init (+) the result.
// nullopt when the form does not apply (the per-element loop is used instead).
inline constexpr int64_t kWarpReductionLanes = 32;
inline constexpr int64_t kWarpReductionMin = 64;
StatusOr<std::optional<std::string>> EmitWarpReduction(const HloInstruction* r);

}  // namespace oneflow_like::hlo::codegen
