#include "compiler/device_compile.h"

#include <mutex>

namespace oneflow_like::hlo {
namespace {

struct Registry {
  std::mutex mu;
  DeviceCompilerFn fns[kNumDeviceTypes];
};
Registry& Reg() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

void RegisterDeviceCompiler(DeviceType type, DeviceCompilerFn fn) {
  auto& r = Reg();
  std::lock_guard<std::mutex> l(r.mu);
  r.fns[static_cast<int>(type)] = std::move(fn);
}

StatusOr<std::unique_ptr<DeviceExecutable>> CompileForDevice(std::unique_ptr<HloModule> module,
                                                             const CompileOptions& options,
                                                             const Device& device) {
  DeviceCompilerFn fn;
  {
    auto& r = Reg();
    std::lock_guard<std::mutex> l(r.mu);
    fn = r.fns[static_cast<int>(device.type())];
  }
  if (!fn)
    return Unimplemented(
        "[compile] no compiler for %s in this build (the GPU backend needs a --config=cuda build)",
        device.ToString());
  return fn(std::move(module), options, device);
}

}  // namespace oneflow_like::hlo
