// Process-wide settings PyTorch scripts set at the top level: the default float dtype and device
// (default_dtype.h), the intra-op thread count (oneflow_like/base/intra_op_threads.h) and
// deterministic algorithms (oneflow_like/base/determinism.h). The
// Python front ends are in oneflow_like/_global_state.py.
#include <atomic>
#include <string>

#include "oneflow_like/base/determinism.h"
#include "oneflow_like/base/intra_op_threads.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"

namespace oneflow_like {
namespace python {

namespace {
std::atomic<DType> g_default_float{DType::kF32};
// type * 65536 + index (cpu: 0).
std::atomic<int32_t> g_default_device{0};
}  // namespace

Device DefaultDevice() {
  const int32_t v = g_default_device.load(std::memory_order_relaxed);
  return Device(static_cast<DeviceType>(v >> 16), v & 0xffff);
}

void SetDefaultDevice(Device d) {
  g_default_device.store(static_cast<int32_t>(d.type()) * 65536 + d.index(),
                         std::memory_order_relaxed);
}

DType DefaultFloatDType() {
  return g_default_float.load(std::memory_order_relaxed);
}

void SetDefaultFloatDType(DType t) {
  if (!IsFloating(t))
    throw py::type_error("only floating-point types are supported as the default type, got " +
                         std::string(DTypeLongName(t)));
  g_default_float.store(t, std::memory_order_relaxed);
}

namespace {

void BindGlobalState(py::module_& m, TensorClass&) {
  m.def(
      "_set_default_dtype", [](py::handle d) { SetDefaultFloatDType(ParseDType(d)); },
      py::arg("d"));
  m.def("_get_default_dtype", &DefaultFloatDType);
  m.def(
      "_set_default_device",
      [](py::handle d) { SetDefaultDevice(d.is_none() ? Device::CPU() : ParseDevice(d)); },
      py::arg("device"));
  m.def("_get_default_device", &DefaultDevice);
  m.def(
      "_set_num_threads",
      [](int n) {
        if (n <= 0) throw std::runtime_error("set_num_threads expects a positive integer");
        SetIntraOpThreads(n);
      },
      py::arg("int"));
  m.def("_get_num_threads", &IntraOpThreads);
  m.def(
      "_set_deterministic_algorithms",
      [](bool mode, bool warn_only) { SetDeterministicAlgorithms(mode, warn_only); },
      py::arg("mode"), py::arg("warn_only"));
  m.def("_deterministic_algorithms", [] {
    return py::make_tuple(DeterministicAlgorithms(), DeterministicAlgorithmsWarnOnly());
  });
}

}  // namespace
OFL_PY_BINDING(BindGlobalState);
}  // namespace python
}  // namespace oneflow_like
