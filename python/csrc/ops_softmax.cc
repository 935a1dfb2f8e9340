// Bindings of the softmax family, generated from oneflow_like/opdefs/softmax.def: per
// OFL_SOFTMAX_API line, flow.pyname(input, dim=-1) in `_C` and `_C.nn_functional` (nn/functional.py
// wraps it) and Tensor.pyname(dim=-1), with the default of SoftmaxAttrs; plus
// flow._C._softmax_table() for the op-table tests.
#include "oneflow_like/opdefs/softmax.h"
#include "oneflow_like/ops/softmax.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using DimFn = StatusOr<Tensor> (*)(const Tensor&, int64_t);

// One binder per sig column: name(input, ...) in `_C` and `_C.nn_functional`, Tensor.name(...).
struct Binder {
  py::module_& m;
  py::module_& sub;
  TensorClass& cls;
  template <typename Fn, typename... Extra>
  void All(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), extra...);
    sub.def(name, fn, py::arg("input"), extra...);
    cls.def(name, fn, extra...);
  }
  // (input, dim=-1)
  void dim(const char* name, DimFn f) {
    All(
        name, [f](const Tensor& x, int64_t dim) { return Unwrap(f(x, dim)); },
        py::arg("dim") = opdefs::SoftmaxAttrs{}.dim);
  }
};

// One row per table entry, for flow._C._softmax_table().
struct OpRow {
  const char *name, *grad, *save;
  py::dict (*attrs)();
};
struct ApiRow {
  const char *name, *sig, *entry;
};
// clang-format off
#define OFL_ATTRS(...)
#define OFL_SOFTMAX_API(...)
#define OFL_SOFTMAX(name, Name, Attrs, grad, save) {#name, #grad, #save, &AttrsDict<opdefs::Attrs>},
#define OFL_SOFTMAX_GRAD(name, Name, Attrs) {#name, "NoGrad", "none", &AttrsDict<opdefs::Attrs>},
const OpRow kOpRows[] = {
#include "oneflow_like/opdefs/softmax.def"
};
#undef OFL_SOFTMAX
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX_API
#define OFL_SOFTMAX(...)
#define OFL_SOFTMAX_GRAD(...)
#define OFL_SOFTMAX_API(pyname, sig, entry) {#pyname, #sig, #entry},
const ApiRow kApiRows[] = {
#include "oneflow_like/opdefs/softmax.def"
};
#undef OFL_SOFTMAX_API
// clang-format on

void BindSoftmax(py::module_& m, TensorClass& cls) {
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  Binder b{m, sub, cls};
  // clang-format off
#define OFL_SOFTMAX_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/softmax.def"
#undef OFL_SOFTMAX_API
#undef OFL_SOFTMAX_GRAD
#undef OFL_SOFTMAX
#undef OFL_ATTRS
  // clang-format on
  m.def("_softmax_table", [] {
    py::list ops, apis;
    for (const OpRow& r : kOpRows)
      ops.append(py::dict(py::arg("name") = r.name, py::arg("grad") = r.grad,
                          py::arg("save") = r.save, py::arg("attrs") = r.attrs()));
    for (const ApiRow& r : kApiRows)
      apis.append(
          py::dict(py::arg("name") = r.name, py::arg("sig") = r.sig, py::arg("entry") = r.entry));
    return py::dict(py::arg("ops") = ops, py::arg("apis") = apis);
  });
}

}  // namespace
OFL_PY_BINDING(BindSoftmax);
}  // namespace python
}  // namespace oneflow_like
