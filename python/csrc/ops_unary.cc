// Bindings of the unary family: module functions (PyTorch names and signatures), Tensor methods,
// in-place methods and the __neg__/__abs__/__invert__ dunders.
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using UnaryFn = StatusOr<Tensor> (*)(const Tensor&);
using InplaceFn = Status (*)(const Tensor&);

struct Simple {
  const char* name;
  UnaryFn fn;
  InplaceFn inplace;  // null: no name_ variant
};

// Plain x -> y ops, bound as flow.name(input), Tensor.name() and (where PyTorch has it) name_().
const Simple kSimple[] = {
    {"neg", F::Neg, F::Neg_},
    {"negative", F::Neg, F::Neg_},
    {"abs", F::Abs, F::Abs_},
    {"square", F::Square, F::Square_},
    {"sign", F::Sign, F::Sign_},
    {"floor", F::Floor, F::Floor_},
    {"ceil", F::Ceil, F::Ceil_},
    {"relu", F::Relu, F::Relu_},
    {"exp", F::Exp, F::Exp_},
    {"log", F::Log, F::Log_},
    {"log1p", F::Log1p, nullptr},
    {"sqrt", F::Sqrt, F::Sqrt_},
    {"rsqrt", F::Rsqrt, F::Rsqrt_},
    {"sin", F::Sin, F::Sin_},
    {"cos", F::Cos, F::Cos_},
    {"tanh", F::Tanh, F::Tanh_},
    {"sigmoid", F::Sigmoid, F::Sigmoid_},
    {"silu", F::Silu, nullptr},
    {"erf", F::Erf, nullptr},
    {"reciprocal", F::Reciprocal, F::Reciprocal_},
    {"logical_not", F::LogicalNot, F::LogicalNot_},
    {"bitwise_not", F::BitwiseNot, nullptr},
};

std::optional<double> OptScalar(const py::object& o, const char* what) {
  if (o.is_none()) return std::nullopt;
  if (!IsScalar(o))
    throw py::type_error(std::string("[clamp] ") + what + " must be a number, a tensor or None");
  return ScalarValue(o);
}

// clamp with tensor bounds composes maximum/minimum (broadcasting, differentiable in both).
Tensor ClampAny(const Tensor& x, py::object lo, py::object hi) {
  bool tensor_bound = py::isinstance<Tensor>(lo) || py::isinstance<Tensor>(hi);
  if (!tensor_bound) return Unwrap(F::Clamp(x, OptScalar(lo, "min"), OptScalar(hi, "max")));
  Tensor r = x;
  if (!lo.is_none()) r = Unwrap(F::Maximum(r, ToTensor(lo, &x)));
  if (!hi.is_none()) r = Unwrap(F::Minimum(r, ToTensor(hi, &x)));
  return r;
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

void BindUnary(py::module_& m, TensorClass& cls) {
  for (const Simple& s : kSimple) {
    UnaryFn fn = s.fn;
    m.def(
        s.name, [fn](const Tensor& x) { return Unwrap(fn(x)); }, py::arg("input"));
    cls.def(s.name, [fn](const Tensor& x) { return Unwrap(fn(x)); });
    if (s.inplace) {
      InplaceFn ip = s.inplace;
      std::string name = std::string(s.name) + "_";
      m.def(
          name.c_str(),
          [ip](Tensor& x) {
            Check(ip(x));
            return x;
          },
          py::arg("input"));
      cls.def(name.c_str(), [ip](Tensor& x) {
        Check(ip(x));
        return x;
      });
    }
  }
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
        return Unwrap(F::Gelu(x, ParseApproximate(approximate)));
      },
      py::arg("input"), py::arg("approximate") = "none");
  cls.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate) {
        return Unwrap(F::Gelu(x, ParseApproximate(approximate)));
      },
      py::arg("approximate") = "none");
  m.def(
      "softplus",
      [](const Tensor& x, double beta, double threshold) {
        return Unwrap(F::Softplus(x, beta, threshold));
      },
      py::arg("input"), py::arg("beta") = 1.0, py::arg("threshold") = 20.0);
  m.def(
      "leaky_relu",
      [](Tensor& x, double slope, bool inplace) {
        if (!inplace) return Unwrap(F::LeakyRelu(x, slope));
        Check(F::CopyInto(x, Unwrap(F::LeakyRelu(x, slope))));
        return x;
      },
      py::arg("input"), py::arg("negative_slope") = 0.01, py::arg("inplace") = false);
  m.def(
      "elu",
      [](Tensor& x, double alpha, bool inplace) {
        if (!inplace) return Unwrap(F::Elu(x, alpha));
        Check(F::Elu_(x, alpha));
        return x;
      },
      py::arg("input"), py::arg("alpha") = 1.0, py::arg("inplace") = false);
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
        return Unwrap(F::MulScalar(Unwrap(F::Elu(x, 1.6732632423543772)), 1.0507009873554805));
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
