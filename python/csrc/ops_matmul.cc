// Bindings of the linear algebra family: matmul/mm/bmm/addmm/linear, Tensor methods and `@`.
#include "oneflow_like/ops/matmul.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor MatmulAny(const Tensor& a, py::handle b) {
  return Unwrap(F::Matmul(a, ToTensor(b, &a)));
}

void BindMatmul(py::module_& m, TensorClass& cls) {
  m.def(
      "matmul", [](const Tensor& a, const Tensor& b) { return Unwrap(F::Matmul(a, b)); },
      py::arg("input"), py::arg("other"));
  m.def(
      "mm", [](const Tensor& a, const Tensor& b) { return Unwrap(F::Mm(a, b)); }, py::arg("input"),
      py::arg("mat2"));
  m.def(
      "bmm", [](const Tensor& a, const Tensor& b) { return Unwrap(F::Bmm(a, b)); },
      py::arg("input"), py::arg("mat2"));
  auto addmm = [](const Tensor& input, const Tensor& m1, const Tensor& m2, double beta,
                  double alpha) { return Unwrap(F::Addmm(input, m1, m2, beta, alpha)); };
  m.def("addmm", addmm, py::arg("input"), py::arg("mat1"), py::arg("mat2"), py::kw_only(),
        py::arg("beta") = 1.0, py::arg("alpha") = 1.0);
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias) {
        return Unwrap(F::Linear(x, w, bias ? *bias : Tensor()));
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  cls.def(
         "matmul", [](const Tensor& a, py::object b) { return MatmulAny(a, b); }, py::arg("other"))
      .def(
          "mm", [](const Tensor& a, const Tensor& b) { return Unwrap(F::Mm(a, b)); },
          py::arg("mat2"))
      .def(
          "bmm", [](const Tensor& a, const Tensor& b) { return Unwrap(F::Bmm(a, b)); },
          py::arg("mat2"))
      .def("addmm", addmm, py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1.0,
           py::arg("alpha") = 1.0)
      .def(
          "__matmul__", [](const Tensor& a, py::object b) { return MatmulAny(a, b); },
          py::is_operator())
      .def(
          "__rmatmul__",
          [](const Tensor& a, py::object b) { return Unwrap(F::Matmul(ToTensor(b, &a), a)); },
          py::is_operator());
}

}  // namespace
OFL_PY_BINDING(BindMatmul);
}  // namespace python
}  // namespace oneflow_like
