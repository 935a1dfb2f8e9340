// Bindings of the ternary family: where (tensor or Python-number branches), addcmul/addcdiv
// (+ in-place, used by the optimizers) and lerp.
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/ternary.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor WhereAny(const Tensor& cond, py::handle x, py::handle y) {
  bool xs = IsScalar(x), ys = IsScalar(y);
  if (xs && ys) {  // both numbers: the result dtype follows PyTorch (float if either is a float)
    DType t = IsFloatScalar(x) || IsFloatScalar(y)
                  ? DType::kF32
                  : (PyBool_Check(x.ptr()) && PyBool_Check(y.ptr()) ? DType::kBool : DType::kI64);
    Tensor xt = Unwrap(F::Full(Shape{}, ScalarValue(x), t, cond.device()));
    return Unwrap(F::WhereScalarOther(cond, xt, ScalarValue(y)));
  }
  if (ys) return Unwrap(F::WhereScalarOther(cond, ToTensor(x), ScalarValue(y)));
  if (xs) return Unwrap(F::WhereScalarInput(cond, ScalarValue(x), ToTensor(y)));
  Tensor xt = ToTensor(x);
  return Unwrap(F::Where(cond, xt, ToTensor(y, &xt)));
}

void BindTernary(py::module_& m, TensorClass& cls) {
  m.def(
      "where", [](const Tensor& cond, py::object x, py::object y) { return WhereAny(cond, x, y); },
      py::arg("condition"), py::arg("input"), py::arg("other"));
  cls.def(
      "where",
      [](const Tensor& self, const Tensor& cond, py::object y) {
        return WhereAny(cond, py::cast(self), y);
      },
      py::arg("condition"), py::arg("other"));

  m.def(
      "addcmul",
      [](const Tensor& t, const Tensor& a, const Tensor& b, double value) {
        return Unwrap(F::Addcmul(t, a, b, value));
      },
      py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(),
      py::arg("value") = 1.0);
  m.def(
      "addcdiv",
      [](const Tensor& t, const Tensor& a, const Tensor& b, double value) {
        return Unwrap(F::Addcdiv(t, a, b, value));
      },
      py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(),
      py::arg("value") = 1.0);
  cls.def(
         "addcmul",
         [](const Tensor& t, const Tensor& a, const Tensor& b, double value) {
           return Unwrap(F::Addcmul(t, a, b, value));
         },
         py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1.0)
      .def(
          "addcdiv",
          [](const Tensor& t, const Tensor& a, const Tensor& b, double value) {
            return Unwrap(F::Addcdiv(t, a, b, value));
          },
          py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1.0)
      .def(
          "addcmul_",
          [](Tensor& t, const Tensor& a, const Tensor& b, double value) {
            Check(F::Addcmul_(t, a, b, value));
            return t;
          },
          py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1.0)
      .def(
          "addcdiv_",
          [](Tensor& t, const Tensor& a, const Tensor& b, double value) {
            Check(F::Addcdiv_(t, a, b, value));
            return t;
          },
          py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1.0);

  auto lerp = [](const Tensor& s, const Tensor& e, py::object w) {
    if (IsScalar(w)) return Unwrap(F::LerpScalar(s, e, ScalarValue(w)));
    return Unwrap(F::Lerp(s, e, ToTensor(w, &s)));
  };
  m.def("lerp", lerp, py::arg("input"), py::arg("end"), py::arg("weight"));
  cls.def("lerp", lerp, py::arg("end"), py::arg("weight"))
      .def(
          "lerp_",
          [](Tensor& s, const Tensor& e, py::object w) {
            if (IsScalar(w))
              Check(F::LerpScalar_(s, e, ScalarValue(w)));
            else
              Check(F::Lerp_(s, e, ToTensor(w, &s)));
            return s;
          },
          py::arg("end"), py::arg("weight"));
}

}  // namespace
OFL_PY_BINDING(BindTernary);
}  // namespace python
}  // namespace oneflow_like
