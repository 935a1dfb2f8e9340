// Elemental expressions, shared by both dialects and both loop emitters: the C type of an element
// type, literals, the expression of one elementwise HLO op over its operands' values, and the
// combiner / identity of a reduction kind. Pure string building: no loop or index knowledge.
#pragma once
#include <string>
#include <vector>

#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/ir/hlo_instruction.h"

namespace oneflow_like::hlo::codegen {

// The C type of a value of `t` (Unimplemented for f16/bf16 and others the emitter lacks).
StatusOr<std::string> CType(DType t);
// The element type of a kernel's buffer pointers: the value type, except that the C++ dialect
// reads and writes pred buffers (one byte, 0 or 1) as unsigned char. GCC 12 does not vectorise a
// loop that loads `bool` and selects with it ("no vectype"; a fused batch-norm-backward reduction
// ran scalar), while the same loop over unsigned char converted to bool vectorises.
StatusOr<std::string> BufferCType(DType t, KernelDialect dialect);
int64_t Product(const DimVector& d);
// A scalar constant `v` of element type `t` spelled in C type `type` (NaN/inf via the prelude).
std::string LiteralExpr(DType t, double v, const std::string& type);
// The expression of elementwise `inst` of C type T over operand values `a` (both dialects).
StatusOr<std::string> ElementwiseExpr(const HloInstruction* inst, const std::vector<std::string>& a,
                                      const std::string& T, KernelDialect dialect);
// `acc` combined with `v` by reduction kind `k`.
std::string Combine(ReduceKind k, const std::string& acc, const std::string& v,
                    const std::string& T);
// Identity of `k` for lane accumulators (floating types only).
std::string Identity(ReduceKind k, const std::string& T);

}  // namespace oneflow_like::hlo::codegen
