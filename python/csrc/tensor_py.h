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
// A reference to `obj` (taken now) released with the GIL held: directly when the last owner
// holds it, else queued for the next DrainPendingDecrefs (VM threads never take the GIL).
std::shared_ptr<void> KeepPyObject(PyObject* obj);

}  // namespace python
}  // namespace oneflow_like
