// Bindings of the random family, generated from oneflow_like/opdefs/random.def: one Python function
// or Tensor method per OFL_RANDOM_API line, with the PyTorch signature of its sig column and
// defaults from the attribute structs; plus flow._C._random_table() for the op-table tests.
// Seeding (manual_seed, initial_seed, seed) is not an op and is bound by hand below.
#include <vector>

#include "oneflow_like/opdefs/random.h"
#include "oneflow_like/ops/random.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using DrawFn = StatusOr<Tensor> (*)(const Shape&, DType, Device);

Shape ShapeOf(const std::vector<int64_t>& v) {
  return Shape(DimVector(v.begin(), v.end()));
}
Device DeviceOr(py::object device, Device def) {
  return device.is_none() ? def : ParseDevice(device);
}
DType DtypeOr(py::object dtype, DType def) {
  return dtype.is_none() ? def : ParseDType(dtype);
}
Tensor Finish(Tensor t, bool requires_grad) {
  if (requires_grad) Check(t.set_requires_grad(true));
  return t;
}
// One binder per sig column, for the attribute struct A of the API line: dtype=None and
// device=None mean its dtype and device, and its other fields are the defaults.
// `generator=` is accepted for PyTorch compatibility; draws come from the device's generator.
template <typename A>
struct Binder {
  py::module_& m;
  TensorClass& cls;
  const A d{};
  // The struct's device ("cpu"), parsed once per binding.
  Device DefaultDevice() const { return Unwrap(Device::Parse(d.device)); }
  // flow.name(*size, dtype=None, device=None, requires_grad=False, generator=None)
  void size(const char* name, DrawFn f) {
    m.def(
        name,
        [f, dt = d.dtype, dev = DefaultDevice()](py::args size, py::object dtype, py::object device,
                                                 bool rg, py::object) {
          return Finish(
              Unwrap(f(ShapeOf(ParseShape(size)), DtypeOr(dtype, dt), DeviceOr(device, dev))), rg);
        },
        py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false, py::arg("generator") = py::none());
  }
  // flow.name(input, *, dtype=None, device=None, requires_grad=False): input's dtype and device.
  void like(const char* name, DrawFn f) {
    m.def(
        name,
        [f](const Tensor& x, py::object dtype, py::object device, bool rg) {
          return Finish(
              Unwrap(f(x.shape(), DtypeOr(dtype, x.dtype()), DeviceOr(device, x.device()))), rg);
        },
        py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false);
  }
  // randint(high, size) or randint(low, high, size); size may be a keyword.
  void randint(const char* name,
               StatusOr<Tensor> (*f)(int64_t, int64_t, const Shape&, DType, Device)) {
    m.def(
        name,
        [f, low = d.low, dt = d.dtype, dev = DefaultDevice()](py::args args, py::object size,
                                                              py::object dtype, py::object device,
                                                              bool rg, py::object) {
          std::vector<py::object> a;
          for (auto h : args) a.push_back(py::reinterpret_borrow<py::object>(h));
          if (!size.is_none()) a.push_back(size);
          if (a.size() == 2) a.insert(a.begin(), py::int_(low));
          if (a.size() != 3) throw py::type_error("[randint] expects randint(low=0, high, size)");
          return Finish(
              Unwrap(f(py::cast<int64_t>(a[0]), py::cast<int64_t>(a[1]),
                       ShapeOf(ParseIntList(a[2])), DtypeOr(dtype, dt), DeviceOr(device, dev))),
              rg);
        },
        py::kw_only(), py::arg("size") = py::none(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false,
        py::arg("generator") = py::none());
  }
  // randint_like(input, high) or randint_like(input, low, high).
  void randint_like(const char* name,
                    StatusOr<Tensor> (*f)(int64_t, int64_t, const Shape&, DType, Device)) {
    m.def(
        name,
        [f, def_low = d.low](const Tensor& x, int64_t low, py::object high, py::object dtype,
                             py::object device) {
          int64_t lo = high.is_none() ? def_low : low;
          int64_t hi = high.is_none() ? low : py::cast<int64_t>(high);
          return Unwrap(
              f(lo, hi, x.shape(), DtypeOr(dtype, x.dtype()), DeviceOr(device, x.device())));
        },
        py::arg("input"), py::arg("low"), py::arg("high") = py::none(), py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("device") = py::none());
  }
  // randperm(n, *, dtype=None, device=None, requires_grad=False, generator=None)
  void randperm(const char* name, StatusOr<Tensor> (*f)(int64_t, DType, Device)) {
    m.def(
        name,
        [f, dt = d.dtype, dev = DefaultDevice()](int64_t n, py::object dtype, py::object device,
                                                 bool rg, py::object) {
          return Finish(Unwrap(f(n, DtypeOr(dtype, dt), DeviceOr(device, dev))), rg);
        },
        py::arg("n"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false, py::arg("generator") = py::none());
  }
  // flow.bernoulli(input, *, generator=None) and Tensor.bernoulli(*, generator=None)
  void bernoulli(const char* name, StatusOr<Tensor> (*f)(const Tensor&)) {
    m.def(
        name, [f](const Tensor& p, py::object) { return Unwrap(f(p)); }, py::arg("input"),
        py::kw_only(), py::arg("generator") = py::none());
    cls.def(
        name, [f](const Tensor& p, py::object) { return Unwrap(f(p)); }, py::kw_only(),
        py::arg("generator") = py::none());
  }
  // normal(mean, std, size, *, dtype=None, device=None, requires_grad=False, generator=None):
  // float mean/std only.
  void normal(const char* name,
              StatusOr<Tensor> (*f)(double, double, const Shape&, DType, Device)) {
    m.def(
        name,
        [f, dt = d.dtype, dev = DefaultDevice()](double mean, double std, py::object size,
                                                 py::object dtype, py::object device, bool rg,
                                                 py::object) {
          return Finish(Unwrap(f(mean, std, ShapeOf(ParseIntList(size)), DtypeOr(dtype, dt),
                                 DeviceOr(device, dev))),
                        rg);
        },
        py::arg("mean"), py::arg("std"), py::arg("size"), py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false, py::arg("generator") = py::none());
  }
  // Tensor.name(from=low, to=high, *, generator=None), in place.
  void fill_uniform(const char* name, Status (*f)(const Tensor&, double, double)) {
    cls.def(
        name,
        [f](Tensor& x, double a, double b, py::object) {
          Check(f(x, a, b));
          return x;
        },
        py::arg("from") = d.low, py::arg("to") = d.high, py::kw_only(),
        py::arg("generator") = py::none());
  }
  // Tensor.name(mean=mean, std=std, *, generator=None), in place.
  void fill_normal(const char* name, Status (*f)(const Tensor&, double, double)) {
    cls.def(
        name,
        [f](Tensor& x, double mean, double std, py::object) {
          Check(f(x, mean, std));
          return x;
        },
        py::arg("mean") = d.mean, py::arg("std") = d.std, py::kw_only(),
        py::arg("generator") = py::none());
  }
  // random_(to) / random_(from, to); with no bounds, [0, 2^24) for floats (exact), [0, 2^31)
  // otherwise; from defaults to the struct's low.
  void fill_random(const char* name, Status (*f)(const Tensor&, int64_t, int64_t)) {
    cls.def(
        name,
        [f, low = d.low](Tensor& x, py::object a, py::object b, py::object) {
          int64_t lo = low, hi;
          if (a.is_none())
            hi = IsFloating(x.dtype()) ? (int64_t(1) << 24) : (int64_t(1) << 31);
          else if (b.is_none())
            hi = py::cast<int64_t>(a);
          else {
            lo = py::cast<int64_t>(a);
            hi = py::cast<int64_t>(b);
          }
          Check(f(x, lo, hi));
          return x;
        },
        py::arg("from") = py::none(), py::arg("to") = py::none(), py::kw_only(),
        py::arg("generator") = py::none());
  }
};

// One row per table entry, for flow._C._random_table().
constexpr char kOpCols[] = "name|out";
constexpr char kApiCols[] = "name|sig|entry|attrs";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_RANDOM_API(...)
#define OFL_RANDOM(name, Name, Attrs, out) {#name "|" #out, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/random.def"
};
#undef OFL_RANDOM
#undef OFL_RANDOM_API
#define OFL_RANDOM(...)
#define OFL_RANDOM_API(pyname, sig, entry, Attrs) {#pyname "|" #sig "|" #entry "|" #Attrs},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/random.def"
};
#undef OFL_RANDOM_API
// clang-format on

void BindRandom(py::module_& m, TensorClass& cls) {
  // clang-format off
#define OFL_RANDOM_API(pyname, sig, entry, Attrs) \
  Binder<opdefs::Attrs>{m, cls}.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/random.def"
#undef OFL_RANDOM_API
#undef OFL_RANDOM
#undef OFL_ATTRS
  // clang-format on
  m.def(
      "manual_seed", [](uint64_t seed) { F::ManualSeed(seed); }, py::arg("seed"));
  m.def("initial_seed", &F::InitialSeed);
  m.def("seed", [] {
    uint64_t s = F::NextSeed(Device::CPU());
    F::ManualSeed(s);
    return s;
  });
  DefTable(m, "_random_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindRandom);
}  // namespace python
}  // namespace oneflow_like
