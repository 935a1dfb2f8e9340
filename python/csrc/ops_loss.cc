// Bindings of the loss family, generated from oneflow_like/opdefs/loss.def: one
// torch.nn.functional-style function per OFL_LOSS_API line, defined in `_C` and
// `_C.nn_functional` (nn/functional.py wraps them), with the signature of its sig column and the
// defaults of NllLossAttrs / LossReductionAttrs; plus flow._C._loss_table() for the op-table
// tests.
#include <string>

#include "oneflow_like/opdefs/loss.h"
#include "oneflow_like/ops/loss.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using NllFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&, const F::NllOptions&);
using PointwiseFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&, const std::string&);
using LogitsFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                      const std::string&);

Tensor OptTensor(const py::object& o) {
  return o.is_none() ? Tensor() : o.cast<Tensor>();
}

F::NllOptions NllOpts(const py::object& weight, int64_t ignore_index, const std::string& reduction,
                      double smoothing) {
  F::NllOptions o;
  o.weight = OptTensor(weight);
  o.ignore_index = ignore_index;
  o.reduction = reduction;
  o.label_smoothing = smoothing;
  return o;
}

// One binder per sig column: defines name(input, target, ...) in `_C` and `_C.nn_functional`.
struct Binder {
  py::module_& m;
  py::module_& sub;
  const F::NllOptions d{};                              // NllLossAttrs' defaults
  const std::string reduction = F::DefaultReduction();  // LossReductionAttrs
  template <typename Fn, typename... Extra>
  void Both(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, py::arg("input"), py::arg("target"), extra...);
    sub.def(name, fn, py::arg("input"), py::arg("target"), extra...);
  }
  // (input, target, weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)
  void nll_smoothing(const char* name, NllFn f) {
    Both(
        name,
        [f](const Tensor& x, const Tensor& t, py::object w, int64_t ignore, const std::string& red,
            double ls) { return Unwrap(f(x, t, NllOpts(w, ignore, red, ls))); },
        py::arg("weight") = py::none(), py::arg("ignore_index") = d.ignore_index,
        py::arg("reduction") = d.reduction, py::arg("label_smoothing") = d.label_smoothing);
  }
  // (input, target, weight=None, ignore_index=-100, reduction='mean')
  void nll(const char* name, NllFn f) {
    const double ls = d.label_smoothing;
    Both(
        name,
        [f, ls](const Tensor& x, const Tensor& t, py::object w, int64_t ignore,
                const std::string& red) { return Unwrap(f(x, t, NllOpts(w, ignore, red, ls))); },
        py::arg("weight") = py::none(), py::arg("ignore_index") = d.ignore_index,
        py::arg("reduction") = d.reduction);
  }
  // (input, target, reduction='mean')
  void pointwise(const char* name, PointwiseFn f) {
    Both(
        name,
        [f](const Tensor& x, const Tensor& t, const std::string& red) {
          return Unwrap(f(x, t, red));
        },
        py::arg("reduction") = reduction);
  }
  // (input, target, weight=None, reduction='mean', pos_weight=None)
  void logits(const char* name, LogitsFn f) {
    Both(
        name,
        [f](const Tensor& x, const Tensor& t, py::object w, const std::string& red, py::object pw) {
          return Unwrap(f(x, t, OptTensor(w), OptTensor(pw), red));
        },
        py::arg("weight") = py::none(), py::arg("reduction") = reduction,
        py::arg("pos_weight") = py::none());
  }
};

// One row per table entry, for flow._C._loss_table().
struct OpRow {
  const char *name, *out, *grad, *save;
  py::dict (*attrs)();
};
struct ApiRow {
  const char *name, *sig, *entry;
};
// clang-format off
#define OFL_ATTRS(...)
#define OFL_LOSS_API(...)
#define OFL_LOSS(name, Name, Attrs, out, grad, save) \
  {#name, #out, #grad, #save, &AttrsDict<opdefs::Attrs>},
#define OFL_LOSS_GRAD(name, Name, Attrs, out) \
  {#name, #out, "NoGrad", "none", &AttrsDict<opdefs::Attrs>},
const OpRow kOpRows[] = {
#include "oneflow_like/opdefs/loss.def"
};
#undef OFL_LOSS
#undef OFL_LOSS_GRAD
#undef OFL_LOSS_API
#define OFL_LOSS(...)
#define OFL_LOSS_GRAD(...)
#define OFL_LOSS_API(pyname, sig, entry) {#pyname, #sig, #entry},
const ApiRow kApiRows[] = {
#include "oneflow_like/opdefs/loss.def"
};
#undef OFL_LOSS_API
// clang-format on

void BindLoss(py::module_& m, TensorClass&) {
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  Binder b{m, sub};
  // clang-format off
#define OFL_LOSS_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/loss.def"
#undef OFL_LOSS_API
#undef OFL_LOSS_GRAD
#undef OFL_LOSS
#undef OFL_ATTRS
  // clang-format on
  m.def("_loss_table", [] {
    py::list ops, apis;
    for (const OpRow& r : kOpRows)
      ops.append(py::dict(py::arg("name") = r.name, py::arg("out") = r.out,
                          py::arg("grad") = r.grad, py::arg("save") = r.save,
                          py::arg("attrs") = r.attrs()));
    for (const ApiRow& r : kApiRows)
      apis.append(
          py::dict(py::arg("name") = r.name, py::arg("sig") = r.sig, py::arg("entry") = r.entry));
    return py::dict(py::arg("ops") = ops, py::arg("apis") = apis);
  });
}

}  // namespace
OFL_PY_BINDING(BindLoss);
}  // namespace python
}  // namespace oneflow_like
