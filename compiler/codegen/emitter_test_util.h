// Test helpers for the fused-loop emitter: fused modules as IR text in, kernels JIT-compiled
// (C++ dialect) and run over many [begin, end) splittings (all must give identical bytes),
// compared with the reference evaluator.
#pragma once
#include <memory>
#include <string>

#include "compiler/codegen/fused_loop_emitter.h"
#include "compiler/ir/hlo_module.h"

namespace oneflow_like::hlo::testing {

// Parses a module; the entry's instruction names get a `_e` suffix (names are module-wide, the
// tests write them like the fused computation's, for readability).
StatusOr<std::unique_ptr<HloModule>> Parse(const std::string& text);
// Compiles the entry root fusion of `text` (C++ dialect), runs it over the splittings, compares
// with the evaluator (relative `tol`) and returns the kernel source (for pattern checks).
std::string CheckFusion(const std::string& text, double tol = 1e-5);
// The kernel source of the entry root fusion of `text` in `dialect` (test failure if it fails).
StatusOr<KernelSource> EmitEntryFusion(const std::string& text, KernelDialect dialect);
bool Has(const std::string& code, const std::string& s);

}  // namespace oneflow_like::hlo::testing
