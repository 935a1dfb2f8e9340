// The OpenCL compiler plugin: the C ABI of compiler/plugin/ofl_compiler_plugin.h over
// opencl_codegen.h. It needs no OpenCL runtime itself (AOT compiles run anywhere); its dispatch
// library, libofl_opencl_dispatch.so, builds and runs the generated OpenCL C.
#include <string>
#include <vector>

#include "compiler/plugin/ofl_compiler_plugin.h"
#include "plugins/opencl/opencl_codegen.h"

struct OflCompilerPlugin {
  std::vector<std::string> reasons;  // Partition's answers, alive until Destroy
};
struct OflCompiledResult {
  std::vector<std::string> bytecode, entry;
};

namespace {
thread_local std::string g_error;

OflStatus Fail(OflStatus code, std::string message) {
  g_error = std::move(message);
  return code;
}
}  // namespace

extern "C" {

OflStatus OflCompilerPluginGetApiVersion(OflApiVersion* v) {
  if (v == nullptr) return Fail(kOflErrorInvalidArgument, "null version");
  *v = {OFL_PLUGIN_API_VERSION_MAJOR, OFL_PLUGIN_API_VERSION_MINOR, OFL_PLUGIN_API_VERSION_PATCH};
  return kOflOk;
}
const char* OflCompilerPluginManufacturer(void) {
  return "OpenCL";
}
const char* OflCompilerPluginSupportedHardware(void) {
  return "any OpenCL 1.2 device (tested: PoCL CPU)";
}
const char* OflCompilerPluginDispatchLibrary(void) {
  return "libofl_opencl_dispatch.so";
}
const char* OflCompilerPluginGetLastError(void) {
  return g_error.c_str();
}

OflStatus OflCompilerPluginCreate(OflCompilerPlugin** plugin) {
  if (plugin == nullptr) return Fail(kOflErrorInvalidArgument, "null plugin");
  *plugin = new OflCompilerPlugin();
  return kOflOk;
}
void OflCompilerPluginDestroy(OflCompilerPlugin* plugin) {
  delete plugin;
}

OflStatus OflCompilerPluginPartition(OflCompilerPlugin* plugin, const OflGraphView* graph,
                                     OflSelection* selection) {
  if (plugin == nullptr || graph == nullptr || selection == nullptr ||
      selection->num_ops != graph->num_ops)
    return Fail(kOflErrorInvalidArgument, "Partition: bad arguments");
  plugin->reasons.assign(graph->num_ops, "");
  for (int32_t i = 0; i < graph->num_ops; ++i) {
    plugin->reasons[i] = ofl_opencl::UnsupportedReason(*graph, i);
    if (plugin->reasons[i].empty())
      selection->partition_index[i] = OFL_ANY_PARTITION;
    else
      selection->reason[i] = plugin->reasons[i].c_str();
  }
  return kOflOk;
}

OflStatus OflCompilerPluginCompile(OflCompilerPlugin* plugin, const OflGraphView* const* partitions,
                                   int32_t num_partitions, OflCompiledResult** result) {
  if (plugin == nullptr || result == nullptr || (num_partitions > 0 && partitions == nullptr))
    return Fail(kOflErrorInvalidArgument, "Compile: bad arguments");
  auto r = new OflCompiledResult();
  for (int32_t k = 0; k < num_partitions; ++k) {
    std::string error, prefix = "ofl_p" + std::to_string(k);
    std::string code = ofl_opencl::CompilePartition(*partitions[k], prefix, &error);
    if (code.empty()) {
      delete r;
      return Fail(kOflErrorCompilation,
                  std::string("partition ") + partitions[k]->name + ": " + error);
    }
    r->bytecode.push_back(std::move(code));
    r->entry.push_back(prefix);
  }
  *result = r;
  return kOflOk;
}

int32_t OflCompiledResultNumPartitions(const OflCompiledResult* r) {
  return r ? static_cast<int32_t>(r->bytecode.size()) : 0;
}
OflStatus OflCompiledResultGetBytecode(const OflCompiledResult* r, int32_t i, const void** data,
                                       size_t* size) {
  if (r == nullptr || i < 0 || i >= static_cast<int32_t>(r->bytecode.size()))
    return Fail(kOflErrorInvalidArgument, "GetBytecode: no such partition");
  *data = r->bytecode[i].data();
  *size = r->bytecode[i].size();
  return kOflOk;
}
OflStatus OflCompiledResultGetCallInfo(const OflCompiledResult* r, int32_t i,
                                       const char** entry_point) {
  if (r == nullptr || i < 0 || i >= static_cast<int32_t>(r->entry.size()))
    return Fail(kOflErrorInvalidArgument, "GetCallInfo: no such partition");
  *entry_point = r->entry[i].c_str();
  return kOflOk;
}
void OflCompiledResultDestroy(OflCompiledResult* r) {
  delete r;
}

}  // extern "C"
