// Compiling for an accelerator: the device-independent face of a device backend, so the lazy
// runtime can compile and run graphs on a device without including the backend's headers (the
// GPU backend exists only in --config=cuda builds).
//
// A backend registers a DeviceCompilerFn for its DeviceType at load time
// (compiler/backends/gpu/gpu_compile.cc registers CUDA); CompileForDevice finds it and fails with
// a clear error when this build has none. The DeviceExecutable it returns runs on the runtime's
// stream of the device (base/stream.h): Run enqueues and returns, in stream order.
//
//   ASSIGN_OR_RETURN(auto exe, CompileForDevice(std::move(module), options, cuda0));
//   RETURN_IF_ERROR(exe->Run(args, outs, stream));   // device addresses; stream: cuda:0's
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "compiler/compile.h"
#include "oneflow_like/base/stream.h"

namespace oneflow_like::hlo {

class DeviceExecutable {
 public:
  virtual ~DeviceExecutable() = default;
  // arguments[i] / outputs[k]: device addresses laid out as the module's parameters / result
  // leaves. Enqueues on `stream` (the runtime's stream of device(); library calls run the
  // runtime's kernels on it) and returns.
  virtual Status Run(absl::Span<const void* const> arguments, absl::Span<void* const> outputs,
                     oneflow_like::Stream* stream) = 0;
  virtual Device device() const = 0;
  virtual const HloModule& module() const = 0;
  virtual const BufferAssignment& buffer_assignment() const = 0;
  virtual std::string ThunksToString() const = 0;
  // One line of compile figures (passes, codegen, device code generation).
  virtual std::string StatsString() const = 0;
  // (output leaf, parameter) pairs written in place (see CompileOptions::donated).
  virtual const std::vector<std::pair<int64_t, int64_t>>& output_parameter_aliases() const = 0;
};

using DeviceCompilerFn = std::function<StatusOr<std::unique_ptr<DeviceExecutable>>(
    std::unique_ptr<HloModule> module, const CompileOptions& options, const Device& device)>;

void RegisterDeviceCompiler(DeviceType type, DeviceCompilerFn fn);
// Unimplemented naming the device when this build has no compiler for its type.
StatusOr<std::unique_ptr<DeviceExecutable>> CompileForDevice(std::unique_ptr<HloModule> module,
                                                             const CompileOptions& options,
                                                             const Device& device);

}  // namespace oneflow_like::hlo
