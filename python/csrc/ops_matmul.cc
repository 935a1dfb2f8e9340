// Bindings of the matmul family, generated from oneflow_like/opdefs/matmul.def: one Python function
// (and, kind fn_method, Tensor method) per OFL_MATMUL_API line, with the PyTorch signature of its
// sig column; plus flow._C._matmul_table() for the op-table tests. The operators @ are
// hand-written below the table's.
#include <optional>

#include "oneflow_like/opdefs/matmul.h"
#include "oneflow_like/ops/matmul.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor MatmulAny(const Tensor& a, py::handle b) {
  return Unwrap(F::Matmul(a, ToTensor(b, &a)));
}

// One binder per sig column: flow.name(input, ...) and, when `method` (kind fn_method),
// Tensor.name(...).
struct MatmulBinder {
  py::module_& m;
  TensorClass& cls;
  // (input, other); Tensor.name(other) also takes a number or an array.
  template <typename Fn>
  void other(bool method, const char* name, Fn f) {
    m.def(
        name, [f](const Tensor& a, const Tensor& b) { return Unwrap(f(a, b)); }, py::arg("input"),
        py::arg("other"));
    if (method)
      cls.def(
          name, [f](const Tensor& a, py::object b) { return Unwrap(f(a, ToTensor(b, &a))); },
          py::arg("other"));
  }
  // (input, mat2)
  template <typename Fn>
  void mat2(bool method, const char* name, Fn f) {
    auto fn = [f](const Tensor& a, const Tensor& b) { return Unwrap(f(a, b)); };
    m.def(name, fn, py::arg("input"), py::arg("mat2"));
    if (method) cls.def(name, fn, py::arg("mat2"));
  }
  // (input, mat1, mat2, *, beta=1, alpha=1): alpha is MatmulAttrs' default, beta PyTorch's (the
  // input term in full).
  template <typename Fn>
  void addmm(bool method, const char* name, Fn f) {
    auto fn = [f](const Tensor& input, const Tensor& m1, const Tensor& m2, double beta,
                  double alpha) { return Unwrap(f(input, m1, m2, beta, alpha)); };
    const double alpha = opdefs::MatmulAttrs{}.alpha;
    m.def(name, fn, py::arg("input"), py::arg("mat1"), py::arg("mat2"), py::kw_only(),
          py::arg("beta") = 1.0, py::arg("alpha") = alpha);
    if (method)
      cls.def(name, fn, py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1.0,
              py::arg("alpha") = alpha);
  }
  // (input, weight, bias=None)
  template <typename Fn>
  void linear(bool method, const char* name, Fn f) {
    auto fn = [f](const Tensor& x, const Tensor& w, std::optional<Tensor> bias) {
      return Unwrap(f(x, w, bias ? *bias : Tensor()));
    };
    m.def(name, fn, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
    if (method) cls.def(name, fn, py::arg("weight"), py::arg("bias") = py::none());
  }
};

// One row per table entry, for flow._C._matmul_table().
constexpr char kOpCols[] = "name|grad|save|layout|lowp";
constexpr char kApiCols[] = "name|kind|sig|entry";
#define OFL_MATMUL_METHOD_fn_method true
#define OFL_MATMUL_METHOD_fn false
// clang-format off
#define OFL_ATTRS(...)
#define OFL_MATMUL_API(...)
#define OFL_MATMUL(name, Name, Attrs, grad, save, layout, lowp) \
  {#name "|" #grad "|" #save "|" #layout "|" #lowp, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/matmul.def"
};
#undef OFL_MATMUL
#undef OFL_MATMUL_API
#define OFL_MATMUL(...)
#define OFL_MATMUL_API(pyname, kind, sig, entry) {#pyname "|" #kind "|" #sig "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/matmul.def"
};
#undef OFL_MATMUL_API
// clang-format on

void BindMatmul(py::module_& m, TensorClass& cls) {
  MatmulBinder b{m, cls};
  // clang-format off
#define OFL_MATMUL_API(pyname, kind, sig, entry) \
  b.sig(OFL_MATMUL_METHOD_##kind, #pyname, F::entry);
#include "oneflow_like/opdefs/matmul.def"
#undef OFL_MATMUL_API
#undef OFL_MATMUL
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_matmul_table", kOpCols, kOpRows, kApiCols, kApiRows);
  // Hand-written: the operators.
  cls.def(
         "__matmul__", [](const Tensor& a, py::object b) { return MatmulAny(a, b); },
         py::is_operator())
      .def(
          "__rmatmul__",
          [](const Tensor& a, py::object b) { return Unwrap(F::Matmul(ToTensor(b, &a), a)); },
          py::is_operator());
}

}  // namespace
OFL_PY_BINDING(BindMatmul);
}  // namespace python
}  // namespace oneflow_like
