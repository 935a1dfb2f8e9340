// Bindings of the shape family (functions and Tensor methods).
#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

void BindShape(py::module_& m, TensorClass& cls) {
  auto reshape = [](const Tensor& x, py::args shape) { return Unwrap(F::ReshapeInfer(x, ParseShape(shape))); };
  m.def("reshape", [](const Tensor& x, py::object shape) { return Unwrap(F::ReshapeInfer(x, ParseIntList(shape))); });
  cls.def("reshape", reshape).def("view", reshape);
  auto expand = [](const Tensor& x, py::args shape) {
    auto s = ParseShape(shape);
    int64_t lead = static_cast<int64_t>(s.size()) - x.ndim();
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == -1 && static_cast<int64_t>(i) >= lead) s[i] = x.dim(i - lead);
    return Unwrap(F::Expand(x, Shape(DimVector(s.begin(), s.end()))));
  };
  cls.def("expand", expand);
  m.def("permute", [](const Tensor& x, py::object dims) { return Unwrap(F::Permute(x, ParseIntList(dims))); });
  cls.def("permute", [](const Tensor& x, py::args dims) { return Unwrap(F::Permute(x, ParseShape(dims))); });
  m.def("transpose", [](const Tensor& x, int64_t a, int64_t b) { return Unwrap(F::Transpose(x, a, b)); });
  cls.def("transpose", [](const Tensor& x, int64_t a, int64_t b) { return Unwrap(F::Transpose(x, a, b)); });
  cls.def("t", [](const Tensor& x) {
    if (x.ndim() > 2) throw py::value_error("[t] expects a tensor with <= 2 dims, got " + x.meta_string());
    return x.ndim() < 2 ? x : Unwrap(F::Transpose(x, 0, 1));
  });
  cls.def_property_readonly("T", [](const Tensor& x) {
    std::vector<int64_t> p;
    for (int64_t i = x.ndim() - 1; i >= 0; --i) p.push_back(i);
    return Unwrap(F::Permute(x, p));
  });
}

}  // namespace
OFL_PY_BINDING(BindShape);
}  // namespace python
}  // namespace oneflow_like
