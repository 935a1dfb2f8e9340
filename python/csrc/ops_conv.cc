// Bindings of the convolution family, generated from oneflow_like/opdefs/conv.def: one
// torch.nn.functional-style function per OFL_CONV_API line, defined in `_C` and
// `_C.nn_functional` (nn/functional.py wraps them), with the defaults of ConvAttrs; plus
// flow._C._conv_table() for the op-table tests.
#include <optional>
#include <string>

#include "oneflow_like/opdefs/conv.h"
#include "oneflow_like/ops/conv.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using ConvFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&, const Tensor&,
                                    const F::ConvOptions&);

// padding: ints, or 'valid' (no padding).
std::vector<int64_t> Padding(const char* name, const py::object& padding) {
  if (!py::isinstance<py::str>(padding)) return ParseIntList(padding);
  std::string mode = padding.cast<std::string>();
  if (mode == "valid") return {0};
  throw py::value_error(std::string("[") + name + "] padding mode '" + mode + "' is not supported");
}

// (input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) in `_C` and
// `_C.nn_functional`.
void BindConv(py::module_& m, py::module_& sub, const char* name, ConvFn f) {
  const opdefs::ConvAttrs d;
  for (py::module_* mod : {&m, &sub})
    mod->def(
        name,
        [name, f](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::object s,
                  py::object p, py::object dl, int64_t g) {
          F::ConvOptions o;
          o.stride = ParseIntList(s);
          o.padding = Padding(name, p);
          o.dilation = ParseIntList(dl);
          o.groups = g;
          return Unwrap(f(x, w, b ? *b : Tensor(), o));
        },
        py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(),
        py::arg("stride") = d.stride[0], py::arg("padding") = d.padding[0],
        py::arg("dilation") = d.dilation[0], py::arg("groups") = d.groups);
}

// One row per table entry, for flow._C._conv_table().
struct OpRow {
  const char *name, *grad, *save;
  int nd;
  py::dict (*attrs)();
};
struct ApiRow {
  const char *name, *entry;
  int nd;
};
// clang-format off
#define OFL_ATTRS(...)
#define OFL_CONV_API(...)
#define OFL_CONV(name, Name, nd, grad, save) {#name, #grad, #save, nd, &AttrsDict<opdefs::ConvAttrs>},
#define OFL_CONV_GRAD(name, Name, Attrs, shape) \
  {#name, "NoGrad", "none", 0, &AttrsDict<opdefs::Attrs>},
const OpRow kOpRows[] = {
#include "oneflow_like/opdefs/conv.def"
};
#undef OFL_CONV
#undef OFL_CONV_GRAD
#undef OFL_CONV_API
#define OFL_CONV(...)
#define OFL_CONV_GRAD(...)
#define OFL_CONV_API(pyname, nd, entry) {#pyname, #entry, nd},
const ApiRow kApiRows[] = {
#include "oneflow_like/opdefs/conv.def"
};
#undef OFL_CONV_API
// clang-format on

void BindConvFamily(py::module_& m, TensorClass&) {
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  // clang-format off
#define OFL_CONV_API(pyname, nd, entry) BindConv(m, sub, #pyname, F::entry);
#include "oneflow_like/opdefs/conv.def"
#undef OFL_CONV_API
#undef OFL_CONV_GRAD
#undef OFL_CONV
#undef OFL_ATTRS
  // clang-format on
  m.def("_conv_table", [] {
    py::list ops, apis;
    for (const OpRow& r : kOpRows)
      ops.append(py::dict(py::arg("name") = r.name, py::arg("nd") = r.nd, py::arg("grad") = r.grad,
                          py::arg("save") = r.save, py::arg("attrs") = r.attrs()));
    for (const ApiRow& r : kApiRows)
      apis.append(
          py::dict(py::arg("name") = r.name, py::arg("nd") = r.nd, py::arg("entry") = r.entry));
    return py::dict(py::arg("ops") = ops, py::arg("apis") = apis);
  });
}

}  // namespace
OFL_PY_BINDING(BindConvFamily);
}  // namespace python
}  // namespace oneflow_like
