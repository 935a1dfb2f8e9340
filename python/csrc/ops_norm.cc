// Bindings of the normalization family, generated from oneflow_like/opdefs/norm.def: one
// torch.nn.functional-style function per OFL_NORM_API line, defined in `_C` and `_C.nn_functional`
// (nn/functional.py wraps them), with the signature of its sig column and eps defaulting to the
// attribute struct's; plus flow._C._norm_table() for the op-table tests.
#include <optional>

#include "oneflow_like/opdefs/norm.h"
#include "oneflow_like/ops/norm.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using OptTensor = std::optional<Tensor>;
Tensor Or(const OptTensor& t) {
  return t ? *t : Tensor();
}

using ShapeAffineFn = StatusOr<Tensor> (*)(const Tensor&, const std::vector<int64_t>&,
                                           const Tensor&, const Tensor&, double);
using GroupsAffineFn = StatusOr<Tensor> (*)(const Tensor&, int64_t, const Tensor&, const Tensor&,
                                            double);
using ShapeWeightFn = StatusOr<Tensor> (*)(const Tensor&, const std::vector<int64_t>&,
                                           const Tensor&, std::optional<double>);
using BatchNormFn = decltype(&F::BatchNorm);

// One binder per sig column: defines name(input, ...) in `_C` and `_C.nn_functional`.
struct Binder {
  py::module_& m;
  py::module_& sub;
  template <typename Fn, typename... Extra>
  void Both(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    sub.def(name, fn, py::arg("input"), extra...);
  }
  void batch_norm(const char* name, BatchNormFn f) {
    Both(
        name,
        [f](const Tensor& x, const OptTensor& rm, const OptTensor& rv, const OptTensor& w,
            const OptTensor& b, bool training, double momentum, double eps) {
          return Unwrap(f(x, Or(rm), Or(rv), Or(w), Or(b), training, momentum, eps));
        },
        py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = py::none(),
        py::arg("bias") = py::none(), py::arg("training") = opdefs::BatchNormAttrs{}.training,
        py::arg("momentum") = 0.1, py::arg("eps") = opdefs::BatchNormAttrs{}.eps);
  }
  void shape_affine(const char* name, ShapeAffineFn f) {
    Both(
        name,
        [f](const Tensor& x, py::object shape, const OptTensor& w, const OptTensor& b, double eps) {
          return Unwrap(f(x, ParseIntList(shape), Or(w), Or(b), eps));
        },
        py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("eps") = opdefs::RowNormAttrs{}.eps);
  }
  void groups_affine(const char* name, GroupsAffineFn f) {
    Both(
        name,
        [f](const Tensor& x, int64_t groups, const OptTensor& w, const OptTensor& b, double eps) {
          return Unwrap(f(x, groups, Or(w), Or(b), eps));
        },
        py::arg("num_groups"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
        py::arg("eps") = opdefs::RowNormAttrs{}.eps);
  }
  void shape_weight(const char* name, ShapeWeightFn f) {
    Both(
        name,
        [f](const Tensor& x, py::object shape, const OptTensor& w, std::optional<double> eps) {
          return Unwrap(f(x, ParseIntList(shape), Or(w), eps));
        },
        py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("eps") = py::none());
  }
};

// One row per table entry, for flow._C._norm_table().
struct OpRow {
  const char *name, *out, *grad, *save, *params;
  py::dict (*attrs)();
};
struct ApiRow {
  const char *name, *sig, *entry;
};
// clang-format off
#define OFL_ATTRS(...)
#define OFL_NORM_API(...)
#define OFL_NORM(name, Name, Attrs, out, grad, save, params) \
  {#name, #out, #grad, #save, #params, &AttrsDict<opdefs::Attrs>},
#define OFL_NORM_GRAD(name, Name, Attrs, out) \
  {#name, #out, "NoGrad", "none", "internal", &AttrsDict<opdefs::Attrs>},
const OpRow kOpRows[] = {
#include "oneflow_like/opdefs/norm.def"
};
#undef OFL_NORM
#undef OFL_NORM_GRAD
#undef OFL_NORM_API
#define OFL_NORM(...)
#define OFL_NORM_GRAD(...)
#define OFL_NORM_API(pyname, sig, entry) {#pyname, #sig, #entry},
const ApiRow kApiRows[] = {
#include "oneflow_like/opdefs/norm.def"
};
#undef OFL_NORM_API
// clang-format on

void BindNorm(py::module_& m, TensorClass&) {
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  Binder b{m, sub};
  // clang-format off
#define OFL_NORM_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/norm.def"
#undef OFL_NORM_API
#undef OFL_NORM_GRAD
#undef OFL_NORM
#undef OFL_ATTRS
  // clang-format on
  m.def("_norm_table", [] {
    py::list ops, apis;
    for (const OpRow& r : kOpRows)
      ops.append(py::dict(py::arg("name") = r.name, py::arg("out") = r.out,
                          py::arg("grad") = r.grad, py::arg("save") = r.save,
                          py::arg("params") = r.params, py::arg("attrs") = r.attrs()));
    for (const ApiRow& r : kApiRows)
      apis.append(
          py::dict(py::arg("name") = r.name, py::arg("sig") = r.sig, py::arg("entry") = r.entry));
    return py::dict(py::arg("ops") = ops, py::arg("apis") = apis);
  });
}

}  // namespace
OFL_PY_BINDING(BindNorm);
}  // namespace python
}  // namespace oneflow_like
