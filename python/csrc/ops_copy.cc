// Bindings of the copy family (functions and Tensor methods).
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor ToAny(const Tensor& t, py::args args, py::kwargs kwargs) {
  // to(device), to(dtype), to(device, dtype), to(other_tensor), keyword forms too.
  Tensor r = t;
  auto apply = [&](py::handle h) {
    if (py::isinstance<Tensor>(h)) {
      Tensor o = py::cast<Tensor>(h);
      r = Unwrap(F::Cast(Unwrap(F::To(r, o.device())), o.dtype()));
    } else if (py::isinstance<DType>(h)) {
      r = Unwrap(F::Cast(r, py::cast<DType>(h)));
    } else if (py::isinstance<py::str>(h) && DTypeFromName(py::cast<std::string>(h)).ok() &&
               !Device::Parse(py::cast<std::string>(h)).ok()) {
      r = Unwrap(F::Cast(r, ParseDType(h)));
    } else if (!h.is_none()) {
      r = Unwrap(F::To(r, ParseDevice(h)));
    }
  };
  for (auto a : args) apply(a);
  if (kwargs.contains("device")) apply(kwargs["device"]);
  if (kwargs.contains("dtype")) apply(kwargs["dtype"]);
  return r;
}

void BindCopy(py::module_& m, TensorClass& cls) {
  cls.def("contiguous", [](const Tensor& x) { return Unwrap(F::Contiguous(x)); })
      .def("clone", [](const Tensor& x) { return Unwrap(F::Clone(x)); })
      .def("to", &ToAny)
      .def("cpu", [](const Tensor& x) { return Unwrap(F::To(x, Device::CPU())); })
      .def(
          "cuda",
          [](const Tensor& x, py::object d) {
            return Unwrap(F::To(x, d.is_none() ? Device(DeviceType::kCUDA, 0) : ParseDevice(d)));
          },
          py::arg("device") = py::none())
      .def("type_as",
           [](const Tensor& x, const Tensor& o) { return Unwrap(F::Cast(x, o.dtype())); })
      .def("float", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kF32)); })
      .def("double", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kF64)); })
      .def("half", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kF16)); })
      .def("bfloat16", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kBF16)); })
      .def("long", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kI64)); })
      .def("int", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kI32)); })
      .def("bool", [](const Tensor& x) { return Unwrap(F::Cast(x, DType::kBool)); })
      .def("copy_",
           [](Tensor& x, py::object src) {
             Check(F::CopyInto(x, ToTensor(src, &x)));
             return x;
           })
      .def("fill_",
           [](Tensor& x, double v) {
             Check(F::Fill_(x, v));
             return x;
           })
      .def("zero_", [](Tensor& x) {
        Check(F::Fill_(x, 0.0));
        return x;
      });
  m.def("cast",
        [](const Tensor& x, py::object dtype) { return Unwrap(F::Cast(x, ParseDType(dtype))); });
}

}  // namespace
OFL_PY_BINDING(BindCopy);
}  // namespace python
}  // namespace oneflow_like
