// Bindings of the NN miscellany, generated from oneflow_like/opdefs/nn_misc.def: one
// torch.nn.functional-style function per OFL_NN_MISC_API line, defined in `_C` and
// `_C.nn_functional` (nn/functional.py wraps them), with the signature of its sig column and the
// defaults of the attribute structs; plus flow._C._nn_misc_table() for the op-table tests.
#include <optional>

#include "oneflow_like/opdefs/nn_misc.h"
#include "oneflow_like/ops/nn_misc.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using EmbeddingFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&, std::optional<int64_t>);
using DropoutFn = StatusOr<Tensor> (*)(const Tensor&, double, bool);
using AttentionFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                         double, bool, std::optional<double>);

Tensor OptTensor(const py::object& o) {
  return o.is_none() ? Tensor() : o.cast<Tensor>();
}

// An index attribute's Python default: None where the struct's is -1 (none).
py::object IndexDefault(int64_t v) {
  return v < 0 ? py::object(py::none()) : py::object(py::int_(v));
}

// One binder per sig column: defines name(...) in `_C` and `_C.nn_functional`.
struct Binder {
  py::module_& m;
  py::module_& sub;
  template <typename Fn, typename... Extra>
  void Both(const char* name, Fn fn, Extra... extra) {
    m.def(name, fn, extra...);
    sub.def(name, fn, extra...);
  }
  // (input, weight, padding_idx=None)
  void embedding(const char* name, EmbeddingFn f) {
    Both(
        name,
        [f](const Tensor& idx, const Tensor& w, py::object pad) {
          std::optional<int64_t> p;
          if (!pad.is_none()) p = pad.cast<int64_t>();
          return Unwrap(f(idx, w, p));
        },
        py::arg("input"), py::arg("weight"),
        py::arg("padding_idx") = IndexDefault(opdefs::EmbeddingAttrs{}.padding_idx));
  }
  // (input, p=0.5, training=True)
  void dropout(const char* name, DropoutFn f) {
    Both(
        name, [f](const Tensor& x, double p, bool training) { return Unwrap(f(x, p, training)); },
        py::arg("input"), py::arg("p") = opdefs::DropoutAttrs{}.p, py::arg("training") = true);
  }
  // (query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None)
  void attention(const char* name, AttentionFn f) {
    Both(
        name,
        [f](const Tensor& q, const Tensor& k, const Tensor& v, py::object mask, double dp,
            bool causal, py::object scale) {
          std::optional<double> sc;
          if (!scale.is_none()) sc = scale.cast<double>();
          return Unwrap(f(q, k, v, OptTensor(mask), dp, causal, sc));
        },
        py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
        py::arg("dropout_p") = 0.0, py::arg("is_causal") = opdefs::AttnBiasAttrs{}.is_causal,
        py::arg("scale") = py::none());
  }
};

// One row per table entry, for flow._C._nn_misc_table().
struct OpRow {
  const char *name, *out, *grad, *save;
  py::dict (*attrs)();
};
struct ApiRow {
  const char *name, *sig, *entry;
};
// clang-format off
#define OFL_ATTRS(...)
#define OFL_NN_MISC_API(...)
#define OFL_NN_MISC(name, Name, Attrs, out, grad, save) \
  {#name, #out, #grad, #save, &AttrsDict<opdefs::Attrs>},
const OpRow kOpRows[] = {
#include "oneflow_like/opdefs/nn_misc.def"
};
#undef OFL_NN_MISC
#undef OFL_NN_MISC_API
#define OFL_NN_MISC(...)
#define OFL_NN_MISC_API(pyname, sig, entry) {#pyname, #sig, #entry},
const ApiRow kApiRows[] = {
#include "oneflow_like/opdefs/nn_misc.def"
};
#undef OFL_NN_MISC_API
// clang-format on

void BindNnMisc(py::module_& m, TensorClass&) {
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  Binder b{m, sub};
  // clang-format off
#define OFL_NN_MISC_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/nn_misc.def"
#undef OFL_NN_MISC_API
#undef OFL_NN_MISC
#undef OFL_ATTRS
  // clang-format on
  m.def("_nn_misc_table", [] {
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
OFL_PY_BINDING(BindNnMisc);
}  // namespace python
}  // namespace oneflow_like
