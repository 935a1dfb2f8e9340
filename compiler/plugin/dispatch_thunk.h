// DispatchThunk: runs one plugin partition (a dispatch op, partitioner.h) through the plugin's
// dispatch library (ofl_dispatch.h). Create loads the library (from the compiler plugin's folder
// first), makes a device context and loads the bytecode, so a missing or refused library fails
// the compilation, naming it. ExecuteOnStream binds the run's buffers, invokes and waits; an
// error names the plugin and the partition, and leaves the thunk usable for the next run.
// When the dispatch library cannot be loaded (an AOT artifact on a machine without it) and the op
// still holds its original partition, Create compiles that for the CPU instead (through the
// compiler registered by compiler/compile.cc) and says so (stderr, fallback_reason()).
#pragma once
#include <memory>
#include <mutex>

#include "compiler/ir/hlo_instruction.h"
#include "compiler/plugin/dispatch_config.h"
#include "compiler/plugin/plugin_loader.h"
#include "compiler/thunks/thunk.h"

namespace oneflow_like::hlo::plugin {

// An outlined partition compiled for the CPU backend (the fallback above).
class CpuPartition {
 public:
  virtual ~CpuPartition() = default;
  virtual Status Run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) = 0;
};
using CpuPartitionCompiler = StatusOr<std::unique_ptr<CpuPartition>> (*)(const std::string& hlo);
void SetCpuPartitionCompiler(CpuPartitionCompiler compiler);

class DispatchThunk : public Thunk {
 public:
  static StatusOr<std::unique_ptr<DispatchThunk>> Create(const HloInstruction& dispatch,
                                                         std::vector<BufferSlice> inputs,
                                                         std::vector<BufferSlice> outputs);
  ~DispatchThunk() override;
  Status ExecuteOnStream(const ExecuteParams& params) override;
  // Why the partition runs on the CPU, or "" when it runs through its dispatch library.
  const std::string& fallback_reason() const { return fallback_reason_; }

 protected:
  std::string Details() const override;

 private:
  DispatchThunk(std::string name) : Thunk(Kind::kDispatch, std::move(name)) {}
  Status Fail(const Status& s) const;

  DispatchConfig config_;
  std::shared_ptr<const DispatchLibrary> lib_;
  OflDispatchDeviceContext* context_ = nullptr;
  OflDispatchInvocation* invocation_ = nullptr;
  std::vector<BufferSlice> inputs_, outputs_;
  std::unique_ptr<CpuPartition> cpu_;
  std::string fallback_reason_;
  std::mutex mu_;  // one run at a time per invocation context
};

}  // namespace oneflow_like::hlo::plugin
