// Bindings of the creation family (functions and Tensor methods).
#include "oneflow_like/ops/creation.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor Creation(double value, py::args size, py::object dtype, py::object device,
                bool requires_grad) {
  DType dt = dtype.is_none() ? DType::kF32 : ParseDType(dtype);
  Device dev = device.is_none() ? Device::CPU() : ParseDevice(device);
  auto shape = ParseShape(size);
  Tensor t = Unwrap(F::Full(Shape(DimVector(shape.begin(), shape.end())), value, dt, dev));
  if (requires_grad) Check(t.set_requires_grad(true));
  return t;
}

Tensor LikeCreation(const Tensor& x, double value, py::object dtype, py::object device,
                    bool requires_grad) {
  DType dt = dtype.is_none() ? x.dtype() : ParseDType(dtype);
  Device dev = device.is_none() ? x.device() : ParseDevice(device);
  Tensor t = Unwrap(F::Full(x.shape(), value, dt, dev));
  if (requires_grad) Check(t.set_requires_grad(true));
  return t;
}

// A bound given as a Python number or a one-element tensor.
double ScalarOf(py::handle h) {
  if (py::isinstance<Tensor>(h)) return py::cast<double>(h.attr("item")());
  return ScalarValue(h);
}

void BindCreation(py::module_& m, TensorClass& cls) {
  m.def(
      "zeros",
      [](py::args size, py::object dtype, py::object device, bool rg) {
        return Creation(0, size, dtype, device, rg);
      },
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "ones",
      [](py::args size, py::object dtype, py::object device, bool rg) {
        return Creation(1, size, dtype, device, rg);
      },
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  // empty: zero-filled (the memory is never uninitialised garbage).
  m.def(
      "empty",
      [](py::args size, py::object dtype, py::object device, bool rg) {
        return Creation(0, size, dtype, device, rg);
      },
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "full",
      [](py::object size, double v, py::object dtype, py::object device, bool rg) {
        return Creation(v, py::make_tuple(size), dtype, device, rg);
      },
      py::arg("size"), py::arg("fill_value"), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "zeros_like",
      [](const Tensor& x, py::object d, py::object dev, bool rg) {
        return LikeCreation(x, 0, d, dev, rg);
      },
      py::arg("input"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "ones_like",
      [](const Tensor& x, py::object d, py::object dev, bool rg) {
        return LikeCreation(x, 1, d, dev, rg);
      },
      py::arg("input"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "empty_like",
      [](const Tensor& x, py::object d, py::object dev, bool rg) {
        return LikeCreation(x, 0, d, dev, rg);
      },
      py::arg("input"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "full_like",
      [](const Tensor& x, double v, py::object d, py::object dev, bool rg) {
        return LikeCreation(x, v, d, dev, rg);
      },
      py::arg("input"), py::arg("fill_value"), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);

  // arange(end) / arange(start, end[, step]): int64 when every bound is an integer, else float32.
  m.def(
      "arange",
      [](py::object a, py::object b, py::object step, py::object dtype, py::object device,
         bool rg) {
        py::object start = b.is_none() ? py::int_(0) : a, end = b.is_none() ? a : b;
        bool all_int = !IsFloatScalar(start) && !IsFloatScalar(end) && !IsFloatScalar(step);
        DType dt = dtype.is_none() ? (all_int ? DType::kI64 : DType::kF32) : ParseDType(dtype);
        Device dev = device.is_none() ? Device::CPU() : ParseDevice(device);
        Tensor t = Unwrap(F::Arange(ScalarOf(start), ScalarOf(end), ScalarOf(step), dt, dev));
        if (rg) Check(t.set_requires_grad(true));
        return t;
      },
      py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "linspace",
      [](py::object start, py::object end, int64_t steps, py::object dtype, py::object device,
         bool rg) {
        DType dt = dtype.is_none() ? DType::kF32 : ParseDType(dtype);
        Device dev = device.is_none() ? Device::CPU() : ParseDevice(device);
        Tensor t = Unwrap(F::Linspace(ScalarOf(start), ScalarOf(end), steps, dt, dev));
        if (rg) Check(t.set_requires_grad(true));
        return t;
      },
      py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def(
      "eye",
      [](int64_t n, py::object cols, py::object dtype, py::object device, bool rg) {
        DType dt = dtype.is_none() ? DType::kF32 : ParseDType(dtype);
        Device dev = device.is_none() ? Device::CPU() : ParseDevice(device);
        Tensor t = Unwrap(F::Eye(n, cols.is_none() ? -1 : py::cast<int64_t>(cols), dt, dev));
        if (rg) Check(t.set_requires_grad(true));
        return t;
      },
      py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
}

}  // namespace
OFL_PY_BINDING(BindCreation);
}  // namespace python
}  // namespace oneflow_like
