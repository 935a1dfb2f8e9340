// Bindings of the random family, generated from oneflow_like/opdefs/random.def: one Python function
// or Tensor method per OFL_RANDOM_API line, with the PyTorch signature of its sig column and
// defaults from the attribute structs; plus flow._C._random_table() for the op-table tests.
// Seeding (manual_seed, initial_seed) and the generators are not ops and are bound by hand below.
#include <vector>

#include "oneflow_like/opdefs/random.h"
#include "oneflow_like/ops/random.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"
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
// generator=: None (the device's default generator), a flow.Generator or its _C._Generator.
std::shared_ptr<F::Generator> GeneratorOf(py::handle gen) {
  if (gen.is_none()) return nullptr;
  py::object impl =
      py::hasattr(gen, "_impl") ? gen.attr("_impl") : py::reinterpret_borrow<py::object>(gen);
  if (!py::isinstance<F::Generator>(impl))
    throw py::type_error("[generator] expected a flow.Generator, got " +
                         std::string(py::str(py::type::of(gen).attr("__name__"))));
  return impl.cast<std::shared_ptr<F::Generator>>();
}
// Runs fn() with `gen` (if given) as the generator of the random ops it dispatches.
template <typename Fn>
auto WithGenerator(const char* op, py::handle gen, const Device& device, Fn fn) {
  std::shared_ptr<F::Generator> g = GeneratorOf(gen);
  Status st = F::CheckGeneratorDevice(op, g.get(), device);
  if (!st.ok()) throw std::runtime_error(std::string(st.message()));  // RuntimeError, as torch
  F::GeneratorOverride scope(std::move(g));
  return fn();
}

// One binder per sig column, for the attribute struct A of the API line: dtype=None and
// device=None mean its dtype and device, and its other fields are the defaults.
// `generator=` names the generator the draws come from (default: the device's).
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
        [name, f, dt = d.dtype, dev = DefaultDevice()](py::args size, py::object dtype,
                                                       py::object device, bool rg, py::object gen) {
          const Device on = DeviceOr(device, DefaultDeviceOr(dev));
          return Finish(WithGenerator(name, gen, on,
                                      [&] {
                                        return Unwrap(f(ShapeOf(ParseShape(size)),
                                                        DtypeOr(dtype, DefaultFloat(dt)), on));
                                      }),
                        rg);
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
        [name, f, low = d.low, dt = d.dtype, dev = DefaultDevice()](
            py::args args, py::object size, py::object dtype, py::object device, bool rg,
            py::object gen) {
          std::vector<py::object> a;
          for (auto h : args) a.push_back(py::reinterpret_borrow<py::object>(h));
          if (!size.is_none()) a.push_back(size);
          if (a.size() == 2) a.insert(a.begin(), py::int_(low));
          if (a.size() != 3) throw py::type_error("[randint] expects randint(low=0, high, size)");
          const Device on = DeviceOr(device, DefaultDeviceOr(dev));
          return Finish(
              WithGenerator(name, gen, on,
                            [&] {
                              return Unwrap(f(py::cast<int64_t>(a[0]), py::cast<int64_t>(a[1]),
                                              ShapeOf(ParseIntList(a[2])), DtypeOr(dtype, dt), on));
                            }),
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
        [name, f, dt = d.dtype, dev = DefaultDevice()](int64_t n, py::object dtype,
                                                       py::object device, bool rg, py::object gen) {
          const Device on = DeviceOr(device, DefaultDeviceOr(dev));
          return Finish(
              WithGenerator(name, gen, on, [&] { return Unwrap(f(n, DtypeOr(dtype, dt), on)); }),
              rg);
        },
        py::arg("n"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false, py::arg("generator") = py::none());
  }
  // flow.bernoulli(input, *, generator=None) and Tensor.bernoulli(*, generator=None)
  void bernoulli(const char* name, StatusOr<Tensor> (*f)(const Tensor&)) {
    auto draw = [name, f](const Tensor& p, py::object gen) {
      return WithGenerator(name, gen, p.device(), [&] { return Unwrap(f(p)); });
    };
    m.def(name, draw, py::arg("input"), py::kw_only(), py::arg("generator") = py::none());
    cls.def(name, draw, py::kw_only(), py::arg("generator") = py::none());
  }
  // normal(mean, std, size, *, dtype=None, device=None, requires_grad=False, generator=None):
  // float mean/std only.
  void normal(const char* name,
              StatusOr<Tensor> (*f)(double, double, const Shape&, DType, Device)) {
    m.def(
        name,
        [name, f, dt = d.dtype, dev = DefaultDevice()](double mean, double std, py::object size,
                                                       py::object dtype, py::object device, bool rg,
                                                       py::object gen) {
          const Device on = DeviceOr(device, DefaultDeviceOr(dev));
          return Finish(WithGenerator(name, gen, on,
                                      [&] {
                                        return Unwrap(f(mean, std, ShapeOf(ParseIntList(size)),
                                                        DtypeOr(dtype, DefaultFloat(dt)), on));
                                      }),
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
        [name, f](Tensor& x, double a, double b, py::object gen) {
          Check(WithGenerator(name, gen, x.device(), [&] { return f(x, a, b); }));
          return x;
        },
        py::arg("from") = d.low, py::arg("to") = d.high, py::kw_only(),
        py::arg("generator") = py::none());
  }
  // Tensor.name(mean=mean, std=std, *, generator=None), in place.
  void fill_normal(const char* name, Status (*f)(const Tensor&, double, double)) {
    cls.def(
        name,
        [name, f](Tensor& x, double mean, double std, py::object gen) {
          Check(WithGenerator(name, gen, x.device(), [&] { return f(x, mean, std); }));
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
        [name, f, low = d.low](Tensor& x, py::object a, py::object b, py::object gen) {
          int64_t lo = low, hi;
          if (a.is_none())
            hi = IsFloating(x.dtype()) ? (int64_t(1) << 24) : (int64_t(1) << 31);
          else if (b.is_none())
            hi = py::cast<int64_t>(a);
          else {
            lo = py::cast<int64_t>(a);
            hi = py::cast<int64_t>(b);
          }
          Check(WithGenerator(name, gen, x.device(), [&] { return f(x, lo, hi); }));
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
  // The generators behind flow.Generator (oneflow_like/_generator.py wraps them): a state is
  // (seed, offset), see ops/random.h.
  py::class_<F::Generator, std::shared_ptr<F::Generator>>(m, "_Generator")
      .def(py::init([](py::object device, uint64_t seed) {
             return std::make_shared<F::Generator>(ParseDevice(device), seed);
           }),
           py::arg("device"), py::arg("seed"))
      .def_property_readonly("device", &F::Generator::device)
      .def("manual_seed", &F::Generator::ManualSeed, py::arg("seed"))
      .def("initial_seed", &F::Generator::InitialSeed)
      .def("next_seed", &F::Generator::Next)
      .def("get_state",
           [](const F::Generator& g) {
             F::Generator::State s = g.GetState();
             return py::make_tuple(s.seed, s.offset);
           })
      .def(
          "set_state",
          [](F::Generator& g, uint64_t seed, uint64_t offset) {
            g.SetState(F::Generator::State{seed, offset});
          },
          py::arg("seed"), py::arg("offset"));
  m.def(
      "_default_generator",
      [](py::object device) { return F::DefaultGenerator(ParseDevice(device)); },
      py::arg("device"));
  DefTable(m, "_random_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindRandom);
}  // namespace python
}  // namespace oneflow_like
