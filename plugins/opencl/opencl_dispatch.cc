// The OpenCL plugin's dispatch library: the C ABI of compiler/plugin/ofl_dispatch.h over the
// OpenCL runtime (any ICD; tested on PoCL's CPU device). LoadBytecode builds the plan's program
// (PoCL caches compiled kernels on disk, so later loads of the same source are quick) and makes
// its buffers; Invoke writes the inputs, launches the kernels in plan order and reads the
// outputs back, all enqueued without blocking; Wait finishes the queue.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/plugin/ofl_dispatch.h"
#include "plugins/opencl/plan.h"

namespace {
thread_local std::string g_error;

OflStatus Fail(OflStatus code, std::string message) {
  g_error = std::move(message);
  return code;
}
OflStatus ClFail(const char* call, cl_int err) {
  return Fail(kOflErrorRuntime, std::string(call) + " failed with OpenCL error " +
                                    std::to_string(static_cast<int>(err)));
}

// One platform/device/context per process, chosen at Initialize.
struct Runtime {
  std::mutex mu;
  bool ready = false;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  std::string device_name;
};
Runtime& TheRuntime() {
  static Runtime* r = new Runtime();
  return *r;
}

}  // namespace

struct OflDispatchDeviceContext {
  cl_command_queue queue = nullptr;
};

struct OflDispatchInvocation {
  OflDispatchDeviceContext* ctx = nullptr;
  ofl_opencl::Plan plan;
  cl_program program = nullptr;
  std::vector<cl_kernel> kernels;
  std::vector<cl_mem> inputs, outputs, temps;
  std::vector<const void*> host_in;
  std::vector<void*> host_out;
  std::vector<cl_event> pending;
};

extern "C" {

OflStatus OflDispatchGetApiVersion(OflApiVersion* v) {
  if (v == nullptr) return Fail(kOflErrorInvalidArgument, "null version");
  *v = {OFL_PLUGIN_API_VERSION_MAJOR, OFL_PLUGIN_API_VERSION_MINOR, OFL_PLUGIN_API_VERSION_PATCH};
  return kOflOk;
}
const char* OflDispatchGetLastError(void) {
  return g_error.c_str();
}

OflStatus OflDispatchInitialize(const char*) {
  Runtime& rt = TheRuntime();
  std::lock_guard<std::mutex> lock(rt.mu);
  if (rt.ready) return kOflOk;
  cl_uint n = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &n);
  if (err != CL_SUCCESS || n == 0)
    return Fail(kOflErrorUnsupported,
                "no OpenCL platform found (install an ICD, e.g. Debian's pocl-opencl-icd)");
  std::vector<cl_platform_id> platforms(n);
  clGetPlatformIDs(n, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    cl_device_id d = nullptr;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) == CL_SUCCESS && d != nullptr) {
      rt.platform = p;
      rt.device = d;
      break;
    }
  }
  if (rt.device == nullptr) return Fail(kOflErrorUnsupported, "no OpenCL device found");
  rt.context = clCreateContext(nullptr, 1, &rt.device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return ClFail("clCreateContext", err);
  char name[256] = {0};
  clGetDeviceInfo(rt.device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  rt.device_name = name;
  rt.ready = true;
  return kOflOk;
}

OflStatus OflDispatchDeviceContextCreate(OflDispatchDeviceContext** ctx) {
  if (ctx == nullptr) return Fail(kOflErrorInvalidArgument, "null context");
  Runtime& rt = TheRuntime();
  if (!rt.ready) return Fail(kOflErrorRuntime, "OflDispatchInitialize was not called");
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(rt.context, rt.device, 0, &err);
  if (err != CL_SUCCESS) return ClFail("clCreateCommandQueue", err);
  *ctx = new OflDispatchDeviceContext{q};
  return kOflOk;
}

void OflDispatchDeviceContextDestroy(OflDispatchDeviceContext* ctx) {
  if (ctx == nullptr) return;
  if (ctx->queue) clReleaseCommandQueue(ctx->queue);
  delete ctx;
}

void OflDispatchUnloadBytecode(OflDispatchInvocation* inv) {
  if (inv == nullptr) return;
  if (inv->ctx && inv->ctx->queue) clFinish(inv->ctx->queue);
  for (cl_event e : inv->pending) clReleaseEvent(e);
  for (cl_kernel k : inv->kernels) clReleaseKernel(k);
  for (auto* v : {&inv->inputs, &inv->outputs, &inv->temps})
    for (cl_mem m : *v)
      if (m) clReleaseMemObject(m);
  if (inv->program) clReleaseProgram(inv->program);
  delete inv;
}

OflStatus OflDispatchLoadBytecode(OflDispatchDeviceContext* ctx, const void* bytecode, size_t size,
                                  const char* entry_point, OflDispatchInvocation** invocation) {
  if (ctx == nullptr || bytecode == nullptr || invocation == nullptr)
    return Fail(kOflErrorInvalidArgument, "LoadBytecode: bad arguments");
  Runtime& rt = TheRuntime();
  auto* inv = new OflDispatchInvocation();
  inv->ctx = ctx;
  std::string error;
  if (!ofl_opencl::Plan::Parse(std::string(static_cast<const char*>(bytecode), size), &inv->plan,
                               &error)) {
    delete inv;
    return Fail(kOflErrorInvalidArgument, error);
  }
  const char* src = inv->plan.source.c_str();
  const size_t len = inv->plan.source.size();
  cl_int err = CL_SUCCESS;
  inv->program = clCreateProgramWithSource(rt.context, 1, &src, &len, &err);
  if (err != CL_SUCCESS) {
    OflDispatchUnloadBytecode(inv);
    return ClFail("clCreateProgramWithSource", err);
  }
  err = clBuildProgram(inv->program, 1, &rt.device, "-cl-std=CL1.2", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(inv->program, rt.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(inv->program, rt.device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    OflDispatchUnloadBytecode(inv);
    return Fail(kOflErrorCompilation, std::string("building ") + (entry_point ? entry_point : "") +
                                          " on " + rt.device_name + " failed:\n" + log);
  }
  auto make = [&](const std::vector<int64_t>& bytes, std::vector<cl_mem>* out) {
    for (int64_t b : bytes) {
      cl_mem m = clCreateBuffer(rt.context, CL_MEM_READ_WRITE, b > 0 ? b : 1, nullptr, &err);
      out->push_back(m);
      if (err != CL_SUCCESS) return false;
    }
    return true;
  };
  if (!make(inv->plan.input_bytes, &inv->inputs) || !make(inv->plan.output_bytes, &inv->outputs) ||
      !make(inv->plan.temp_bytes, &inv->temps)) {
    OflDispatchUnloadBytecode(inv);
    return ClFail("clCreateBuffer", err);
  }
  for (const auto& l : inv->plan.launches) {
    cl_kernel k = clCreateKernel(inv->program, l.kernel.c_str(), &err);
    if (err != CL_SUCCESS) {
      OflDispatchUnloadBytecode(inv);
      return ClFail(("clCreateKernel " + l.kernel).c_str(), err);
    }
    inv->kernels.push_back(k);
    for (size_t a = 0; a < l.args.size(); ++a) {
      const std::string& arg = l.args[a];
      const size_t idx = std::stoul(arg.substr(1));
      auto& pool = arg[0] == 'i' ? inv->inputs : arg[0] == 'o' ? inv->outputs : inv->temps;
      if (idx >= pool.size() ||
          (err = clSetKernelArg(k, a, sizeof(cl_mem), &pool[idx])) != CL_SUCCESS) {
        OflDispatchUnloadBytecode(inv);
        return Fail(kOflErrorInvalidArgument, "kernel " + l.kernel + ": bad argument " + arg);
      }
    }
  }
  inv->host_in.assign(inv->inputs.size(), nullptr);
  inv->host_out.assign(inv->outputs.size(), nullptr);
  *invocation = inv;
  return kOflOk;
}

int32_t OflDispatchNumInputs(const OflDispatchInvocation* inv) {
  return inv ? static_cast<int32_t>(inv->inputs.size()) : 0;
}
int32_t OflDispatchNumOutputs(const OflDispatchInvocation* inv) {
  return inv ? static_cast<int32_t>(inv->outputs.size()) : 0;
}

OflStatus OflDispatchBindInput(OflDispatchInvocation* inv, int32_t i, const void* data,
                               size_t bytes) {
  if (inv == nullptr || i < 0 || i >= static_cast<int32_t>(inv->inputs.size()))
    return Fail(kOflErrorInvalidArgument, "BindInput: no input " + std::to_string(i));
  if (static_cast<int64_t>(bytes) != inv->plan.input_bytes[i])
    return Fail(kOflErrorInvalidArgument, "BindInput " + std::to_string(i) + ": " +
                                              std::to_string(bytes) + " bytes, expected " +
                                              std::to_string(inv->plan.input_bytes[i]));
  inv->host_in[i] = data;
  return kOflOk;
}

OflStatus OflDispatchBindOutput(OflDispatchInvocation* inv, int32_t i, void* data, size_t bytes) {
  if (inv == nullptr || i < 0 || i >= static_cast<int32_t>(inv->outputs.size()))
    return Fail(kOflErrorInvalidArgument, "BindOutput: no output " + std::to_string(i));
  if (static_cast<int64_t>(bytes) != inv->plan.output_bytes[i])
    return Fail(kOflErrorInvalidArgument, "BindOutput " + std::to_string(i) + ": " +
                                              std::to_string(bytes) + " bytes, expected " +
                                              std::to_string(inv->plan.output_bytes[i]));
  inv->host_out[i] = data;
  return kOflOk;
}

OflStatus OflDispatchInvoke(OflDispatchInvocation* inv) {
  if (inv == nullptr) return Fail(kOflErrorInvalidArgument, "Invoke: null invocation");
  cl_command_queue q = inv->ctx->queue;
  for (size_t k = 0; k < inv->inputs.size(); ++k) {
    if (inv->host_in[k] == nullptr) return Fail(kOflErrorInvalidArgument, "input not bound");
    if (inv->plan.input_bytes[k] == 0) continue;
    cl_int err = clEnqueueWriteBuffer(q, inv->inputs[k], CL_FALSE, 0, inv->plan.input_bytes[k],
                                      inv->host_in[k], 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return ClFail("clEnqueueWriteBuffer", err);
  }
  for (size_t k = 0; k < inv->kernels.size(); ++k) {
    const auto& l = inv->plan.launches[k];
    if (l.global_size == 0) continue;
    const size_t global[2] = {static_cast<size_t>(l.inner),
                              static_cast<size_t>(l.global_size / l.inner)};
    cl_int err = clEnqueueNDRangeKernel(q, inv->kernels[k], 2, nullptr, global, nullptr, 0, nullptr,
                                        nullptr);
    if (err != CL_SUCCESS)
      return ClFail(("clEnqueueNDRangeKernel " + inv->plan.launches[k].kernel).c_str(), err);
  }
  for (size_t k = 0; k < inv->outputs.size(); ++k) {
    if (inv->host_out[k] == nullptr) return Fail(kOflErrorInvalidArgument, "output not bound");
    if (inv->plan.output_bytes[k] == 0) continue;
    cl_int err = clEnqueueReadBuffer(q, inv->outputs[k], CL_FALSE, 0, inv->plan.output_bytes[k],
                                     inv->host_out[k], 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return ClFail("clEnqueueReadBuffer", err);
  }
  cl_int err = clFlush(q);
  return err == CL_SUCCESS ? kOflOk : ClFail("clFlush", err);
}

OflStatus OflDispatchWait(OflDispatchInvocation* inv) {
  if (inv == nullptr) return Fail(kOflErrorInvalidArgument, "Wait: null invocation");
  cl_int err = clFinish(inv->ctx->queue);
  return err == CL_SUCCESS ? kOflOk : ClFail("clFinish", err);
}

}  // extern "C"
