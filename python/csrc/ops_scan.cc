// Bindings of the scan and ordering family, generated from oneflow_like/opdefs/scan.def: one
// Python function and Tensor method per OFL_SCAN_API line, with the PyTorch signature of its sig
// column and defaults from the attribute structs; plus flow._C._scan_table() for the op-table
// tests. Ops with two results return namedtuples (values, indices) named as torch.return_types:
// sort, topk, kthvalue, cummax, cummin.
#include <optional>
#include <utility>

#include "oneflow_like/opdefs/scan.h"
#include "oneflow_like/ops/scan.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using PairFn = StatusOr<std::pair<Tensor, Tensor>> (*)(const Tensor&, int64_t);

// The named tuple type oneflow_like.return_types.<name>(values, indices), held once, never freed.
py::object* ValuesIndices(const char* name) {
  return new py::object(py::module_::import("oneflow_like.return_types").attr(name));
}

py::object Tuple(py::object* type, StatusOr<std::pair<Tensor, Tensor>> r) {
  auto p = Unwrap(std::move(r));
  return (*type)(p.first, p.second);
}

std::optional<DType> OptDtype(py::object dtype) {
  if (dtype.is_none()) return std::nullopt;
  return ParseDType(dtype);
}

// One binder per sig column: defines flow.name(input, ...) and Tensor.name(...).
struct Binder {
  py::module_& m;
  TensorClass& cls;
  const opdefs::SortAttrs sort_d{};
  const opdefs::TopkAttrs topk_d{};
  // Functions take `input` first; methods are the same callables bound to the tensor.
  template <typename Fn, typename... Extra>
  void Def(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  }
  // (input, dim, *, dtype=None)
  void dim_dtype(const char* name,
                 StatusOr<Tensor> (*f)(const Tensor&, int64_t, std::optional<DType>)) {
    Def(
        name,
        [f](const Tensor& x, int64_t dim, py::object dtype) {
          return Unwrap(f(x, dim, OptDtype(dtype)));
        },
        py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  }
  // (input, dim)
  void dim(const char* name, StatusOr<Tensor> (*f)(const Tensor&, int64_t)) {
    Def(
        name, [f](const Tensor& x, int64_t dim) { return Unwrap(f(x, dim)); }, py::arg("dim"));
  }
  // (input, dim) -> namedtuple name(values, indices)
  void dim_pair(const char* name, PairFn f) {
    py::object* type = ValuesIndices(name);
    Def(
        name, [f, type](const Tensor& x, int64_t dim) { return Tuple(type, f(x, dim)); },
        py::arg("dim"));
  }
  // sort(input, dim=-1, descending=False, *, stable=None): always stable here.
  void sort(const char* name,
            StatusOr<std::pair<Tensor, Tensor>> (*f)(const Tensor&, int64_t, bool)) {
    py::object* type = ValuesIndices(name);
    Def(
        name,
        [f, type](const Tensor& x, int64_t dim, bool descending, py::object /*stable*/) {
          return Tuple(type, f(x, dim, descending));
        },
        py::arg("dim") = sort_d.dim, py::arg("descending") = sort_d.descending, py::kw_only(),
        py::arg("stable") = py::none());
  }
  // argsort(input, dim=-1, descending=False, *, stable=False)
  void argsort(const char* name, StatusOr<Tensor> (*f)(const Tensor&, int64_t, bool)) {
    Def(
        name,
        [f](const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
          return Unwrap(f(x, dim, descending));
        },
        py::arg("dim") = sort_d.dim, py::arg("descending") = sort_d.descending, py::kw_only(),
        py::arg("stable") = false);
  }
  // msort(input): the values sorted along dim 0, ascending.
  void msort(const char* name,
             StatusOr<std::pair<Tensor, Tensor>> (*f)(const Tensor&, int64_t, bool)) {
    Def(name, [f](const Tensor& x) { return Unwrap(f(x, 0, false)).first; });
  }
  // topk(input, k, dim=-1, largest=True, sorted=True)
  void topk(const char* name,
            StatusOr<std::pair<Tensor, Tensor>> (*f)(const Tensor&, int64_t, int64_t, bool, bool)) {
    py::object* type = ValuesIndices(name);
    Def(
        name,
        [f, type](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
          return Tuple(type, f(x, k, dim, largest, sorted));
        },
        py::arg("k"), py::arg("dim") = topk_d.dim, py::arg("largest") = topk_d.largest,
        py::arg("sorted") = true);
  }
  // kthvalue(input, k, dim=-1, keepdim=False)
  void kthvalue(const char* name,
                StatusOr<std::pair<Tensor, Tensor>> (*f)(const Tensor&, int64_t, int64_t, bool)) {
    py::object* type = ValuesIndices(name);
    Def(
        name,
        [f, type](const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
          return Tuple(type, f(x, k, dim, keepdim));
        },
        py::arg("k"), py::arg("dim") = topk_d.dim, py::arg("keepdim") = false);
  }
};

// One row per table entry, for flow._C._scan_table().
constexpr char kOpCols[] = "name|out|grad|save";
constexpr char kApiCols[] = "name|sig|entry";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_SCAN_API(...)
#define OFL_SCAN(name, Name, Attrs, out, grad, save) \
  {#name "|" #out "|" #grad "|" #save, &AttrsDict<opdefs::Attrs>},
#define OFL_SCAN_GRAD(name, Name, Attrs) {#name "|" "grad" "|" "NoGrad" "|" "none", &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/scan.def"
};
#undef OFL_SCAN
#undef OFL_SCAN_GRAD
#undef OFL_SCAN_API
#define OFL_SCAN(...)
#define OFL_SCAN_GRAD(...)
#define OFL_SCAN_API(pyname, sig, entry) {#pyname "|" #sig "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/scan.def"
};
#undef OFL_SCAN_API
// clang-format on

void BindScan(py::module_& m, TensorClass& cls) {
  Binder b{m, cls};
  // clang-format off
#define OFL_SCAN_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/scan.def"
#undef OFL_SCAN_API
#undef OFL_SCAN_GRAD
#undef OFL_SCAN
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_scan_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindScan);
}  // namespace python
}  // namespace oneflow_like
