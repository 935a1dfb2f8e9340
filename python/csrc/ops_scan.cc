// Bindings of the scan and ordering family (functions and Tensor methods, PyTorch names and
// signatures). Ops with two results return namedtuples (values, indices) named as
// torch.return_types: sort, topk, kthvalue, cummax, cummin.
#include "oneflow_like/ops/scan.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// namedtuple types, created once, never freed.
py::object* g_sort = nullptr;
py::object* g_topk = nullptr;
py::object* g_kthvalue = nullptr;
py::object* g_cummax = nullptr;
py::object* g_cummin = nullptr;

py::object Tuple(py::object* type, StatusOr<std::pair<Tensor, Tensor>> r) {
  auto p = Unwrap(std::move(r));
  return (*type)(p.first, p.second);
}

std::optional<DType> OptDtype(py::object dtype) {
  if (dtype.is_none()) return std::nullopt;
  return ParseDType(dtype);
}

void BindScan(py::module_& m, TensorClass& cls) {
  py::object nt = py::module_::import("collections").attr("namedtuple");
  auto make = [&](const char* name) {
    return new py::object(nt(name, py::make_tuple("values", "indices")));
  };
  g_sort = make("sort");
  g_topk = make("topk");
  g_kthvalue = make("kthvalue");
  g_cummax = make("cummax");
  g_cummin = make("cummin");

  auto cumsum = [](const Tensor& x, int64_t dim, py::object dtype) {
    return Unwrap(F::Cumsum(x, dim, OptDtype(dtype)));
  };
  auto cumprod = [](const Tensor& x, int64_t dim, py::object dtype) {
    return Unwrap(F::Cumprod(x, dim, OptDtype(dtype)));
  };
  auto logcumsumexp = [](const Tensor& x, int64_t dim) { return Unwrap(F::LogCumSumExp(x, dim)); };
  auto cummax = [](const Tensor& x, int64_t dim) { return Tuple(g_cummax, F::Cummax(x, dim)); };
  auto cummin = [](const Tensor& x, int64_t dim) { return Tuple(g_cummin, F::Cummin(x, dim)); };
  // sort(input, dim=-1, descending=False, stable=False): always stable here.
  auto sort = [](const Tensor& x, int64_t dim, bool descending, py::object /*stable*/) {
    return Tuple(g_sort, F::Sort(x, dim, descending));
  };
  auto argsort = [](const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
    return Unwrap(F::Argsort(x, dim, descending));
  };
  auto msort = [](const Tensor& x) { return Unwrap(F::Sort(x, 0, false)).first; };
  auto topk = [](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
    return Tuple(g_topk, F::Topk(x, k, dim, largest, sorted));
  };
  auto kthvalue = [](const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
    return Tuple(g_kthvalue, F::Kthvalue(x, k, dim, keepdim));
  };

  // Functions take `input` first; methods are the same callables bound to the tensor.
  auto def_both = [&](const char* name, auto fn, auto... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  };
  def_both("cumsum", cumsum, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  def_both("cumprod", cumprod, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  def_both("logcumsumexp", logcumsumexp, py::arg("dim"));
  def_both("cummax", cummax, py::arg("dim"));
  def_both("cummin", cummin, py::arg("dim"));
  def_both("sort", sort, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
           py::arg("stable") = py::none());
  def_both("argsort", argsort, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
           py::arg("stable") = false);
  def_both("msort", msort);
  def_both("topk", topk, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true,
           py::arg("sorted") = true);
  def_both("kthvalue", kthvalue, py::arg("k"), py::arg("dim") = -1, py::arg("keepdim") = false);
}

}  // namespace
OFL_PY_BINDING(BindScan);
}  // namespace python
}  // namespace oneflow_like
