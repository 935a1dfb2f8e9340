// The dispatch library of test_plugin.cc: runs `tanh <elements>` on the host.
// ONEFLOW_LIKE_TEST_PLUGIN_FAIL=invoke makes Invoke fail; OFL_TEST_OMIT_WAIT builds a variant
// missing a symbol.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "compiler/plugin/ofl_dispatch.h"

struct OflDispatchDeviceContext {
  int unused = 0;
};
struct OflDispatchInvocation {
  long long numel = 0;
  const float* in = nullptr;
  float* out = nullptr;
};

namespace {
thread_local std::string g_error;
}

extern "C" {

OflStatus OflDispatchGetApiVersion(OflApiVersion* v) {
  *v = {OFL_PLUGIN_API_VERSION_MAJOR, OFL_PLUGIN_API_VERSION_MINOR, OFL_PLUGIN_API_VERSION_PATCH};
  return kOflOk;
}
const char* OflDispatchGetLastError(void) {
  return g_error.c_str();
}
OflStatus OflDispatchInitialize(const char*) {
  return kOflOk;
}
OflStatus OflDispatchDeviceContextCreate(OflDispatchDeviceContext** c) {
  *c = new OflDispatchDeviceContext();
  return kOflOk;
}
void OflDispatchDeviceContextDestroy(OflDispatchDeviceContext* c) {
  delete c;
}

OflStatus OflDispatchLoadBytecode(OflDispatchDeviceContext*, const void* code, size_t size,
                                  const char*, OflDispatchInvocation** inv) {
  std::string text(static_cast<const char*>(code), size);
  long long n = 0;
  if (std::sscanf(text.c_str(), "tanh %lld", &n) != 1) {
    g_error = "bytecode is not `tanh <n>`: " + text;
    return kOflErrorInvalidArgument;
  }
  *inv = new OflDispatchInvocation();
  (*inv)->numel = n;
  return kOflOk;
}
void OflDispatchUnloadBytecode(OflDispatchInvocation* inv) {
  delete inv;
}
int32_t OflDispatchNumInputs(const OflDispatchInvocation*) {
  return 1;
}
int32_t OflDispatchNumOutputs(const OflDispatchInvocation*) {
  return 1;
}

OflStatus OflDispatchBindInput(OflDispatchInvocation* inv, int32_t, const void* data, size_t) {
  inv->in = static_cast<const float*>(data);
  return kOflOk;
}
OflStatus OflDispatchBindOutput(OflDispatchInvocation* inv, int32_t, void* data, size_t) {
  inv->out = static_cast<float*>(data);
  return kOflOk;
}
OflStatus OflDispatchInvoke(OflDispatchInvocation* inv) {
  const char* fail = std::getenv("ONEFLOW_LIKE_TEST_PLUGIN_FAIL");
  if (fail != nullptr && std::strcmp(fail, "invoke") == 0) {
    g_error = "deliberate invoke failure (ONEFLOW_LIKE_TEST_PLUGIN_FAIL=invoke)";
    return kOflErrorRuntime;
  }
  for (long long i = 0; i < inv->numel; ++i) inv->out[i] = std::tanh(inv->in[i]);
  return kOflOk;
}
#ifndef OFL_TEST_OMIT_WAIT
OflStatus OflDispatchWait(OflDispatchInvocation*) {
  return kOflOk;
}
#endif

}  // extern "C"
