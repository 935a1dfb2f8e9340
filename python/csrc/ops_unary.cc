// Bindings of the unary family (functions and Tensor methods).
#include "oneflow_like/ops/unary.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

void BindUnary(py::module_& m, TensorClass& cls) {
  m.def("neg", [](const Tensor& x) { return Unwrap(F::Neg(x)); });
  m.def("exp", [](const Tensor& x) { return Unwrap(F::Exp(x)); });
  m.def("relu", [](const Tensor& x) { return Unwrap(F::Relu(x)); });
  cls.def("neg", [](const Tensor& x) { return Unwrap(F::Neg(x)); })
      .def("__neg__", [](const Tensor& x) { return Unwrap(F::Neg(x)); })
      .def("exp", [](const Tensor& x) { return Unwrap(F::Exp(x)); })
      .def("relu", [](const Tensor& x) { return Unwrap(F::Relu(x)); });
}

}  // namespace
OFL_PY_BINDING(BindUnary);
}  // namespace python
}  // namespace oneflow_like
