// FusedLoopEmitter: turns a fusion (loop fusion, reduction-rooted input fusion, or multi-output
// loop fusion) into the source of one kernel that computes `num_elements` output elements.
// One emitter, two dialects that differ only in the function header, the loop/thread mapping and
// math spellings: C++ (CPU: compiled by the system compiler) and CUDA C++ (GPU: NVRTC).
//   C++ ABI:  extern "C" void name(char** args, int64_t begin, int64_t end)
//   CUDA ABI: extern "C" __global__ void name(char** args, int64_t begin, int64_t end)
// args = the fusion's operands in order, then its outputs (array leaves); buffers row-major.
// The C++ dialect emits row loops (outer indices once per row, an inner loop affine in j that the
// compiler vectorises); the CUDA dialect one thread per output element.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/hlo_instruction.h"

namespace oneflow_like::hlo {

enum class KernelDialect { kCpp, kCuda };

struct KernelSource {
  std::string name;
  std::string code;          // the function only; prepend KernelPrelude() once per file
  int64_t num_elements = 0;  // iteration space: output elements
  int64_t num_args = 0;
  // C++ dialect: the kernel runs rows of `row` output elements (any [begin, end) is valid; ranges
  // of whole rows avoid partial rows). The library also exports `const int64_t <name>_row`.
  int64_t row = 1;
};

// Unimplemented for what the emitter does not cover (f16/bf16, gather, non-kind reductions,
// reductions not at the root, array constants): callers fall back to another thunk.
// `aliased`: (output index, operand index) pairs the caller runs on one buffer (an in-place
// update); those pointers are emitted without __restrict__ (the compiler then checks the overlap
// at run time, and equal pointers still take the vector loop). Every output element is computed
// from loads made before any store of that element's iteration.
StatusOr<KernelSource> EmitFusionKernel(
    const HloInstruction& fusion, const std::string& name, KernelDialect dialect,
    const std::vector<std::pair<int64_t, int64_t>>& aliased = {});
// Includes and helpers every generated file starts with.
std::string KernelPrelude(KernelDialect dialect);

}  // namespace oneflow_like::hlo
