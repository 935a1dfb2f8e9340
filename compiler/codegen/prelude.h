// The text every generated file starts with (`KernelPrelude` in fused_loop_emitter.h): a
// dialect part (includes or typedefs, `OFL_FN`, NaN/inf, the C++ dialect's vectorisable expf)
// followed by the helpers both dialects share (NaN-propagating max/min, integer division and
// abs, wrapping i32/i64 arithmetic, logical shifts). Elemental expressions call them by name.
#pragma once
#include <string>

namespace oneflow_like::hlo::codegen {

// C++ dialect (system compiler): standard headers, `OFL_FN` = static inline, ofl_expf.
std::string CppPrelude();
// CUDA dialect (NVRTC, no standard headers): fixed-width typedefs, `OFL_FN` = __device__ inline.
std::string CudaPrelude();
// Helpers of both dialects, written once over `OFL_FN`.
std::string SharedPrelude();

}  // namespace oneflow_like::hlo::codegen
