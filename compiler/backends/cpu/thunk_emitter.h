// ThunkEmitter (CPU): walks each scheduled computation and emits one thunk per instruction that
// does work: fusion -> Kernel (generated C++), dot -> Gemm, convolution -> Convolution,
// custom-call -> LibraryCall (a compiler plugin's dispatch op -> Dispatch), copy -> Copy,
// while/conditional -> nested sequences; aliases (parameter, constant, bitcast, tuple,
// get-tuple-element) emit nothing. Ops with no kernel fall back to an evaluator thunk, counted in
// the stats.
#pragma once
#include "absl/container/flat_hash_map.h"
#include <string>
#include <vector>

#include "compiler/ir/hlo_module.h"
#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo {

struct EmitStats {
  int64_t kernels = 0, gemms = 0, convolutions = 0, library_calls = 0, copies = 0, control_flow = 0,
          dispatches = 0;
  std::vector<std::string> evaluator_fallbacks;  // "name (opcode): reason"
  std::vector<std::string> dispatch_fallbacks;   // plugin partitions run on the CPU: "name: why"
  std::string ToString() const;
};

// Emits the entry computation; `kernel_source` receives every generated kernel (no prelude).
// `aliased` (optional): per fusion, the (output index, operand index) pairs that will share a
// buffer at run time (see EmitFusionKernel).
using FusionAliases =
    absl::flat_hash_map<const HloInstruction*, std::vector<std::pair<int64_t, int64_t>>>;
StatusOr<ThunkSequence> EmitThunks(const HloModule& module, const BufferAssignment& assignment,
                                   std::string* kernel_source, EmitStats* stats,
                                   const FusionAliases* aliased = nullptr);

}  // namespace oneflow_like::hlo
