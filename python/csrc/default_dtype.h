// torch.get_default_dtype(): the dtype of floating tensors made without one (the factories,
// tensors from Python floats, an integer tensor combined with a Python float). float32 until
// flow.set_default_dtype changes it; this is the one place that holds it (the attribute
// structs of the op tables say float32, which the bindings read through DefaultFloat).
//
// torch.set_default_device: the device of tensors the factories make without device= (cpu until
// set). Held here beside the dtype, read by every factory binding through DefaultDeviceOr.
#pragma once
#include "oneflow_like/base/device.h"
#include "oneflow_like/base/dtype.h"

namespace oneflow_like {
namespace python {

DType DefaultFloatDType();
// TypeError (a Python exception) unless `t` is a floating dtype.
void SetDefaultFloatDType(DType t);
// An attribute struct's default dtype, with float32 read as the default float dtype.
inline DType DefaultFloat(DType attr_default) {
  return attr_default == DType::kF32 ? DefaultFloatDType() : attr_default;
}

Device DefaultDevice();
void SetDefaultDevice(Device d);
// A factory's device: `attr_default` (the table's "cpu") read as the process default device.
inline Device DefaultDeviceOr(const Device& attr_default) {
  return attr_default.is_cpu() ? DefaultDevice() : attr_default;
}

}  // namespace python
}  // namespace oneflow_like
