// Loop nests around the emitted bodies. C++ dialect: row loops over [begin, end) in rows of n
// (`RowLoop`), and the search for the longest row whose accesses stay affine in j
// (`EmitElementwiseRows`). Both dialects: the per-element loop (`EmitElementLoop`): a C++ for
// over [begin, end), or one CUDA thread per element.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/ir/hlo_instruction.h"

namespace oneflow_like::hlo::codegen {

// `code` with every line indented by n spaces.
std::string Indent(const std::string& code, int n);
// The row loop over [begin, end) in rows of n: `rb` = row start, j in [j0, j1).
std::string RowLoop(int64_t n, const std::string& body);
// Elementwise roots (one or several outputs of one shape): (loop, row length) in rows of the
// largest trailing block whose accesses are all affine in j; nullopt where no block of at least
// 4 elements is.
StatusOr<std::optional<std::pair<std::string, int64_t>>> EmitElementwiseRows(
    const std::vector<const HloInstruction*>& roots);
// One iteration per output element of `roots` (elementwise or reduce roots, one shape): the loop
// opener, its body and the closing brace of the loop (not of the function).
StatusOr<std::string> EmitElementLoop(const std::vector<const HloInstruction*>& roots,
                                      KernelDialect dialect);

}  // namespace oneflow_like::hlo::codegen
