// Autocast state for oneflow_like.amp (python/oneflow_like/amp/): per thread and device type,
// read and set by the Python context manager; Dispatch applies it (framework/autocast.h).
#include <string>
#include <vector>

#include "oneflow_like/framework/autocast.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

DeviceType AutocastDevice(const std::string& device_type) {
  if (device_type == "cpu") return DeviceType::kCPU;
  if (device_type == "cuda") return DeviceType::kCUDA;
  throw py::value_error("[autocast] device_type must be 'cpu' or 'cuda', got '" + device_type +
                        "'");
}

void BindAmp(py::module_& m, TensorClass&) {
  m.def("_autocast_get", [](const std::string& device_type) {
    AutocastState s = GetAutocastState(AutocastDevice(device_type));
    return py::make_tuple(s.enabled, DTypeLongName(s.dtype), s.cache_enabled);
  });
  m.def("_autocast_set", [](const std::string& device_type, bool enabled, py::handle dtype,
                            bool cache_enabled) {
    DType t = ParseDType(dtype);
    if (t != DType::kBF16 && t != DType::kF16)
      throw py::value_error(std::string("[autocast] dtype must be float16 or bfloat16, got ") +
                            DTypeLongName(t));
    SetAutocastState(AutocastDevice(device_type), AutocastState{enabled, t, cache_enabled});
  });
  m.def("_autocast_increment_nesting", &AutocastIncrementNesting);
  m.def("_autocast_decrement_nesting", &AutocastDecrementNesting);
  m.def("_autocast_clear_cache", &ClearAutocastCache);
  // The tensors a composite written in Python (a loss) runs on, cast by autocast's lists.
  m.def("_autocast_args", [](const std::string& op_name, const std::vector<Tensor>& tensors) {
    TensorList in(tensors.begin(), tensors.end());
    TensorList out = Unwrap(AutocastArgs(op_name.c_str(), in));
    return std::vector<Tensor>(out.begin(), out.end());
  });
}

}  // namespace
OFL_PY_BINDING(BindAmp);
}  // namespace python
}  // namespace oneflow_like
