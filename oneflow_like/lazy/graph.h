// CompiledGraph: a traced nn.Graph lowered to HLO, compiled by compiler/ and run as one
// LaunchLazyJob instruction per call. Captured eager tensors (parameters, buffers, optimizer
// state) are bound by reference: each run reads their current values and writes back the ones
// the graph assigns (an optimizer step updates the parameters in place).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/device_compile.h"
#include "oneflow_like/lazy/lower.h"
#include "oneflow_like/lazy/trace.h"

namespace oneflow_like {
namespace lazy {

struct GraphCompileInfo {
  double trace_seconds = 0, lower_seconds = 0, compile_seconds = 0;
  LowerStats lower;
  std::string hlo_before, hlo_after, thunks, buffer_report;
  hlo::plugin::PluginReport plugin_report;  // empty when no compiler plugin was offered
  // A graph on a device whose HLO the device's compiler refused (the reason): it was lowered
  // again with every op as a call of its device kernel. Empty otherwise.
  std::string device_fallback;
  std::string device_stats;  // the device compiler's figures (empty on the CPU)
};

// The compiler plugins a graph is offered: library paths, or (unset) ONEFLOW_LIKE_PLUGINS.
using PluginPaths = std::optional<std::vector<std::string>>;

struct AssignScratch;  // launch_lazy_job_instruction_policy.h

class CompiledGraph {
 public:
  static StatusOr<std::shared_ptr<CompiledGraph>> Compile(const std::shared_ptr<Trace>& trace,
                                                          const std::string& name,
                                                          const PluginPaths& plugins = {});
  // A graph from a module with the signature LowerTrace gives (artifacts: oneflow_like/artifact):
  // parameters = inputs, then `captured`, then an s32 seed when `rng_seed_parameter`; result =
  // tuple(outputs..., new values of captured[assigned[k]]...).
  struct ModuleSpec {
    std::vector<TensorMeta> inputs, outputs;
    TensorList captured;
    std::vector<int64_t> assigned;
    bool rng_seed_parameter = false, random = false;
  };
  static StatusOr<std::shared_ptr<CompiledGraph>> FromModule(std::unique_ptr<hlo::HloModule> module,
                                                             ModuleSpec spec,
                                                             const std::string& name,
                                                             const PluginPaths& plugins = {});
  // Runs the graph on `inputs` (same signature as traced); returns its outputs.
  StatusOr<TensorList> Run(const TensorList& inputs);
  const GraphCompileInfo& info() const { return info_; }
  // (assigned captures written in place by the executable, all assigned captures)
  std::pair<int64_t, int64_t> in_place_counts() const {
    int64_t n = 0;
    for (bool b : in_place_) n += b;
    return {n, static_cast<int64_t>(in_place_.size())};
  }
  // The device every input, capture and output lives on.
  Device device() const { return device_; }
  // The CPU executable; only for graphs on the CPU (device() is CPU).
  const hlo::Executable& executable() const { return *exe_; }
  // The optimized module and its buffer assignment, on any device.
  const hlo::HloModule& compiled_module() const {
    return dev_exe_ ? dev_exe_->module() : exe_->module();
  }
  const hlo::BufferAssignment& buffer_assignment() const {
    return dev_exe_ ? dev_exe_->buffer_assignment() : exe_->buffer_assignment();
  }
  int64_t num_inputs() const { return static_cast<int64_t>(input_metas_.size()); }
  // What an exporter needs besides info().hlo_before.
  const std::vector<TensorMeta>& input_metas() const { return input_metas_; }
  const std::vector<TensorMeta>& output_metas() const { return output_metas_; }
  const TensorList& captured() const { return captured_; }
  const std::vector<int64_t>& assigned() const { return assigned_; }
  bool has_random() const { return has_random_; }

 private:
  // Compiles `module` and checks the captures; inputs/outputs/captured/assigned and device_ are
  // set. `trace` (null for artifacts) lets a device graph be lowered again as kernel calls.
  Status Finish(std::unique_ptr<hlo::HloModule> module, const PluginPaths& plugins,
                const Trace* trace);
  // The graph's device: every input, capture and output must be on it. Also records
  // captured_metas_.
  Status FindDevice();
  // dev_exe_ from `module`, or when the device's compiler lacks something, from `trace` lowered
  // again with every op a kernel call.
  Status CompileOnDevice(std::unique_ptr<hlo::HloModule> module, const hlo::CompileOptions& options,
                         const Trace* trace);

  std::string name_;
  Device device_ = Device::CPU();
  std::shared_ptr<hlo::Executable> exe_;            // CPU graphs
  std::shared_ptr<hlo::DeviceExecutable> dev_exe_;  // graphs on a device

  std::vector<TensorMeta> input_metas_, output_metas_;
  std::vector<Tensor> captured_;
  // The captures' shapes, dtypes and devices when compiled: Run refuses a capture changed since
  // (x.data = y, resize_, set_ rebind a parameter's tensor object).
  std::vector<TensorMeta> captured_metas_;
  std::vector<int64_t> assigned_;  // capture indices, in result order after the outputs
  std::vector<bool> in_place_;     // per assigned capture: the executable writes it in place
  std::shared_ptr<AssignScratch> scratch_;
  bool has_random_ = false;  // some traced op draws random numbers (attr "seed")
  GraphCompileInfo info_;
};

}  // namespace lazy
}  // namespace oneflow_like
