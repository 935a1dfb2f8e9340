// Bindings of the random family: seeding, random tensors and in-place fills.
#include "oneflow_like/ops/random.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

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

// `generator=` is accepted for PyTorch compatibility; draws come from the device's generator.
void BindRandom(py::module_& m, TensorClass& cls) {
  m.def(
      "rand",
      [](py::args size, py::object dtype, py::object device, bool rg, py::object) {
        return Finish(Unwrap(F::Rand(ShapeOf(ParseShape(size)), DtypeOr(dtype, DType::kF32),
                                     DeviceOr(device, Device::CPU()))),
                      rg);
      },
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("generator") = py::none());
  m.def(
      "randn",
      [](py::args size, py::object dtype, py::object device, bool rg, py::object) {
        return Finish(Unwrap(F::Randn(ShapeOf(ParseShape(size)), DtypeOr(dtype, DType::kF32),
                                      DeviceOr(device, Device::CPU()))),
                      rg);
      },
      py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("generator") = py::none());
  m.def(
      "rand_like",
      [](const Tensor& x, py::object dtype, py::object device, bool rg) {
        return Finish(
            Unwrap(F::Rand(x.shape(), DtypeOr(dtype, x.dtype()), DeviceOr(device, x.device()))),
            rg);
      },
      py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "randn_like",
      [](const Tensor& x, py::object dtype, py::object device, bool rg) {
        return Finish(
            Unwrap(F::Randn(x.shape(), DtypeOr(dtype, x.dtype()), DeviceOr(device, x.device()))),
            rg);
      },
      py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  // randint(high, size) or randint(low, high, size).
  m.def(
      "randint",
      [](py::args args, py::object size, py::object dtype, py::object device, bool rg, py::object) {
        std::vector<py::object> a;
        for (auto h : args) a.push_back(py::reinterpret_borrow<py::object>(h));
        if (!size.is_none()) a.push_back(size);
        if (a.size() == 2) a.insert(a.begin(), py::int_(0));
        if (a.size() != 3) throw py::type_error("[randint] expects randint(low=0, high, size)");
        return Finish(Unwrap(F::Randint(py::cast<int64_t>(a[0]), py::cast<int64_t>(a[1]),
                                        ShapeOf(ParseIntList(a[2])), DtypeOr(dtype, DType::kI64),
                                        DeviceOr(device, Device::CPU()))),
                      rg);
      },
      py::kw_only(), py::arg("size") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      py::arg("generator") = py::none());
  m.def(
      "randint_like",
      [](const Tensor& x, int64_t low, py::object high, py::object dtype, py::object device) {
        int64_t lo = high.is_none() ? 0 : low, hi = high.is_none() ? low : py::cast<int64_t>(high);
        return Unwrap(
            F::Randint(lo, hi, x.shape(), DtypeOr(dtype, x.dtype()), DeviceOr(device, x.device())));
      },
      py::arg("input"), py::arg("low"), py::arg("high") = py::none(), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def(
      "randperm",
      [](int64_t n, py::object dtype, py::object device, bool rg, py::object) {
        return Finish(
            Unwrap(F::Randperm(n, DtypeOr(dtype, DType::kI64), DeviceOr(device, Device::CPU()))),
            rg);
      },
      py::arg("n"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("generator") = py::none());
  m.def(
      "bernoulli", [](const Tensor& p, py::object) { return Unwrap(F::Bernoulli(p)); },
      py::arg("input"), py::kw_only(), py::arg("generator") = py::none());
  cls.def(
      "bernoulli", [](const Tensor& p, py::object) { return Unwrap(F::Bernoulli(p)); },
      py::kw_only(), py::arg("generator") = py::none());
  // normal(mean, std, size): float mean/std only.
  m.def(
      "normal",
      [](double mean, double std, py::object size, py::object dtype, py::object device, bool rg,
         py::object) {
        return Finish(
            Unwrap(F::Normal(mean, std, ShapeOf(ParseIntList(size)), DtypeOr(dtype, DType::kF32),
                             DeviceOr(device, Device::CPU()))),
            rg);
      },
      py::arg("mean"), py::arg("std"), py::arg("size"), py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false, py::arg("generator") = py::none());
  cls.def(
      "uniform_",
      [](Tensor& x, double a, double b, py::object) {
        Check(F::Uniform_(x, a, b));
        return x;
      },
      py::arg("from") = 0.0, py::arg("to") = 1.0, py::kw_only(), py::arg("generator") = py::none());
  cls.def(
      "normal_",
      [](Tensor& x, double mean, double std, py::object) {
        Check(F::Normal_(x, mean, std));
        return x;
      },
      py::arg("mean") = 0.0, py::arg("std") = 1.0, py::kw_only(),
      py::arg("generator") = py::none());
  // random_(to) / random_(from, to); with no bounds, [0, 2^24) for floats (exact), [0, 2^31)
  // otherwise.
  cls.def(
      "random_",
      [](Tensor& x, py::object a, py::object b, py::object) {
        int64_t lo = 0, hi;
        if (a.is_none())
          hi = IsFloating(x.dtype()) ? (int64_t(1) << 24) : (int64_t(1) << 31);
        else if (b.is_none())
          hi = py::cast<int64_t>(a);
        else {
          lo = py::cast<int64_t>(a);
          hi = py::cast<int64_t>(b);
        }
        Check(F::Random_(x, lo, hi));
        return x;
      },
      py::arg("from") = py::none(), py::arg("to") = py::none(), py::kw_only(),
      py::arg("generator") = py::none());
  m.def(
      "manual_seed", [](uint64_t seed) { F::ManualSeed(seed); }, py::arg("seed"));
  m.def("initial_seed", &F::InitialSeed);
  m.def("seed", [] {
    uint64_t s = F::NextSeed(Device::CPU());
    F::ManualSeed(s);
    return s;
  });
}

}  // namespace
OFL_PY_BINDING(BindRandom);
}  // namespace python
}  // namespace oneflow_like
