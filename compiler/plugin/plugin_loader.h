// Loading compiler plugins and dispatch libraries (the C ABIs of ofl_compiler_plugin.h and
// ofl_dispatch.h). A library is refused at load, with an error naming it, when it lacks any ABI
// symbol (the error names the symbol) or reports another major API version (the error names
// both versions). Loaded libraries are cached per path for the life of the process (they are
// never dlclose'd: compiled executables keep pointers into them).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compiler/plugin/ofl_compiler_plugin.h"
#include "compiler/plugin/ofl_dispatch.h"
#include "oneflow_like/base/status.h"

namespace oneflow_like::hlo::plugin {

// One partition compiled by a plugin: bytecode for its dispatch library + entry point.
struct CompiledPartition {
  std::string bytecode;
  std::string entry_point;
};

class CompilerPluginLibrary {
 public:
  // `path`: a file path, or a bare name dlopen searches for.
  static StatusOr<std::shared_ptr<CompilerPluginLibrary>> Load(const std::string& path);
  ~CompilerPluginLibrary();

  const std::string& path() const { return path_; }
  const std::string& manufacturer() const { return manufacturer_; }
  const std::string& hardware() const { return hardware_; }
  const std::string& dispatch_library() const { return dispatch_library_; }
  OflApiVersion version() const { return version_; }
  // "manufacturer (libfile.so)": how errors name the plugin.
  std::string DisplayName() const;

  // Fills `selection` (preset by the caller, see OflSelection).
  Status Partition(const OflGraphView& graph, OflSelection* selection) const;
  StatusOr<std::vector<CompiledPartition>> Compile(
      const std::vector<const OflGraphView*>& partitions) const;

 private:
  CompilerPluginLibrary() = default;
  Status Error(const char* call, OflStatus code) const;
  struct Fns;
  std::unique_ptr<Fns> fns_;
  void* handle_ = nullptr;
  OflCompilerPlugin* instance_ = nullptr;
  std::string path_, manufacturer_, hardware_, dispatch_library_;
  OflApiVersion version_{};
};

// The dispatch ABI's functions, resolved and version-checked; initialized once.
struct DispatchLibrary {
  std::string path;
  OflApiVersion version{};
  OflStatus (*get_api_version)(OflApiVersion*) = nullptr;
  const char* (*get_last_error)() = nullptr;
  OflStatus (*initialize)(const char*) = nullptr;
  OflStatus (*context_create)(OflDispatchDeviceContext**) = nullptr;
  void (*context_destroy)(OflDispatchDeviceContext*) = nullptr;
  OflStatus (*load_bytecode)(OflDispatchDeviceContext*, const void*, size_t, const char*,
                             OflDispatchInvocation**) = nullptr;
  void (*unload_bytecode)(OflDispatchInvocation*) = nullptr;
  int32_t (*num_inputs)(const OflDispatchInvocation*) = nullptr;
  int32_t (*num_outputs)(const OflDispatchInvocation*) = nullptr;
  OflStatus (*bind_input)(OflDispatchInvocation*, int32_t, const void*, size_t) = nullptr;
  OflStatus (*bind_output)(OflDispatchInvocation*, int32_t, void*, size_t) = nullptr;
  OflStatus (*invoke)(OflDispatchInvocation*) = nullptr;
  OflStatus (*wait)(OflDispatchInvocation*) = nullptr;

  // `name`: a path, or a file name looked up in `search_dir` first, then by dlopen.
  static StatusOr<std::shared_ptr<const DispatchLibrary>> Load(const std::string& name,
                                                               const std::string& search_dir = "");
  // "[dispatch libx.so] <call> failed (code N): <message>"
  Status Error(const char* call, OflStatus code) const;
};

// The plugins named by ONEFLOW_LIKE_PLUGINS (paths separated by ':'), loaded; empty if unset.
StatusOr<std::vector<std::shared_ptr<CompilerPluginLibrary>>> PluginsFromEnv();

// Every exported name of the two ABIs (the exported-symbols tests compare against these).
const std::vector<std::string>& CompilerPluginSymbols();
const std::vector<std::string>& DispatchSymbols();

}  // namespace oneflow_like::hlo::plugin
