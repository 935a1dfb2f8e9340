// The OpenCL plugin's dispatch library: the C ABI of compiler/plugin/ofl_dispatch.h over the
// OpenCL runtime (any ICD; tested on PoCL's CPU device). LoadBytecode builds the plan's program
// (PoCL caches compiled kernels on disk, so later loads of the same source are quick) and makes
// its buffers; Invoke writes the inputs, launches the kernels in plan order and reads the
// outputs back, all enqueued without blocking; Wait polls the run's events up to a deadline.
// The device only ever touches staging memory the invocation owns (inputs are copied in at
// Invoke, outputs copied out when Wait sees the run done), so a run that timed out cannot write
// into the caller's memory after it was freed; that memory is released when the device is done.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

// The device-side state of an invocation: OpenCL objects and staging memory. Freed only when
// the device no longer uses it (at once if idle, else by the last command's completion callback).
struct DeviceState {
  cl_program program = nullptr;
  std::vector<cl_kernel> kernels;
  std::vector<cl_mem> inputs, outputs, temps;
  std::vector<std::vector<char>> staging_in, staging_out;
  ~DeviceState() {
    for (cl_kernel k : kernels) clReleaseKernel(k);
    for (auto* v : {&inputs, &outputs, &temps})
      for (cl_mem m : *v)
        if (m) clReleaseMemObject(m);
    if (program) clReleaseProgram(program);
  }
};

struct OflDispatchInvocation {
  OflDispatchDeviceContext* ctx = nullptr;
  ofl_opencl::Plan plan;
  DeviceState* dev = new DeviceState();
  std::vector<const void*> host_in;
  std::vector<void*> host_out;
  cl_event last = nullptr;  // the run's last command (the queue is in order), until Wait saw it
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

namespace {
void CL_CALLBACK FreeWhenDone(cl_event, cl_int, void* dev) {
  delete static_cast<DeviceState*>(dev);
}

// Seconds Wait allows a run: ONEFLOW_LIKE_OPENCL_TIMEOUT_S (default 300).
double WaitTimeoutSeconds() {
  const char* v = std::getenv("ONEFLOW_LIKE_OPENCL_TIMEOUT_S");
  char* end = nullptr;
  const double s = v ? std::strtod(v, &end) : 0;
  return v && end != v && s > 0 ? s : 300.0;
}

// The state of the run behind `e`: CL_COMPLETE, a negative error, or still running (> 0).
cl_int RunState(cl_event e) {
  cl_int st = CL_COMPLETE;
  const cl_int err = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
  return err != CL_SUCCESS ? err : st;
}
}  // namespace

// Never blocks: a run still on the device (one that timed out) keeps the device state alive
// until it completes.
void OflDispatchUnloadBytecode(OflDispatchInvocation* inv) {
  if (inv == nullptr) return;
  if (inv->last != nullptr && RunState(inv->last) > 0 &&
      clSetEventCallback(inv->last, CL_COMPLETE, &FreeWhenDone, inv->dev) == CL_SUCCESS)
    inv->dev = nullptr;
  if (inv->last != nullptr) clReleaseEvent(inv->last);
  delete inv->dev;
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
    OflDispatchUnloadBytecode(inv);
    return Fail(kOflErrorInvalidArgument, error);
  }
  const char* src = inv->plan.source.c_str();
  const size_t len = inv->plan.source.size();
  cl_int err = CL_SUCCESS;
  DeviceState& dev = *inv->dev;
  dev.program = clCreateProgramWithSource(rt.context, 1, &src, &len, &err);
  if (err != CL_SUCCESS) {
    OflDispatchUnloadBytecode(inv);
    return ClFail("clCreateProgramWithSource", err);
  }
  err = clBuildProgram(dev.program, 1, &rt.device, "-cl-std=CL1.2", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(dev.program, rt.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(dev.program, rt.device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
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
  if (!make(inv->plan.input_bytes, &dev.inputs) || !make(inv->plan.output_bytes, &dev.outputs) ||
      !make(inv->plan.temp_bytes, &dev.temps)) {
    OflDispatchUnloadBytecode(inv);
    return ClFail("clCreateBuffer", err);
  }
  for (const auto& l : inv->plan.launches) {
    cl_kernel k = clCreateKernel(dev.program, l.kernel.c_str(), &err);
    if (err != CL_SUCCESS) {
      OflDispatchUnloadBytecode(inv);
      return ClFail(("clCreateKernel " + l.kernel).c_str(), err);
    }
    dev.kernels.push_back(k);
    for (size_t a = 0; a < l.args.size(); ++a) {
      const std::string& arg = l.args[a];
      const size_t idx = std::stoul(arg.substr(1));
      auto& pool = arg[0] == 'i' ? dev.inputs : arg[0] == 'o' ? dev.outputs : dev.temps;
      if (idx >= pool.size() ||
          (err = clSetKernelArg(k, a, sizeof(cl_mem), &pool[idx])) != CL_SUCCESS) {
        OflDispatchUnloadBytecode(inv);
        return Fail(kOflErrorInvalidArgument, "kernel " + l.kernel + ": bad argument " + arg);
      }
    }
  }
  inv->host_in.assign(dev.inputs.size(), nullptr);
  inv->host_out.assign(dev.outputs.size(), nullptr);
  for (int64_t b : inv->plan.input_bytes) dev.staging_in.emplace_back(b);
  for (int64_t b : inv->plan.output_bytes) dev.staging_out.emplace_back(b);
  *invocation = inv;
  return kOflOk;
}

int32_t OflDispatchNumInputs(const OflDispatchInvocation* inv) {
  return inv ? static_cast<int32_t>(inv->host_in.size()) : 0;
}
int32_t OflDispatchNumOutputs(const OflDispatchInvocation* inv) {
  return inv ? static_cast<int32_t>(inv->host_out.size()) : 0;
}

OflStatus OflDispatchBindInput(OflDispatchInvocation* inv, int32_t i, const void* data,
                               size_t bytes) {
  if (inv == nullptr || i < 0 || i >= static_cast<int32_t>(inv->host_in.size()))
    return Fail(kOflErrorInvalidArgument, "BindInput: no input " + std::to_string(i));
  if (static_cast<int64_t>(bytes) != inv->plan.input_bytes[i])
    return Fail(kOflErrorInvalidArgument, "BindInput " + std::to_string(i) + ": " +
                                              std::to_string(bytes) + " bytes, expected " +
                                              std::to_string(inv->plan.input_bytes[i]));
  inv->host_in[i] = data;
  return kOflOk;
}

OflStatus OflDispatchBindOutput(OflDispatchInvocation* inv, int32_t i, void* data, size_t bytes) {
  if (inv == nullptr || i < 0 || i >= static_cast<int32_t>(inv->host_out.size()))
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
  DeviceState& dev = *inv->dev;
  if (inv->last != nullptr) {
    // An earlier run that Wait gave up on: its staging memory is still the device's.
    if (RunState(inv->last) > 0)
      return Fail(kOflErrorRuntime, "Invoke: the previous run timed out and is still running");
    clReleaseEvent(inv->last);
    inv->last = nullptr;
  }
  for (size_t k = 0; k < inv->host_in.size(); ++k)
    if (inv->host_in[k] == nullptr) return Fail(kOflErrorInvalidArgument, "input not bound");
  for (size_t k = 0; k < inv->host_out.size(); ++k)
    if (inv->host_out[k] == nullptr) return Fail(kOflErrorInvalidArgument, "output not bound");
  cl_command_queue q = inv->ctx->queue;
  for (size_t k = 0; k < dev.inputs.size(); ++k) {
    if (inv->plan.input_bytes[k] == 0) continue;
    std::memcpy(dev.staging_in[k].data(), inv->host_in[k], dev.staging_in[k].size());
    cl_int err = clEnqueueWriteBuffer(q, dev.inputs[k], CL_FALSE, 0, inv->plan.input_bytes[k],
                                      dev.staging_in[k].data(), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return ClFail("clEnqueueWriteBuffer", err);
  }
  for (size_t k = 0; k < dev.kernels.size(); ++k) {
    const auto& l = inv->plan.launches[k];
    if (l.global_size == 0) continue;
    const size_t global[2] = {static_cast<size_t>(l.inner),
                              static_cast<size_t>(l.global_size / l.inner)};
    cl_int err =
        clEnqueueNDRangeKernel(q, dev.kernels[k], 2, nullptr, global, nullptr, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
      return ClFail(("clEnqueueNDRangeKernel " + inv->plan.launches[k].kernel).c_str(), err);
  }
  for (size_t k = 0; k < dev.outputs.size(); ++k) {
    if (inv->plan.output_bytes[k] == 0) continue;
    cl_int err = clEnqueueReadBuffer(q, dev.outputs[k], CL_FALSE, 0, inv->plan.output_bytes[k],
                                     dev.staging_out[k].data(), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return ClFail("clEnqueueReadBuffer", err);
  }
  // A marker: its completion means every command above completed (in-order queue).
  cl_int err = clEnqueueMarkerWithWaitList(q, 0, nullptr, &inv->last);
  if (err != CL_SUCCESS) return ClFail("clEnqueueMarker", err);
  err = clFlush(q);
  return err == CL_SUCCESS ? kOflOk : ClFail("clFlush", err);
}

// Polls the run's completion (sleeping 20 us, backing off to 1 ms) until the deadline; on
// time-out the run is left to the device with its staging memory (see DeviceState).
OflStatus OflDispatchWait(OflDispatchInvocation* inv) {
  if (inv == nullptr) return Fail(kOflErrorInvalidArgument, "Wait: null invocation");
  if (inv->last == nullptr) return Fail(kOflErrorInvalidArgument, "Wait: nothing was invoked");
  const double timeout = WaitTimeoutSeconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout);
  auto pause = std::chrono::microseconds(20);
  cl_int st;
  while ((st = RunState(inv->last)) > 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      return Fail(kOflErrorRuntime,
                  "OpenCL plugin: the run on " + TheRuntime().device_name + " did not finish in " +
                      std::to_string(timeout) +
                      " s (ONEFLOW_LIKE_OPENCL_TIMEOUT_S); it is abandoned, its outputs unwritten");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  clReleaseEvent(inv->last);
  inv->last = nullptr;
  if (st < 0) return ClFail("the run", st);
  DeviceState& dev = *inv->dev;
  for (size_t k = 0; k < dev.staging_out.size(); ++k)
    std::memcpy(inv->host_out[k], dev.staging_out[k].data(), dev.staging_out[k].size());
  return kOflOk;
}

}  // extern "C"
