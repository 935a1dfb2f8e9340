// Bindings of the binary elementwise family: functions, methods and arithmetic dunders.
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// A float Python scalar lifts an integer tensor to float32 first (PyTorch's rule).
Tensor LiftForScalar(const Tensor& a, py::handle s) {
  if (IsFloatScalar(s) && !IsFloating(a.dtype())) return Unwrap(F::Cast(a, DType::kF32));
  return a;
}

Tensor AddAny(const Tensor& a, py::handle b, double alpha) {
  if (IsScalar(b)) return Unwrap(F::AddScalar(LiftForScalar(a, b), alpha * ScalarValue(b)));
  return Unwrap(F::Add(a, ToTensor(b, &a), alpha));
}
Tensor SubAny(const Tensor& a, py::handle b, double alpha) {
  if (IsScalar(b)) return Unwrap(F::AddScalar(LiftForScalar(a, b), -alpha * ScalarValue(b)));
  return Unwrap(F::Sub(a, ToTensor(b, &a), alpha));
}
Tensor MulAny(const Tensor& a, py::handle b) {
  if (IsScalar(b)) return Unwrap(F::MulScalar(LiftForScalar(a, b), ScalarValue(b)));
  return Unwrap(F::Mul(a, ToTensor(b, &a)));
}
Tensor DivAny(const Tensor& a, py::handle b) {
  if (IsScalar(b)) {
    Tensor x = IsFloating(a.dtype()) ? a : Unwrap(F::Cast(a, DType::kF32));
    return Unwrap(F::MulScalar(x, 1.0 / ScalarValue(b)));
  }
  return Unwrap(F::Div(a, ToTensor(b, &a)));
}

void BindBinary(py::module_& m, TensorClass& cls) {
  m.def("add", &AddAny, py::arg("input"), py::arg("other"), py::arg("alpha") = 1.0);
  m.def("sub", &SubAny, py::arg("input"), py::arg("other"), py::arg("alpha") = 1.0);
  m.def("mul", &MulAny, py::arg("input"), py::arg("other"));
  m.def("div", &DivAny, py::arg("input"), py::arg("other"));
  cls.def("add", &AddAny, py::arg("other"), py::arg("alpha") = 1.0)
      .def("sub", &SubAny, py::arg("other"), py::arg("alpha") = 1.0)
      .def("mul", &MulAny, py::arg("other"))
      .def("div", &DivAny, py::arg("other"))
      .def("__add__", [](const Tensor& a, py::object b) { return AddAny(a, b, 1.0); }, py::is_operator())
      .def("__radd__", [](const Tensor& a, py::object b) { return AddAny(a, b, 1.0); }, py::is_operator())
      .def("__sub__", [](const Tensor& a, py::object b) { return SubAny(a, b, 1.0); }, py::is_operator())
      .def("__rsub__", [](const Tensor& a, py::object b) {
        if (IsScalar(b)) return Unwrap(F::RSubScalar(LiftForScalar(a, b), ScalarValue(b)));
        return Unwrap(F::Sub(ToTensor(b, &a), a));
      }, py::is_operator())
      .def("__mul__", [](const Tensor& a, py::object b) { return MulAny(a, b); }, py::is_operator())
      .def("__rmul__", [](const Tensor& a, py::object b) { return MulAny(a, b); }, py::is_operator())
      .def("__truediv__", [](const Tensor& a, py::object b) { return DivAny(a, b); }, py::is_operator())
      .def("__rtruediv__", [](const Tensor& a, py::object b) {
        if (IsScalar(b)) return Unwrap(F::RDivScalar(a, ScalarValue(b)));
        return Unwrap(F::Div(ToTensor(b, &a), a));
      }, py::is_operator())
      .def("add_", [](Tensor& a, py::object b, double alpha) {
        if (IsScalar(b)) Check(F::AddScalar_(a, alpha * ScalarValue(b)));
        else Check(F::Add_(a, ToTensor(b, &a), alpha));
        return a;
      }, py::arg("other"), py::arg("alpha") = 1.0)
      .def("sub_", [](Tensor& a, py::object b, double alpha) {
        if (IsScalar(b)) Check(F::AddScalar_(a, -alpha * ScalarValue(b)));
        else Check(F::Add_(a, ToTensor(b, &a), -alpha));
        return a;
      }, py::arg("other"), py::arg("alpha") = 1.0)
      .def("mul_", [](Tensor& a, py::object b) {
        if (IsScalar(b)) Check(F::MulScalar_(a, ScalarValue(b)));
        else Check(F::Mul_(a, ToTensor(b, &a)));
        return a;
      }, py::arg("other"))
      .def("div_", [](Tensor& a, py::object b) {
        if (IsScalar(b)) Check(F::MulScalar_(a, 1.0 / ScalarValue(b)));
        else Check(F::Mul_(a, Unwrap(F::RDivScalar(ToTensor(b, &a), 1.0))));
        return a;
      }, py::arg("other"))
      .def("__iadd__", [](Tensor& a, py::object b) {
        if (IsScalar(b)) Check(F::AddScalar_(a, ScalarValue(b)));
        else Check(F::Add_(a, ToTensor(b, &a), 1.0));
        return a;
      }, py::is_operator())
      .def("__isub__", [](Tensor& a, py::object b) {
        if (IsScalar(b)) Check(F::AddScalar_(a, -ScalarValue(b)));
        else Check(F::Add_(a, ToTensor(b, &a), -1.0));
        return a;
      }, py::is_operator())
      .def("__imul__", [](Tensor& a, py::object b) {
        if (IsScalar(b)) Check(F::MulScalar_(a, ScalarValue(b)));
        else Check(F::Mul_(a, ToTensor(b, &a)));
        return a;
      }, py::is_operator())
      .def("__itruediv__", [](Tensor& a, py::object b) {
        if (IsScalar(b)) Check(F::MulScalar_(a, 1.0 / ScalarValue(b)));
        else Check(F::Mul_(a, Unwrap(F::RDivScalar(ToTensor(b, &a), 1.0))));
        return a;
      }, py::is_operator());
}

}  // namespace
OFL_PY_BINDING(BindBinary);
}  // namespace python
}  // namespace oneflow_like
