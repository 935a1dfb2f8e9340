// Conversions between tensors and Python/NumPy objects, shared by the binding files.
#pragma once
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {

void BindCore(py::module_& m, TensorClass& cls);
Tensor FromNumpy(py::array arr);
Tensor TensorFromData(py::handle data, py::object dtype, py::object device);
py::array ToNumpy(const Tensor& t);
void DrainPendingDecrefs();

}  // namespace python
}  // namespace oneflow_like
