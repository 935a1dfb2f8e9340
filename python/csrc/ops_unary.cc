// Bindings of the unary family: module functions (PyTorch names and signatures), Tensor methods,
// in-place methods and the __neg__/__abs__/__invert__ dunders.
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/ternary.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// Binds a table op (api gen / gen_ip in oneflow_like/opdefs/unary.def) as flow.name(input, ...),
// Tensor.name(...) and, with `inplace`, name_: the attributes are taken positionally or by
// name in the table's order, None keeping the table's default.
template <typename Attrs>
Attrs ParseAttrs(const char* op, const py::args& args, const py::kwargs& kw) {
  Attrs a;
  size_t i = 0, used = 0;
  opdefs::ForEachAttr(a, [&](const char* name, auto& field) {
    py::object v = py::none();
    if (i < args.size()) {
      v = args[i];
    } else if (kw.contains(name)) {
      v = kw[name];
      ++used;
    }
    ++i;
    if (!v.is_none()) field = v.cast<std::decay_t<decltype(field)>>();
  });
  if (args.size() > i || used != kw.size())
    throw py::type_error(std::string("[") + op + "] unexpected arguments");
  return a;
}

// A float-only math function takes an integer or bool tensor in the default float dtype
// (torch.get_default_dtype()), as PyTorch does; the functional entry alone uses float32.
Tensor InFloat(const Tensor& x, bool float_only) {
  if (!float_only || IsFloating(x.dtype()) || IsComplex(x.dtype())) return x;
  return Unwrap(F::Cast(x, DefaultFloatDType()));
}

template <typename Attrs>
void BindTableOp(py::module_& m, TensorClass& cls, const char* name,
                 StatusOr<Tensor> (*fn)(const Tensor&, const Attrs&),
                 Status (*inplace)(const Tensor&, const Attrs&), bool float_only) {
  auto f = [fn, name, float_only](const Tensor& x, py::args args, py::kwargs kw) {
    return Unwrap(fn(InFloat(x, float_only), ParseAttrs<Attrs>(name, args, kw)));
  };
  m.def(name, f, py::arg("input"));
  cls.def(name, f);
  if (!inplace) return;
  auto ip = [inplace, name](Tensor& x, py::args args, py::kwargs kw) -> Tensor& {
    Check(inplace(x, ParseAttrs<Attrs>(name, args, kw)));
    return x;
  };
  std::string ip_name = std::string(name) + "_";
  m.def(ip_name.c_str(), ip, py::arg("input"));
  cls.def(ip_name.c_str(), ip);
}

// api `special`: _C._special.name(input) only (torch.special's functions have no Tensor method).
template <typename Attrs>
void BindSpecialOp(py::module_& m, const char* name,
                   StatusOr<Tensor> (*fn)(const Tensor&, const Attrs&), bool float_only) {
  m.def(
      name,
      [fn, float_only](const Tensor& x) { return Unwrap(fn(InFloat(x, float_only), Attrs{})); },
      py::arg("input"));
}

std::optional<double> OptScalar(const py::object& o, const char* what) {
  if (o.is_none()) return std::nullopt;
  if (!IsScalar(o))
    throw py::type_error(std::string("[clamp] ") + what + " must be a number, a tensor or None");
  return ScalarValue(o);
}

// clamp with a tensor bound: the ternary table's clamp_tensor (broadcasting, differentiable in
// the input and both bounds); a number beside it becomes a 0-dim tensor.
Tensor ClampAny(const Tensor& x, py::object lo, py::object hi) {
  bool tensor_bound = py::isinstance<Tensor>(lo) || py::isinstance<Tensor>(hi);
  if (!tensor_bound) return Unwrap(F::Clamp(x, OptScalar(lo, "min"), OptScalar(hi, "max")));
  auto bound = [&](const py::object& b, const char* what) {
    if (b.is_none()) return Tensor();
    if (py::isinstance<Tensor>(b)) return b.cast<Tensor>();
    OptScalar(b, what);  // else a number (raises otherwise)
    return ToTensor(b, &x);
  };
  return Unwrap(F::ClampTensor(x, bound(lo, "min"), bound(hi, "max")));
}

Tensor& ClampInplace(Tensor& x, py::object lo, py::object hi) {
  if (py::isinstance<Tensor>(lo) || py::isinstance<Tensor>(hi)) {
    Tensor r = ClampAny(x, lo, hi);
    Check(F::CopyInto(x, r));
    return x;
  }
  Check(F::Clamp_(x, OptScalar(lo, "min"), OptScalar(hi, "max")));
  return x;
}

bool ParseApproximate(const std::string& a) {
  if (a == "none") return false;
  if (a == "tanh") return true;
  throw py::value_error("[gelu] approximate must be 'none' or 'tanh', got '" + a + "'");
}

// One row per table entry, for flow._C._unary_table().
constexpr char kOpCols[] = "name|types|grad|api|lower";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, lower, ...) \
  {#name "|" #types "|" #grad "|" #api "|" #lower, &AttrsDict<opdefs::Attrs>},
#define OFL_UNARY_GRAD(name, Name, types, Attrs, lower, ...) \
  {#name "|" #types "|" "backward" "|" "none" "|" #lower, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/unary.def"
};
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
// clang-format on

void BindUnary(py::module_& m, TensorClass& cls) {
  py::module_ special = m.def_submodule("_special", "torch._C._special: the torch.special ops");
  // clang-format off
#define OFL_FLOAT_ONLY_Float true
#define OFL_FLOAT_ONLY_Numeric false
#define OFL_FLOAT_ONLY_IntBool false
#define OFL_BIND_gen(name, Name, Attrs, fl) \
  BindTableOp<opdefs::Attrs>(m, cls, #name, F::Name, nullptr, fl);
#define OFL_BIND_gen_ip(name, Name, Attrs, fl) \
  BindTableOp<opdefs::Attrs>(m, cls, #name, F::Name, F::Name##_, fl);
#define OFL_BIND_fn_only(name, Name, Attrs, fl)
#define OFL_BIND_custom(name, Name, Attrs, fl)
#define OFL_BIND_special(name, Name, Attrs, fl) \
  BindSpecialOp<opdefs::Attrs>(special, #name, F::Name, fl);
#define OFL_ATTRS(...)
#define OFL_UNARY(name, Name, types, Attrs, grad, api, ...) \
  OFL_BIND_##api(name, Name, Attrs, OFL_FLOAT_ONLY_##types)
#define OFL_UNARY_GRAD(...)
#include "oneflow_like/opdefs/unary.def"
#undef OFL_UNARY
#undef OFL_UNARY_GRAD
#undef OFL_ATTRS
  // clang-format on
  // The table itself, for the tests that check every op has a test row.
  DefTable(m, "_unary_table", kOpCols, kOpRows);
  BindTableOp<opdefs::NoAttrs>(m, cls, "negative", F::Neg, F::Neg_, false);
  BindTableOp<opdefs::NoAttrs>(
      m, cls, "logical_not",
      [](const Tensor& x, const opdefs::NoAttrs&) { return F::LogicalNot(x); },
      [](const Tensor& x, const opdefs::NoAttrs&) { return F::LogicalNot_(x); }, false);
  BindTableOp<opdefs::NoAttrs>(
      m, cls, "bitwise_not",
      [](const Tensor& x, const opdefs::NoAttrs&) { return F::BitwiseNot(x); }, nullptr, false);
  // polygamma(n, input): torch's argument order; n >= 0; integer tensors compute in float32.
  auto polygamma_attrs = [](const char* op, int64_t n) {
    if (n < 0)
      throw py::value_error(std::string("[") + op + "] n must be non-negative, got " +
                            std::to_string(n));
    opdefs::PolygammaAttrs a;
    a.n = n;
    return a;
  };
  auto polygamma = [polygamma_attrs](int64_t n, const Tensor& x) {
    opdefs::PolygammaAttrs a = polygamma_attrs("polygamma", n);
    Tensor in =
        IsFloating(x.dtype()) || IsComplex(x.dtype()) ? x : Unwrap(F::Cast(x, DefaultFloatDType()));
    return Unwrap(F::Polygamma(in, a));
  };
  m.def("polygamma", polygamma, py::arg("n"), py::arg("input"));
  special.def("polygamma", polygamma, py::arg("n"), py::arg("input"));
  cls.def(
      "polygamma", [polygamma](const Tensor& self, int64_t n) { return polygamma(n, self); },
      py::arg("n"));
  cls.def(
      "polygamma_",
      [polygamma_attrs](Tensor& self, int64_t n) -> Tensor& {
        Check(F::Polygamma_(self, polygamma_attrs("polygamma_", n)));
        return self;
      },
      py::arg("n"));
  // round(decimals=0) only; half to even like PyTorch.
  auto round = [](const Tensor& x, int64_t decimals) {
    if (decimals != 0) throw py::value_error("[round] only decimals=0 is supported");
    return Unwrap(F::Round(x));
  };
  m.def("round", round, py::arg("input"), py::arg("decimals") = 0);
  cls.def("round", round, py::arg("decimals") = 0);
  cls.def("round_", [](Tensor& x) {
    Check(F::Round_(x));
    return x;
  });

  cls.def("__neg__", [](const Tensor& x) { return Unwrap(F::Neg(x)); })
      .def("__abs__", [](const Tensor& x) { return Unwrap(F::Abs(x)); })
      .def("__invert__", [](const Tensor& x) { return Unwrap(F::BitwiseNot(x)); });

  // Activations with parameters (nn.functional spellings; `inplace` picks the _ variant).
  m.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate) {
        return Unwrap(F::Gelu(x, {ParseApproximate(approximate)}));
      },
      py::arg("input"), py::arg("approximate") = "none");
  cls.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate) {
        return Unwrap(F::Gelu(x, {ParseApproximate(approximate)}));
      },
      py::arg("approximate") = "none");
  m.def(
      "softplus",
      [](const Tensor& x, double beta, double threshold) {
        return Unwrap(F::Softplus(x, {beta, threshold}));
      },
      py::arg("input"), py::arg("beta") = opdefs::SoftplusAttrs{}.beta,
      py::arg("threshold") = opdefs::SoftplusAttrs{}.threshold);
  m.def(
      "leaky_relu",
      [](Tensor& x, double slope, bool inplace) {
        if (!inplace) return Unwrap(F::LeakyRelu(x, {slope}));
        Check(F::CopyInto(x, Unwrap(F::LeakyRelu(x, {slope}))));
        return x;
      },
      py::arg("input"), py::arg("negative_slope") = opdefs::LeakyReluAttrs{}.negative_slope,
      py::arg("inplace") = false);
  m.def(
      "elu",
      [](Tensor& x, double alpha, bool inplace) {
        if (!inplace) return Unwrap(F::Elu(x, {alpha}));
        Check(F::Elu_(x, {alpha}));
        return x;
      },
      py::arg("input"), py::arg("alpha") = opdefs::EluAttrs{}.alpha, py::arg("inplace") = false);
  m.def(
      "hardtanh",
      [](Tensor& x, double lo, double hi, bool inplace) {
        if (!inplace) return Unwrap(F::Hardtanh(x, lo, hi));
        Check(F::Hardtanh_(x, lo, hi));
        return x;
      },
      py::arg("input"), py::arg("min_val") = -1.0, py::arg("max_val") = 1.0,
      py::arg("inplace") = false);
  m.def(
      "relu6", [](const Tensor& x) { return Unwrap(F::Hardtanh(x, 0.0, 6.0)); }, py::arg("input"));
  m.def(
      "selu",
      [](const Tensor& x) {  // scale * elu(x, alpha)
        return Unwrap(F::MulScalar(Unwrap(F::Elu(x, {1.6732632423543772})), 1.0507009873554805));
      },
      py::arg("input"));

  // clamp / clip with scalar or tensor bounds.
  for (const char* name : {"clamp", "clip"}) {
    m.def(name, &ClampAny, py::arg("input"), py::arg("min") = py::none(),
          py::arg("max") = py::none());
    cls.def(name, &ClampAny, py::arg("min") = py::none(), py::arg("max") = py::none());
    cls.def((std::string(name) + "_").c_str(), &ClampInplace, py::arg("min") = py::none(),
            py::arg("max") = py::none());
  }
  m.def("clamp_", &ClampInplace, py::arg("input"), py::arg("min") = py::none(),
        py::arg("max") = py::none());
  m.def(
      "clamp_min", [](const Tensor& x, py::object lo) { return ClampAny(x, lo, py::none()); },
      py::arg("input"), py::arg("min"));
  m.def(
      "clamp_max", [](const Tensor& x, py::object hi) { return ClampAny(x, py::none(), hi); },
      py::arg("input"), py::arg("max"));
  cls.def(
         "clamp_min", [](const Tensor& x, py::object lo) { return ClampAny(x, lo, py::none()); },
         py::arg("min"))
      .def(
          "clamp_max", [](const Tensor& x, py::object hi) { return ClampAny(x, py::none(), hi); },
          py::arg("max"))
      .def(
          "clamp_min_",
          [](Tensor& x, py::object lo) -> Tensor& { return ClampInplace(x, lo, py::none()); },
          py::arg("min"))
      .def(
          "clamp_max_",
          [](Tensor& x, py::object hi) -> Tensor& { return ClampInplace(x, py::none(), hi); },
          py::arg("max"));
}

}  // namespace
OFL_PY_BINDING(BindUnary);
}  // namespace python
}  // namespace oneflow_like
