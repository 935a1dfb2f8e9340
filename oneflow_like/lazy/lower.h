// Lowering a Trace to an HLO module. Each op family registers lowerings for its ops
// (oneflow_like/lazy/lowering/<family>.cc); an op without one becomes a custom-call
// "ofl.kernel.<op>" that runs the op's registered device kernel at run time, so every op in the
// library works in graph mode while lowered ops fuse.
//
// Module signature: parameters = graph inputs (in order) then captured eager tensors (in capture
// order), then (when a lowered op draws random numbers) an s32[] seed; result = tuple(graph
// outputs..., final values of assigned captures...).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/hlo_builder.h"
#include "oneflow_like/lazy/trace.h"

namespace oneflow_like {
namespace lazy {

// Where the module will run, and what its backend cannot: a device backend without some HLO
// (the GPU has no convolution thunk) gets those ops as calls of their device kernels.
struct LowerOptions {
  Device device = Device::CPU();
  // Every op as a kernel call (views as strided copies): a device backend's last resort, which
  // needs nothing of its code generator.
  bool all_kernel_calls = false;
};

class LowerCtx {
 public:
  LowerCtx(hlo::HloBuilder* b, std::vector<hlo::HloInstruction*>* values, const Trace* trace,
           const LowerOptions& options = {})
      : b_(b), values_(values), trace_(trace), options_(options) {}
  hlo::HloBuilder& b() { return *b_; }
  // The device the module is lowered for.
  const Device& device() const { return options_.device; }
  hlo::HloInstruction* in(const TracedOp& op, int i) const { return (*values_)[op.inputs[i]]; }
  const TensorMeta& in_meta(const TracedOp& op, int i) const {
    return trace_->values()[op.inputs[i]].meta;
  }
  const TensorMeta& out_meta(const TracedOp& op, int i) const {
    return trace_->values()[op.outputs[i]].meta;
  }
  void set(const TracedOp& op, int i, hlo::HloInstruction* h) { (*values_)[op.outputs[i]] = h; }
  // Lowers `op` as a call of its device kernel (the generic fallback).
  Status LowerAsKernelCall(const TracedOp& op);
  hlo::HloInstruction* Scalar(DType t, double v) { return b_->ScalarConstant(t, v); }
  // The module's random-seed parameter (s32[], after the captures), created on first use: the
  // graph feeds it a fresh value on every run, so lowered random ops (dropout) draw new numbers
  // each run while an op and its gradient (same traced seed) agree within the run.
  hlo::HloInstruction* RngSeed() {
    if (rng_seed_ == nullptr) rng_seed_ = b_->Parameter(hlo::HloShape(DType::kI32, {}), "rng_seed");
    return rng_seed_;
  }
  bool uses_rng_seed() const { return rng_seed_ != nullptr; }

 private:
  hlo::HloBuilder* b_;
  std::vector<hlo::HloInstruction*>* values_;
  const Trace* trace_;
  LowerOptions options_;
  hlo::HloInstruction* rng_seed_ = nullptr;
};

using LowerFn = Status (*)(LowerCtx& ctx, const TracedOp& op);
void RegisterLowering(const char* op, LowerFn fn);
struct LoweringRegistrar {
  LoweringRegistrar(const char* op, LowerFn fn) { RegisterLowering(op, fn); }
};
#define OFL_REGISTER_LOWERING(op, fn) \
  static ::oneflow_like::lazy::LoweringRegistrar OFL_CONCAT(_ofl_lower_reg_, __LINE__)(#op, fn)

struct LowerStats {
  int64_t lowered = 0, kernel_calls = 0;
  bool rng_seed_parameter = false;           // the module's last parameter is LowerCtx::RngSeed()
  std::vector<std::string> kernel_call_ops;  // ops that fell back to their kernels
};

StatusOr<std::unique_ptr<hlo::HloModule>> LowerTrace(const Trace& trace, const std::string& name,
                                                     LowerStats* stats,
                                                     const LowerOptions& options = {});

// Attribute (de)serialisation for kernel custom-calls: `name:t=value;...`.
std::string EncodeAttrs(const AttrMap& attrs);
StatusOr<AttrMap> DecodeAttrs(const std::string& text);

}  // namespace lazy
}  // namespace oneflow_like
