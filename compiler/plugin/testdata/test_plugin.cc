// A small compiler plugin for the ABI tests: selects every f32 `tanh` as a partition of its own
// (explicit partition indices) and "compiles" it to the bytecode `tanh <elements>`, which
// libofl_test_dispatch.so runs on the host. ONEFLOW_LIKE_TEST_PLUGIN_FAIL=compile makes Compile
// fail. Built in variants: OFL_TEST_MAJOR (another API major version), OFL_TEST_OMIT_COMPILE
// (a missing symbol).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/plugin/ofl_compiler_plugin.h"

#ifndef OFL_TEST_MAJOR
#define OFL_TEST_MAJOR OFL_PLUGIN_API_VERSION_MAJOR
#endif

struct OflCompilerPlugin {
  int unused = 0;
};
struct OflCompiledResult {
  std::vector<std::string> bytecode, entry;
};

namespace {
thread_local std::string g_error;
}

extern "C" {

OflStatus OflCompilerPluginGetApiVersion(OflApiVersion* v) {
  *v = {OFL_TEST_MAJOR, OFL_PLUGIN_API_VERSION_MINOR, OFL_PLUGIN_API_VERSION_PATCH};
  return kOflOk;
}
const char* OflCompilerPluginManufacturer(void) {
  return "TestVendor";
}
const char* OflCompilerPluginSupportedHardware(void) {
  return "host";
}
const char* OflCompilerPluginDispatchLibrary(void) {
  return "libofl_test_dispatch.so";
}
const char* OflCompilerPluginGetLastError(void) {
  return g_error.c_str();
}

OflStatus OflCompilerPluginCreate(OflCompilerPlugin** p) {
  *p = new OflCompilerPlugin();
  return kOflOk;
}
void OflCompilerPluginDestroy(OflCompilerPlugin* p) {
  delete p;
}

OflStatus OflCompilerPluginPartition(OflCompilerPlugin*, const OflGraphView* g, OflSelection* s) {
  for (int32_t i = 0; i < g->num_ops; ++i) {
    const OflOpView& op = g->ops[i];
    if (std::strcmp(op.opcode, "tanh") == 0 && op.dtype == kOflF32)
      s->partition_index[i] = i;  // one partition per op
    else
      s->reason[i] = "TestVendor runs f32 tanh only";
  }
  return kOflOk;
}

#ifndef OFL_TEST_OMIT_COMPILE
OflStatus OflCompilerPluginCompile(OflCompilerPlugin*, const OflGraphView* const* parts, int32_t n,
                                   OflCompiledResult** out) {
  const char* fail = std::getenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL");
  if (fail != nullptr && std::strcmp(fail, "compile") == 0) {
    g_error = "deliberate compile failure (ONEFLOW_LIKE_TEST_PLUGIN_FAIL=compile)";
    return kOflErrorCompilation;
  }
  auto* r = new OflCompiledResult();
  for (int32_t k = 0; k < n; ++k) {
    const OflGraphView& g = *parts[k];
    const OflOpView& root = g.ops[g.outputs[0]];
    int64_t numel = 1;
    for (int32_t d = 0; d < root.rank; ++d) numel *= root.dims[d];
    r->bytecode.push_back("tanh " + std::to_string(numel));
    r->entry.push_back(std::string("tanh_") + g.name);
  }
  *out = r;
  return kOflOk;
}
#endif

int32_t OflCompiledResultNumPartitions(const OflCompiledResult* r) {
  return static_cast<int32_t>(r->bytecode.size());
}
OflStatus OflCompiledResultGetBytecode(const OflCompiledResult* r, int32_t i, const void** data,
                                       size_t* size) {
  *data = r->bytecode[i].data();
  *size = r->bytecode[i].size();
  return kOflOk;
}
OflStatus OflCompiledResultGetCallInfo(const OflCompiledResult* r, int32_t i, const char** e) {
  *e = r->entry[i].c_str();
  return kOflOk;
}
void OflCompiledResultDestroy(OflCompiledResult* r) {
  delete r;
}

}  // extern "C"
