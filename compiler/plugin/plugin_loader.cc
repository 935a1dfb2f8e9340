#include "compiler/plugin/plugin_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/strings/str_split.h"

namespace oneflow_like::hlo::plugin {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

StatusOr<void*> Open(const std::string& path, const char* what) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    return InvalidArgument("[%s %s] cannot load: %s", what, path, e ? e : "dlopen failed");
  }
  return h;
}

// Resolves `symbol` into `*fn`; a missing one refuses the library, naming both.
template <typename Fn>
Status Resolve(void* handle, const std::string& path, const char* what, const char* symbol,
               Fn* fn) {
  void* p = dlsym(handle, symbol);
  if (p == nullptr)
    return InvalidArgument("[%s %s] refused: it does not export the ABI symbol %s", what,
                           BaseName(path), symbol);
  *fn = reinterpret_cast<Fn>(p);
  return absl::OkStatus();
}

Status CheckVersion(const OflApiVersion& v, const std::string& path, const char* what) {
  if (v.major != OFL_PLUGIN_API_VERSION_MAJOR)
    return InvalidArgument(
        "[%s %s] refused: it was built for plugin API %d.%d.%d, this runtime implements %d.%d.%d "
        "(major versions must match)",
        what, BaseName(path), v.major, v.minor, v.patch, OFL_PLUGIN_API_VERSION_MAJOR,
        OFL_PLUGIN_API_VERSION_MINOR, OFL_PLUGIN_API_VERSION_PATCH);
  return absl::OkStatus();
}

const char* Str(const char* s) {
  return s ? s : "";
}

}  // namespace

struct CompilerPluginLibrary::Fns {
  OflStatus (*get_api_version)(OflApiVersion*);
  const char* (*manufacturer)();
  const char* (*supported_hardware)();
  const char* (*dispatch_library)();
  const char* (*get_last_error)();
  OflStatus (*create)(OflCompilerPlugin**);
  void (*destroy)(OflCompilerPlugin*);
  OflStatus (*partition)(OflCompilerPlugin*, const OflGraphView*, OflSelection*);
  OflStatus (*compile)(OflCompilerPlugin*, const OflGraphView* const*, int32_t,
                       OflCompiledResult**);
  int32_t (*num_partitions)(const OflCompiledResult*);
  OflStatus (*get_bytecode)(const OflCompiledResult*, int32_t, const void**, size_t*);
  OflStatus (*get_call_info)(const OflCompiledResult*, int32_t, const char**);
  void (*result_destroy)(OflCompiledResult*);
};

StatusOr<std::shared_ptr<CompilerPluginLibrary>> CompilerPluginLibrary::Load(
    const std::string& path) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::shared_ptr<CompilerPluginLibrary>>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(path); it != cache->end()) return it->second;
  const char* what = "compiler plugin";
  ASSIGN_OR_RETURN(void* h, Open(path, what));
  auto lib = std::shared_ptr<CompilerPluginLibrary>(new CompilerPluginLibrary());
  lib->handle_ = h;
  lib->path_ = path;
  lib->fns_ = std::make_unique<Fns>();
  Fns& f = *lib->fns_;
  // Version first: a library of another major version may name its functions differently.
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginGetApiVersion", &f.get_api_version));
  if (f.get_api_version(&lib->version_) != kOflOk)
    return InvalidArgument("[%s %s] refused: OflCompilerPluginGetApiVersion failed", what,
                           BaseName(path));
  RETURN_IF_ERROR(CheckVersion(lib->version_, path, what));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginManufacturer", &f.manufacturer));
  RETURN_IF_ERROR(
      Resolve(h, path, what, "OflCompilerPluginSupportedHardware", &f.supported_hardware));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginDispatchLibrary", &f.dispatch_library));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginGetLastError", &f.get_last_error));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginCreate", &f.create));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginDestroy", &f.destroy));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginPartition", &f.partition));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompilerPluginCompile", &f.compile));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompiledResultNumPartitions", &f.num_partitions));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompiledResultGetBytecode", &f.get_bytecode));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompiledResultGetCallInfo", &f.get_call_info));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflCompiledResultDestroy", &f.result_destroy));
  lib->manufacturer_ = Str(f.manufacturer());
  lib->hardware_ = Str(f.supported_hardware());
  lib->dispatch_library_ = Str(f.dispatch_library());
  if (OflStatus s = f.create(&lib->instance_); s != kOflOk) return lib->Error("Create", s);
  cache->emplace(path, lib);
  return lib;
}

CompilerPluginLibrary::~CompilerPluginLibrary() {
  if (instance_ != nullptr) fns_->destroy(instance_);
}

std::string CompilerPluginLibrary::DisplayName() const {
  return absl::StrCat(manufacturer_, " (", BaseName(path_), ")");
}

Status CompilerPluginLibrary::Error(const char* call, OflStatus code) const {
  return absl::InternalError(absl::StrFormat("[plugin %s] %s failed (code %d): %s", DisplayName(),
                                             call, static_cast<int>(code),
                                             Str(fns_->get_last_error())));
}

Status CompilerPluginLibrary::Partition(const OflGraphView& graph, OflSelection* selection) const {
  if (OflStatus s = fns_->partition(instance_, &graph, selection); s != kOflOk)
    return Error("Partition", s);
  return absl::OkStatus();
}

StatusOr<std::vector<CompiledPartition>> CompilerPluginLibrary::Compile(
    const std::vector<const OflGraphView*>& partitions) const {
  OflCompiledResult* result = nullptr;
  if (OflStatus s = fns_->compile(instance_, partitions.data(),
                                  static_cast<int32_t>(partitions.size()), &result);
      s != kOflOk)
    return Error("Compile", s);
  std::unique_ptr<OflCompiledResult, void (*)(OflCompiledResult*)> owned(result,
                                                                         fns_->result_destroy);
  const int32_t n = fns_->num_partitions(result);
  if (n != static_cast<int32_t>(partitions.size()))
    return absl::InternalError(absl::StrFormat("[plugin %s] Compile returned %d partitions for %d",
                                               DisplayName(), n,
                                               static_cast<int>(partitions.size())));
  std::vector<CompiledPartition> out(n);
  for (int32_t i = 0; i < n; ++i) {
    const void* data = nullptr;
    size_t size = 0;
    const char* entry = nullptr;
    if (OflStatus s = fns_->get_bytecode(result, i, &data, &size); s != kOflOk)
      return Error("CompiledResultGetBytecode", s);
    if (OflStatus s = fns_->get_call_info(result, i, &entry); s != kOflOk)
      return Error("CompiledResultGetCallInfo", s);
    out[i].bytecode.assign(static_cast<const char*>(data), size);
    out[i].entry_point = Str(entry);
  }
  return out;
}

StatusOr<std::shared_ptr<const DispatchLibrary>> DispatchLibrary::Load(
    const std::string& name, const std::string& search_dir) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::shared_ptr<const DispatchLibrary>>();
  std::lock_guard<std::mutex> lock(mu);
  std::string path = name;
  if (name.find('/') == std::string::npos && !search_dir.empty()) {
    const std::string local = search_dir + "/" + name;
    if (FILE* f = std::fopen(local.c_str(), "rb")) {
      std::fclose(f);
      path = local;
    }
  }
  if (auto it = cache->find(path); it != cache->end()) return it->second;
  const char* what = "dispatch library";
  ASSIGN_OR_RETURN(void* h, Open(path, what));
  auto lib = std::make_shared<DispatchLibrary>();
  lib->path = path;
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchGetApiVersion", &lib->get_api_version));
  if (lib->get_api_version(&lib->version) != kOflOk)
    return InvalidArgument("[%s %s] refused: OflDispatchGetApiVersion failed", what,
                           BaseName(path));
  RETURN_IF_ERROR(CheckVersion(lib->version, path, what));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchGetLastError", &lib->get_last_error));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchInitialize", &lib->initialize));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchDeviceContextCreate", &lib->context_create));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchDeviceContextDestroy", &lib->context_destroy));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchLoadBytecode", &lib->load_bytecode));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchUnloadBytecode", &lib->unload_bytecode));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchNumInputs", &lib->num_inputs));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchNumOutputs", &lib->num_outputs));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchBindInput", &lib->bind_input));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchBindOutput", &lib->bind_output));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchInvoke", &lib->invoke));
  RETURN_IF_ERROR(Resolve(h, path, what, "OflDispatchWait", &lib->wait));
  if (OflStatus s = lib->initialize(nullptr); s != kOflOk) return lib->Error("Initialize", s);
  cache->emplace(path, lib);
  return std::shared_ptr<const DispatchLibrary>(lib);
}

Status DispatchLibrary::Error(const char* call, OflStatus code) const {
  return absl::InternalError(absl::StrFormat("[dispatch %s] %s failed (code %d): %s",
                                             BaseName(path), call, static_cast<int>(code),
                                             Str(get_last_error())));
}

StatusOr<std::vector<std::shared_ptr<CompilerPluginLibrary>>> PluginsFromEnv() {
  std::vector<std::shared_ptr<CompilerPluginLibrary>> out;
  const char* env = std::getenv("ONEFLOW_LIKE_PLUGINS");
  if (env == nullptr) return out;
  for (absl::string_view p : absl::StrSplit(env, ':', absl::SkipEmpty())) {
    ASSIGN_OR_RETURN(auto lib, CompilerPluginLibrary::Load(std::string(p)));
    out.push_back(std::move(lib));
  }
  return out;
}

const std::vector<std::string>& CompilerPluginSymbols() {
  static const auto* s = new std::vector<std::string>{
      "OflCompiledResultDestroy",          "OflCompiledResultGetBytecode",
      "OflCompiledResultGetCallInfo",      "OflCompiledResultNumPartitions",
      "OflCompilerPluginCompile",          "OflCompilerPluginCreate",
      "OflCompilerPluginDestroy",          "OflCompilerPluginDispatchLibrary",
      "OflCompilerPluginGetApiVersion",    "OflCompilerPluginGetLastError",
      "OflCompilerPluginManufacturer",     "OflCompilerPluginPartition",
      "OflCompilerPluginSupportedHardware"};
  return *s;
}

const std::vector<std::string>& DispatchSymbols() {
  static const auto* s = new std::vector<std::string>{"OflDispatchBindInput",
                                                      "OflDispatchBindOutput",
                                                      "OflDispatchDeviceContextCreate",
                                                      "OflDispatchDeviceContextDestroy",
                                                      "OflDispatchGetApiVersion",
                                                      "OflDispatchGetLastError",
                                                      "OflDispatchInitialize",
                                                      "OflDispatchInvoke",
                                                      "OflDispatchLoadBytecode",
                                                      "OflDispatchNumInputs",
                                                      "OflDispatchNumOutputs",
                                                      "OflDispatchUnloadBytecode",
                                                      "OflDispatchWait"};
  return *s;
}

}  // namespace oneflow_like::hlo::plugin
