// DotDecomposer: rewrites every dot the GEMM thunk cannot take directly into
// transpose/reshape -> dot [B,M,K]x[B,K,N] (or [M,K]x[K,N]) -> reshape. A GEMM-able dot has at
// most one leading batch dim, rank batch+2 operands and one contracting dim (either of the last
// two: BLAS transposes for free). Runs before layout assignment; the transposes fuse later.
#pragma once
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo {

class DotDecomposer {
 public:
  static const char* name() { return "dot-decomposer"; }
  static StatusOr<bool> Run(HloModule* module);
};
bool IsCanonicalDot(const HloInstruction& dot);

}  // namespace oneflow_like::hlo
