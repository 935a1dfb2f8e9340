// Bindings of the ternary family (oneflow_like/opdefs/ternary.def): the table's ops of api gen /
// gen_ip are bound from it (flow.name(x, y, z, *, attrs), Tensor.name(y, z, *, attrs) and, for
// gen_ip, Tensor.name_), with the table listed by flow._C._ternary_table(); where (tensor or
// Python-number branches) and lerp (tensor or number weight) are hand-written. (clamp with tensor
// bounds is bound with clamp in ops_unary.cc.)
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/ternary.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor WhereAny(const Tensor& cond, py::handle x, py::handle y) {
  bool xs = IsScalar(x), ys = IsScalar(y);
  if (xs && ys) {  // both numbers: the result dtype follows PyTorch (float if either is a float)
    DType t = IsFloatScalar(x) || IsFloatScalar(y)
                  ? DefaultFloatDType()
                  : (PyBool_Check(x.ptr()) && PyBool_Check(y.ptr()) ? DType::kBool : DType::kI64);
    Tensor xt = Unwrap(F::Full(Shape{}, ScalarValue(x), t, cond.device()));
    return Unwrap(F::WhereScalarOther(cond, xt, ScalarValue(y)));
  }
  if (ys) return Unwrap(F::WhereScalarOther(cond, ToTensor(x), ScalarValue(y)));
  if (xs) return Unwrap(F::WhereScalarInput(cond, ScalarValue(x), ToTensor(y)));
  Tensor xt = ToTensor(x);
  return Unwrap(F::Where(cond, xt, ToTensor(y, &xt)));
}

// The attributes of a generated binding: keyword-only, None keeping the table's default.
template <typename Attrs>
Attrs KeywordAttrs(const char* op, const py::kwargs& kw) {
  Attrs a;
  size_t used = 0;
  opdefs::ForEachAttr(a, [&](const char* name, auto& field) {
    if (!kw.contains(name)) return;
    ++used;
    py::object v = kw[name];
    if (!v.is_none()) field = v.cast<std::decay_t<decltype(field)>>();
  });
  if (used != kw.size())
    throw py::type_error(std::string("[") + op + "] unexpected keyword arguments " +
                         std::string(py::repr(kw)));
  return a;
}

template <typename Attrs>
void BindGen(py::module_& m, TensorClass& cls, const char* name, const char* const (&args)[3],
             StatusOr<Tensor> (*fn)(const Tensor&, const Tensor&, const Tensor&, const Attrs&),
             Status (*inplace)(const Tensor&, const Tensor&, const Tensor&, const Attrs&)) {
  auto f = [fn, name](const Tensor& x, const Tensor& y, const Tensor& z, py::kwargs kw) {
    return Unwrap(fn(x, y, z, KeywordAttrs<Attrs>(name, kw)));
  };
  m.def(name, f, py::arg(args[0]), py::arg(args[1]), py::arg(args[2]));
  cls.def(name, f, py::arg(args[1]), py::arg(args[2]));
  if (!inplace) return;
  auto ip = [inplace, name](Tensor& x, const Tensor& y, const Tensor& z, py::kwargs kw) -> Tensor& {
    Check(inplace(x, y, z, KeywordAttrs<Attrs>(name, kw)));
    return x;
  };
  cls.def((std::string(name) + "_").c_str(), ip, py::arg(args[1]), py::arg(args[2]));
}

// One row per table entry, for flow._C._ternary_table().
constexpr char kOpCols[] = "name|types|first|grad|api|lower|base";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, args, lower, ...) \
  {#name "|" #types "|" #first "|" #grad "|" #api "|" #lower "|" "", &AttrsDict<opdefs::Attrs>},
#define OFL_TERNARY_SCALAR(name, Name, types, Base, pos, grad, lower) \
  {#name "|" #types "|" "" "|" #grad "|" "scalar_" #pos "|" #lower "|" #Base, &AttrsDict<opdefs::ScalarAttrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/ternary.def"
};
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
// clang-format on

void BindTernary(py::module_& m, TensorClass& cls) {
  DefTable(m, "_ternary_table", kOpCols, kOpRows);
  // api gen / gen_ip, from the table.
  // clang-format off
#define OFL_TERNARY_ARGS(a, b, c) {#a, #b, #c}
#define OFL_TERNARY_BIND_custom(name, Name, Attrs, args)
#define OFL_TERNARY_BIND_internal(name, Name, Attrs, args)
#define OFL_TERNARY_BIND_gen(name, Name, Attrs, args)                                 \
  {                                                                                   \
    static const char* const names[3] = OFL_TERNARY_ARGS args;                        \
    BindGen<opdefs::Attrs>(m, cls, #name, names, &F::Name, nullptr);                  \
  }
#define OFL_TERNARY_BIND_gen_ip(name, Name, Attrs, args)                              \
  {                                                                                   \
    static const char* const names[3] = OFL_TERNARY_ARGS args;                        \
    BindGen<opdefs::Attrs>(m, cls, #name, names, &F::Name, &F::Name##_);              \
  }
#define OFL_ATTRS(...)
#define OFL_TERNARY(name, Name, types, first, Attrs, grad, api, args, ...) \
  OFL_TERNARY_BIND_##api(name, Name, Attrs, args)
#define OFL_TERNARY_SCALAR(...)
#include "oneflow_like/opdefs/ternary.def"
#undef OFL_TERNARY
#undef OFL_TERNARY_SCALAR
#undef OFL_ATTRS
  // clang-format on

  m.def(
      "where", [](const Tensor& cond, py::object x, py::object y) { return WhereAny(cond, x, y); },
      py::arg("condition"), py::arg("input"), py::arg("other"));
  cls.def(
      "where",
      [](const Tensor& self, const Tensor& cond, py::object y) {
        return WhereAny(cond, py::cast(self), y);
      },
      py::arg("condition"), py::arg("other"));

  auto lerp = [](const Tensor& s, const Tensor& e, py::object w) {
    if (IsScalar(w)) return Unwrap(F::LerpScalar(s, e, ScalarValue(w)));
    return Unwrap(F::Lerp(s, e, ToTensor(w, &s)));
  };
  m.def("lerp", lerp, py::arg("input"), py::arg("end"), py::arg("weight"));
  cls.def("lerp", lerp, py::arg("end"), py::arg("weight"))
      .def(
          "lerp_",
          [](Tensor& s, const Tensor& e, py::object w) {
            if (IsScalar(w))
              Check(F::LerpScalar_(s, e, ScalarValue(w)));
            else
              Check(F::Lerp_(s, e, ToTensor(w, &s)));
            return s;
          },
          py::arg("end"), py::arg("weight"));
}

}  // namespace
OFL_PY_BINDING(BindTernary);
}  // namespace python
}  // namespace oneflow_like
