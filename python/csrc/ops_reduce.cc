// Bindings of the reduce family, generated from oneflow_like/opdefs/reduce.def: one function and
// Tensor method per OFL_REDUCE_API line, with the PyTorch signature of its sig column, plus
// flow._C._reduce_table() for the op-table tests (its ops include the OFL_REDUCE_INTERNAL ops,
// with check "internal"; they have no API). max/min/nanmedian with a dim return a
// namedtuple (values, indices), as torch.return_types does.
#include <cmath>

#include "oneflow_like/opdefs/reduce.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/reduce.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

std::vector<int64_t> DimsArg(py::object dim) {
  if (dim.is_none()) return {};
  return ParseIntList(dim);
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

using DimsFn = StatusOr<Tensor> (*)(const Tensor&, std::vector<int64_t>, bool);
using PairFn = StatusOr<std::pair<Tensor, Tensor>> (*)(const Tensor&, int64_t, bool);

// One binder per sig column: defines flow.name(input, ...) and Tensor.name(...).
struct Binder {
  py::module_& m;
  TensorClass& cls;
  template <typename Fn, typename... Extra>
  void Both(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  }
  void dims_dtype(const char* name, DimsFn f, std::nullptr_t) {
    Both(
        name,
        [f](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
          return Unwrap(f(WithDtype(x, dtype), DimsArg(dim), keepdim));
        },
        py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("dtype") = py::none());
  }
  void dims(const char* name, DimsFn f, std::nullptr_t, py::object dim_default = py::none()) {
    Both(
        name,
        [f](const Tensor& x, py::object dim, bool keepdim) {
          return Unwrap(f(x, DimsArg(dim), keepdim));
        },
        py::arg("dim") = dim_default, py::arg("keepdim") = false);
  }
  void dims_all(const char* name, DimsFn f, std::nullptr_t) { dims(name, f, nullptr, py::tuple()); }
  template <typename Fn>
  void opt_dim(const char* name, Fn f, std::nullptr_t) {
    Both(
        name,
        [f](const Tensor& x, py::object dim, bool keepdim) {
          return Unwrap(f(x, OptDim(dim), keepdim));
        },
        py::arg("dim") = py::none(), py::arg("keepdim") = false);
  }
  template <typename Fn>
  void var(const char* name, Fn f, std::nullptr_t) {
    Both(
        name,
        [f](const Tensor& x, py::object dim, py::object unbiased, bool keepdim,
            py::object correction) {
          double c = Correction(dim, unbiased, correction);
          return Unwrap(f(x, DimsArg(dim), c, keepdim));
        },
        py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false,
        py::kw_only(), py::arg("correction") = py::none());
  }
  template <typename Fn>
  void norm(const char* name, Fn f, std::nullptr_t) {
    Both(
        name,
        [f](const Tensor& x, py::object p, py::object dim, bool keepdim, py::object dtype) {
          return Unwrap(f(WithDtype(x, dtype), NormP(p), DimsArg(dim), keepdim));
        },
        py::arg("p") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false,
        py::arg("dtype") = py::none());
  }
  // No dim: all(x); an int dim: oneflow_like.return_types.<name>(values, indices) of dim_fn
  // (the type held once, never freed).
  void values_indices(const char* name, StatusOr<Tensor> (*all)(const Tensor&), PairFn dim_fn) {
    auto* type = new py::object(py::module_::import("oneflow_like.return_types").attr(name));
    std::string op = name;
    Both(
        name,
        [all, dim_fn, type, op](const Tensor& x, py::object dim, bool keepdim) -> py::object {
          if (dim.is_none()) return py::cast(Unwrap(all(x)));
          if (!PyLong_Check(dim.ptr()))
            throw py::type_error("[" + op + "] dim must be an int, got " +
                                 std::string(py::repr(dim)));
          auto r = Unwrap(dim_fn(x, py::cast<int64_t>(dim), keepdim));
          return (*type)(r.first, r.second);
        },
        py::arg("dim") = py::none(), py::arg("keepdim") = false);
  }
};

// One row per table entry, for flow._C._reduce_table().
constexpr char kOpCols[] = "name|out|grad|save|layout|check";
constexpr char kApiCols[] = "name|sig|entry";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_REDUCE_API(...)
#define OFL_REDUCE(name, Name, Attrs, out, grad, save, layout, check) \
  {#name "|" #out "|" #grad "|" #save "|" #layout "|" #check, &AttrsDict<opdefs::Attrs>},
#define OFL_REDUCE_INTERNAL(name, Name, Attrs, out, grad, save, layout) \
  {#name "|" #out "|" #grad "|" #save "|" #layout "|" "internal", &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/reduce.def"
};
#undef OFL_REDUCE
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE_API
#define OFL_REDUCE(...)
#define OFL_REDUCE_INTERNAL(...)
#define OFL_REDUCE_API(pyname, sig, entry, dim_entry) {#pyname "|" #sig "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/reduce.def"
};
#undef OFL_REDUCE_API
// clang-format on

#define OFL_REDUCE_DIM_ENTRY_values_indices(dim_entry) F::dim_entry
#define OFL_REDUCE_DIM_ENTRY_dims_dtype(dim_entry) nullptr
#define OFL_REDUCE_DIM_ENTRY_dims_all(dim_entry) nullptr
#define OFL_REDUCE_DIM_ENTRY_dims(dim_entry) nullptr
#define OFL_REDUCE_DIM_ENTRY_opt_dim(dim_entry) nullptr
#define OFL_REDUCE_DIM_ENTRY_var(dim_entry) nullptr
#define OFL_REDUCE_DIM_ENTRY_norm(dim_entry) nullptr

void BindReduce(py::module_& m, TensorClass& cls) {
  Binder b{m, cls};
  // clang-format off
#define OFL_REDUCE_API(pyname, sig, entry, dim_entry) \
  b.sig(#pyname, F::entry, OFL_REDUCE_DIM_ENTRY_##sig(dim_entry));
#include "oneflow_like/opdefs/reduce.def"
#undef OFL_REDUCE_API
#undef OFL_REDUCE_INTERNAL
#undef OFL_REDUCE
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_reduce_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindReduce);
}  // namespace python
}  // namespace oneflow_like
