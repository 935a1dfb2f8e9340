// Bindings of the reduce family (functions and Tensor methods, PyTorch names and signatures).
// max/min with a dim return a namedtuple-like (values, indices), as torch.return_types does.
#include <cmath>

#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/reduce.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

std::vector<int64_t> DimsArg(py::object dim) {
  if (dim.is_none()) return {};
  return ParseIntList(dim);
}

// namedtuple types max(values, indices) / min(values, indices); created once, never freed.
py::object* g_max_type = nullptr;
py::object* g_min_type = nullptr;

py::object MaxMin(bool is_max, const Tensor& x, py::object dim, bool keepdim) {
  if (dim.is_none())
    return py::cast(Unwrap(is_max ? F::Amax(x, {}, false) : F::Amin(x, {}, false)));
  if (!PyLong_Check(dim.ptr())) {
    throw py::type_error(std::string("[") + (is_max ? "max" : "min") +
                         "] dim must be an int (use maximum/minimum for two tensors), got " +
                         std::string(py::repr(dim)));
  }
  auto r = Unwrap(is_max ? F::MaxDim(x, py::cast<int64_t>(dim), keepdim)
                         : F::MinDim(x, py::cast<int64_t>(dim), keepdim));
  return (*(is_max ? g_max_type : g_min_type))(r.first, r.second);
}

std::optional<int64_t> OptDim(py::object dim) {
  if (dim.is_none()) return std::nullopt;
  return py::cast<int64_t>(dim);
}

// var/std(input, dim=None, unbiased=None, keepdim=False, *, correction=None); var(x, True) means
// unbiased.
double Correction(py::object& dim, py::object unbiased, py::object correction) {
  if (PyBool_Check(dim.ptr())) {
    unbiased = dim;
    dim = py::none();
  }
  if (!correction.is_none()) return py::cast<double>(correction);
  if (!unbiased.is_none()) return py::cast<bool>(unbiased) ? 1.0 : 0.0;
  return 1.0;
}

double NormP(py::object p) {
  if (p.is_none()) return 2.0;
  if (py::isinstance<py::str>(p)) {
    std::string s = py::cast<std::string>(p);
    if (s == "fro") return 2.0;
    throw py::value_error("[norm] p='" + s + "' is not supported (use 'fro' or a number)");
  }
  return py::cast<double>(p);
}

Tensor WithDtype(const Tensor& x, py::object dtype) {
  return dtype.is_none() ? x : Unwrap(F::Cast(x, ParseDType(dtype)));
}

void BindReduce(py::module_& m, TensorClass& cls) {
  py::object nt = py::module_::import("collections").attr("namedtuple");
  g_max_type = new py::object(nt("max", py::make_tuple("values", "indices")));
  g_min_type = new py::object(nt("min", py::make_tuple("values", "indices")));

  auto sum = [](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
    return Unwrap(F::Sum(WithDtype(x, dtype), DimsArg(dim), keepdim));
  };
  auto mean = [](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
    return Unwrap(F::Mean(WithDtype(x, dtype), DimsArg(dim), keepdim));
  };
  auto prod = [](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
    return Unwrap(F::Prod(WithDtype(x, dtype), DimsArg(dim), keepdim));
  };
  auto amax = [](const Tensor& x, py::object dim, bool keepdim) {
    return Unwrap(F::Amax(x, DimsArg(dim), keepdim));
  };
  auto amin = [](const Tensor& x, py::object dim, bool keepdim) {
    return Unwrap(F::Amin(x, DimsArg(dim), keepdim));
  };
  auto max = [](const Tensor& x, py::object dim, bool keepdim) {
    return MaxMin(true, x, dim, keepdim);
  };
  auto min = [](const Tensor& x, py::object dim, bool keepdim) {
    return MaxMin(false, x, dim, keepdim);
  };
  auto argmax = [](const Tensor& x, py::object dim, bool keepdim) {
    return Unwrap(F::Argmax(x, OptDim(dim), keepdim));
  };
  auto argmin = [](const Tensor& x, py::object dim, bool keepdim) {
    return Unwrap(F::Argmin(x, OptDim(dim), keepdim));
  };
  auto var = [](const Tensor& x, py::object dim, py::object unbiased, bool keepdim,
                py::object correction) {
    double c = Correction(dim, unbiased, correction);
    return Unwrap(F::Var(x, DimsArg(dim), c, keepdim));
  };
  auto std_ = [](const Tensor& x, py::object dim, py::object unbiased, bool keepdim,
                 py::object correction) {
    double c = Correction(dim, unbiased, correction);
    return Unwrap(F::Std(x, DimsArg(dim), c, keepdim));
  };
  auto norm = [](const Tensor& x, py::object p, py::object dim, bool keepdim, py::object dtype) {
    return Unwrap(F::Norm(WithDtype(x, dtype), NormP(p), DimsArg(dim), keepdim));
  };
  auto logsumexp = [](const Tensor& x, py::object dim, bool keepdim) {
    return Unwrap(F::LogSumExp(x, DimsArg(dim), keepdim));
  };
  auto nansum = [](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
    return Unwrap(F::NanSum(WithDtype(x, dtype), DimsArg(dim), keepdim));
  };

  // Functions take `input` first; methods are the same callables bound to the tensor.
  auto def_both = [&](const char* name, auto fn, auto... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  };
  def_both("sum", sum, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
           py::arg("dtype") = py::none());
  def_both("mean", mean, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
           py::arg("dtype") = py::none());
  def_both("prod", prod, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
           py::arg("dtype") = py::none());
  def_both("amax", amax, py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
  def_both("amin", amin, py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
  def_both("max", max, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both("min", min, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both("argmax", argmax, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both("argmin", argmin, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both("var", var, py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
           py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none());
  def_both("std", std_, py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
           py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none());
  def_both("norm", norm, py::arg("p") = "fro", py::arg("dim") = py::none(),
           py::arg("keepdim") = false, py::arg("dtype") = py::none());
  def_both("logsumexp", logsumexp, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both("nansum", nansum, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
           py::arg("dtype") = py::none());
}

}  // namespace
OFL_PY_BINDING(BindReduce);
}  // namespace python
}  // namespace oneflow_like
