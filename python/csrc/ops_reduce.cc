// Bindings of the reduce family (functions and Tensor methods).
#include "oneflow_like/ops/reduce.h"
#include "oneflow_like/ops/copy.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

std::vector<int64_t> DimsArg(py::object dim) {
  if (dim.is_none()) return {};
  return ParseIntList(dim);
}

void BindReduce(py::module_& m, TensorClass& cls) {
  auto sum = [](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
    Tensor t = dtype.is_none() ? x : Unwrap(F::Cast(x, ParseDType(dtype)));
    return Unwrap(F::Sum(t, DimsArg(dim), keepdim));
  };
  auto mean = [](const Tensor& x, py::object dim, bool keepdim) { return Unwrap(F::Mean(x, DimsArg(dim), keepdim)); };
  m.def("sum", sum, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  m.def("mean", mean, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  cls.def("sum", sum, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  cls.def("mean", mean, py::arg("dim") = py::none(), py::arg("keepdim") = false);
}

}  // namespace
OFL_PY_BINDING(BindReduce);
}  // namespace python
}  // namespace oneflow_like
