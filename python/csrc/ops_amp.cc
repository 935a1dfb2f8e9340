// Bindings of the fused GradScaler ops, generated from oneflow_like/opdefs/amp.def: one function
// per OFL_AMP_API line with torch's private signature (flow._amp_foreach_non_finite_check_and_
// unscale_(grads, found_inf, inv_scale) -> None, flow._amp_update_scale_(scale, growth_tracker,
// found_inf, growth_factor, backoff_factor, growth_interval) -> scale), plus flow._C._amp_table()
// for the op-table tests.
#include <vector>

#include "oneflow_like/opdefs/amp.h"
#include "oneflow_like/ops/amp.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// One binder per sig column.
struct AmpBinder {
  py::module_& m;
  template <typename Fn>
  void unscale(const char* name, Fn f) {
    m.def(
        name,
        [f](const std::vector<Tensor>& grads, const Tensor& found_inf, const Tensor& inv_scale) {
          Check(f(TensorList(grads.begin(), grads.end()), found_inf, inv_scale));
        },
        py::arg("grads"), py::arg("found_inf"), py::arg("inv_scale"));
  }
  template <typename Fn>
  void update(const char* name, Fn f) {
    m.def(
        name,
        [f](const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
            double growth_factor, double backoff_factor, int64_t growth_interval) {
          return Unwrap(
              f(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval));
        },
        py::arg("scale"), py::arg("growth_tracker"), py::arg("found_inf"), py::arg("growth_factor"),
        py::arg("backoff_factor"), py::arg("growth_interval"));
  }
};

// One row per table entry, for flow._C._amp_table().
constexpr char kOpCols[] = "name|kind";
constexpr char kApiCols[] = "name|sig|entry";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_AMP_API(...)
#define OFL_AMP(name, Name, Attrs, kind) {#name "|" #kind, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/amp.def"
};
#undef OFL_AMP
#undef OFL_AMP_API
#define OFL_AMP(...)
#define OFL_AMP_API(pyname, sig, entry) {#pyname "|" #sig "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/amp.def"
};
#undef OFL_AMP_API
// clang-format on

void BindAmpOps(py::module_& m, TensorClass&) {
  AmpBinder b{m};
  // clang-format off
#define OFL_AMP_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/amp.def"
#undef OFL_AMP_API
#undef OFL_AMP
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_amp_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindAmpOps);
}  // namespace python
}  // namespace oneflow_like
