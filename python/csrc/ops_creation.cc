// Bindings of the creation family, generated from oneflow_like/opdefs/creation.def: one Python
// function or Tensor method per OFL_CREATION_API line, with the PyTorch signature of its sig
// column and defaults from the attribute structs; plus flow._C._creation_table() for the op-table
// tests.
#include <optional>
#include <string>

#include "oneflow_like/opdefs/creation.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/creation.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using FullFn = StatusOr<Tensor> (*)(const Shape&, double, DType, Device);

// The defaults of dtype=None and device=None: the structs' (float32, read as the default float
// dtype; "cpu", parsed once, read as the default device).
template <typename A>
DType DefaultDtype() {
  return DefaultFloat(A{}.dtype);
}
template <typename A>
Device DefaultDevice() {
  static const Device d = Unwrap(Device::Parse(A{}.device));
  return DefaultDeviceOr(d);
}

Tensor Creation(FullFn f, double value, py::args size, py::object dtype, py::object device,
                bool requires_grad) {
  DType dt = dtype.is_none() ? DefaultDtype<opdefs::FullAttrs>() : ParseDType(dtype);
  Device dev = device.is_none() ? DefaultDevice<opdefs::FullAttrs>() : ParseDevice(device);
  auto shape = ParseShape(size);
  Tensor t = Unwrap(f(Shape(DimVector(shape.begin(), shape.end())), value, dt, dev));
  if (requires_grad) Check(t.set_requires_grad(true));
  return t;
}

Tensor LikeCreation(FullFn f, const Tensor& x, double value, py::object dtype, py::object device,
                    bool requires_grad) {
  DType dt = dtype.is_none() ? x.dtype() : ParseDType(dtype);
  Device dev = device.is_none() ? x.device() : ParseDevice(device);
  Tensor t = Unwrap(f(x.shape(), value, dt, dev));
  if (requires_grad) Check(t.set_requires_grad(true));
  return t;
}

// A bound given as a Python number or a one-element tensor.
double ScalarOf(py::handle h) {
  if (py::isinstance<Tensor>(h)) return py::cast<double>(h.attr("item")());
  return ScalarValue(h);
}

// A double attribute's default as Python writes it: an int when it is integral (arange's step=1,
// which its all-integer dtype rule reads as an int).
py::object Number(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v))) return py::int_(static_cast<int64_t>(v));
  return py::float_(v);
}

// A real fill value (fill_value / value), or pybind's error for a non-number, naming `name`.
double FillNumber(const char* name, py::handle v) {
  try {
    return py::cast<double>(v);
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(name) +
                         "(): incompatible function arguments: expected a number, got " +
                         std::string(py::str(py::type::of(v))));
  }
}

// One binder per sig column. `fill` is the fill column's value (nullopt: arg, an argument).
struct Binder {
  py::module_& m;
  TensorClass& cls;
  // flow.name(*size, dtype=None, device=None, requires_grad=False)
  void size(const char* name, FullFn f, std::optional<double> fill) {
    m.def(
        name,
        [f, v = *fill](py::args size, py::object dtype, py::object device, bool rg) {
          return Creation(f, v, size, dtype, device, rg);
        },
        py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  }
  // flow.full(size, fill_value, dtype=None, device=None, requires_grad=False)
  void full(const char* name, FullFn f, std::optional<double>) {
    m.def(
        name,
        [f](py::object size, py::object v, py::object dtype, py::object device, bool rg) {
          double re, im;
          if (!ComplexScalarValue(v, &re, &im))
            return Creation(f, FillNumber("full", v), py::make_tuple(size), dtype, device, rg);
          // a complex fill: the default float dtype's complex counterpart, as torch
          DType dt = dtype.is_none() ? ToComplexDType(DefaultDtype<opdefs::FullAttrs>())
                                     : ParseDType(dtype);
          Device dev = device.is_none() ? DefaultDevice<opdefs::FullAttrs>() : ParseDevice(device);
          auto shape = ParseShape(py::make_tuple(size));
          Tensor t =
              Unwrap(F::ComplexFull(Shape(DimVector(shape.begin(), shape.end())), re, im, dt, dev));
          if (rg) Check(t.set_requires_grad(true));
          return t;
        },
        py::arg("size"), py::arg("fill_value"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false);
  }
  // flow.name(input, dtype=None, device=None, requires_grad=False)
  void like(const char* name, FullFn f, std::optional<double> fill) {
    m.def(
        name,
        [f, v = *fill](const Tensor& x, py::object d, py::object dev, bool rg) {
          return LikeCreation(f, x, v, d, dev, rg);
        },
        py::arg("input"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  }
  // flow.full_like(input, fill_value, dtype=None, device=None, requires_grad=False)
  void full_like(const char* name, FullFn f, std::optional<double>) {
    m.def(
        name,
        [f](const Tensor& x, py::object v, py::object d, py::object dev, bool rg) {
          double re, im;
          if (!ComplexScalarValue(v, &re, &im))
            return LikeCreation(f, x, FillNumber("full_like", v), d, dev, rg);
          DType dt = d.is_none() ? x.dtype() : ParseDType(d);
          Tensor t = Unwrap(
              F::ComplexFull(x.shape(), re, im, dt, dev.is_none() ? x.device() : ParseDevice(dev)));
          if (rg) Check(t.set_requires_grad(true));
          return t;
        },
        py::arg("input"), py::arg("fill_value"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false);
  }
  // arange(end) / arange(start, end[, step]): int64 when every bound is an integer, else float32.
  void arange(const char* name, StatusOr<Tensor> (*f)(double, double, double, DType, Device),
              std::optional<double>) {
    const opdefs::ArangeAttrs d{};
    m.def(
        name,
        [f, start0 = d.start](py::object a, py::object b, py::object step, py::object dtype,
                              py::object device, bool rg) {
          py::object start = b.is_none() ? Number(start0) : a, end = b.is_none() ? a : b;
          bool all_int = !IsFloatScalar(start) && !IsFloatScalar(end) && !IsFloatScalar(step);
          DType dt = dtype.is_none() ? (all_int ? DType::kI64 : DefaultDtype<opdefs::ArangeAttrs>())
                                     : ParseDType(dtype);
          Device dev =
              device.is_none() ? DefaultDevice<opdefs::ArangeAttrs>() : ParseDevice(device);
          Tensor t = Unwrap(f(ScalarOf(start), ScalarOf(end), ScalarOf(step), dt, dev));
          if (rg) Check(t.set_requires_grad(true));
          return t;
        },
        py::arg("start"), py::arg("end") = py::none(), py::arg("step") = Number(d.step),
        py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  }
  // linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False)
  void linspace(const char* name, StatusOr<Tensor> (*f)(double, double, int64_t, DType, Device),
                std::optional<double>) {
    m.def(
        name,
        [f](py::object start, py::object end, int64_t steps, py::object dtype, py::object device,
            bool rg) {
          DType dt = dtype.is_none() ? DefaultDtype<opdefs::LinspaceAttrs>() : ParseDType(dtype);
          Device dev =
              device.is_none() ? DefaultDevice<opdefs::LinspaceAttrs>() : ParseDevice(device);
          Tensor t = Unwrap(f(ScalarOf(start), ScalarOf(end), steps, dt, dev));
          if (rg) Check(t.set_requires_grad(true));
          return t;
        },
        py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  }
  // eye(n, m=None, *, dtype=None, device=None, requires_grad=False): m=None is n (-1 for F::Eye).
  void eye(const char* name, StatusOr<Tensor> (*f)(int64_t, int64_t, DType, Device),
           std::optional<double>) {
    m.def(
        name,
        [f](int64_t n, py::object cols, py::object dtype, py::object device, bool rg) {
          DType dt = dtype.is_none() ? DefaultDtype<opdefs::EyeAttrs>() : ParseDType(dtype);
          Device dev = device.is_none() ? DefaultDevice<opdefs::EyeAttrs>() : ParseDevice(device);
          Tensor t = Unwrap(f(n, cols.is_none() ? -1 : py::cast<int64_t>(cols), dt, dev));
          if (rg) Check(t.set_requires_grad(true));
          return t;
        },
        py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false);
  }
  // Tensor.name(value) (one positional argument), in place.
  void fill(const char* name, Status (*f)(const Tensor&, double), std::optional<double>) {
    cls.def(name, [f, name](Tensor& x, py::object v) {
      double re, im;
      if (ComplexScalarValue(v, &re, &im))
        Check(F::ComplexFill_(x, re, im));
      else
        Check(f(x, FillNumber(name, v)));
      return x;
    });
  }
  // Tensor.name(), in place.
  void zero(const char* name, Status (*f)(const Tensor&, double), std::optional<double> fill) {
    cls.def(name, [f, v = *fill](Tensor& x) {
      Check(f(x, v));
      return x;
    });
  }
};

// One row per table entry, for flow._C._creation_table().
constexpr char kOpCols[] = "name|out";
constexpr char kApiCols[] = "name|sig|entry|fill";
// The fill column: the value of a size, like or zero API (nullopt: an argument gives it).
#define OFL_CREATION_FILL_zero std::optional<double>(opdefs::FullAttrs{}.value)
#define OFL_CREATION_FILL_one std::optional<double>(1.0)
#define OFL_CREATION_FILL_arg std::optional<double>()
// clang-format off
#define OFL_ATTRS(...)
#define OFL_CREATION_API(...)
#define OFL_CREATION(name, Name, Attrs, out) {#name "|" #out, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/creation.def"
};
#undef OFL_CREATION
#undef OFL_CREATION_API
#define OFL_CREATION(...)
#define OFL_CREATION_API(pyname, sig, entry, fill) {#pyname "|" #sig "|" #entry "|" #fill},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/creation.def"
};
#undef OFL_CREATION_API
// clang-format on

void BindCreation(py::module_& m, TensorClass& cls) {
  Binder b{m, cls};
  // clang-format off
#define OFL_CREATION_API(pyname, sig, entry, fill) \
  b.sig(#pyname, F::entry, OFL_CREATION_FILL_##fill);
#include "oneflow_like/opdefs/creation.def"
#undef OFL_CREATION_API
#undef OFL_CREATION
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_creation_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindCreation);
}  // namespace python
}  // namespace oneflow_like
