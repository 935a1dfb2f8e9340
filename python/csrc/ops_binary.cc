// Bindings of the binary elementwise family: functions and methods generated from
// oneflow_like/opdefs/binary.def (api other than custom), the hand-written ones (scalar fast
// paths, alpha, comparisons' NotImplemented) and the arithmetic dunders.
#include "oneflow_like/opdefs/attrs.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/unary.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// A float Python scalar lifts an integer tensor to the default float dtype first (PyTorch's
// rule).
Tensor LiftForScalar(const Tensor& a, py::handle s) {
  if (IsFloatScalar(s) && !IsFloating(a.dtype()) && !IsComplex(a.dtype()))
    return Unwrap(F::Cast(a, DefaultFloatDType()));
  return a;
}

// Tensors, Python numbers, NumPy arrays/scalars and (nested) lists combine with a tensor;
// anything else is a TypeError naming the op.
void CheckOperand(const char* op, py::handle b) {
  if (AsTensor(b) != nullptr || IsScalar(b) || PyComplex_Check(b.ptr()) ||
      py::isinstance<py::array>(b) || py::isinstance<py::list>(b) || py::isinstance<py::tuple>(b) ||
      py::isinstance(b, py::module_::import("numpy").attr("generic")))
    return;
  throw py::type_error(std::string("[") + op + "] unsupported operand type '" +
                       std::string(py::str(b.get_type().attr("__name__"))) + "'");
}

// A float Python scalar can't be written in place into an integer/bool tensor.
void CheckInplaceScalar(const char* op, const Tensor& a, py::handle b) {
  if (!IsFloating(a.dtype()) && !IsComplex(a.dtype()) && IsFloatScalar(b))
    throw py::type_error(std::string("[") + op +
                         "] result type float can't be cast to the desired output type " +
                         DTypeLongName(a.dtype()));
}

Tensor AddAny(const Tensor& a, py::handle b, double alpha) {
  CheckOperand("add", b);
  if (IsScalar(b)) return Unwrap(F::AddScalar(LiftForScalar(a, b), alpha * ScalarValue(b)));
  return Unwrap(F::Add(a, ToTensor(b, &a), alpha));
}
Tensor SubAny(const Tensor& a, py::handle b, double alpha) {
  CheckOperand("sub", b);
  if (IsScalar(b)) return Unwrap(F::AddScalar(LiftForScalar(a, b), -alpha * ScalarValue(b)));
  return Unwrap(F::Sub(a, ToTensor(b, &a), alpha));
}
Tensor MulAny(const Tensor& a, py::handle b) {
  CheckOperand("mul", b);
  if (IsScalar(b)) return Unwrap(F::MulScalar(LiftForScalar(a, b), ScalarValue(b)));
  return Unwrap(F::Mul(a, ToTensor(b, &a)));
}
Tensor DivAny(const Tensor& a, py::handle b) {
  CheckOperand("div", b);
  if (IsScalar(b)) {
    Tensor x =
        IsFloating(a.dtype()) || IsComplex(a.dtype()) ? a : Unwrap(F::Cast(a, DefaultFloatDType()));
    return Unwrap(F::MulScalar(x, 1.0 / ScalarValue(b)));
  }
  return Unwrap(F::Div(a, ToTensor(b, &a)));
}

using BinaryFn = StatusOr<Tensor> (*)(const Tensor&, const Tensor&);

// A Python number as a 0-dim tensor of the dtype it would combine with `like` in.
Tensor Operand(py::handle h, const Tensor& like) {
  CheckOperand("elementwise", h);
  return ToTensor(h, &like);
}

// pow with a tensor or scalar on either side; x ** 2 never materialises the 2.
Tensor PowAny(py::handle base, py::handle exponent) {
  if (py::isinstance<Tensor>(base)) {
    Tensor a = py::cast<Tensor>(base);
    if (IsScalar(exponent)) {
      Tensor x = LiftForScalar(a, exponent);
      return Unwrap(F::PowScalar(x, ScalarValue(exponent)));
    }
    return Unwrap(F::Pow(a, Operand(exponent, a)));
  }
  Tensor e = py::cast<Tensor>(exponent);
  if (IsScalar(base)) return Unwrap(F::RPowScalar(LiftForScalar(e, base), ScalarValue(base)));
  return Unwrap(F::Pow(Operand(base, e), e));
}

// Comparisons: a Python number compares without materialising; anything that is not a
// tensor, number, array or list gives NotImplemented (so `t == None` is False, as in Python).
py::object CompareAny(F::CompareOp op, const Tensor& a, py::handle b) {
  if (IsScalar(b)) return py::cast(Unwrap(F::CompareScalar(op, a, ScalarValue(b))));
  if (py::isinstance<Tensor>(b) || py::isinstance<py::array>(b) || py::isinstance<py::list>(b) ||
      py::isinstance<py::tuple>(b))
    return py::cast(Unwrap(F::Compare(op, a, Operand(b, a))));
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

// Binary ops without a scalar fast path: the scalar becomes a 0-dim tensor.
template <BinaryFn Fn>
Tensor Generic(const Tensor& a, py::handle b) {
  return Unwrap(Fn(a, Operand(b, a)));
}
template <BinaryFn Fn>
Tensor GenericReflected(const Tensor& a, py::handle b) {
  return Unwrap(Fn(Operand(b, a), a));
}

// x & y, x | y, x ^ y: logical on bool tensors (same result), bitwise on integers.
template <BinaryFn Fn>
py::object BitwiseAny(const Tensor& a, py::handle b) {
  if (!IsScalar(b) && !py::isinstance<Tensor>(b))
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(Unwrap(Fn(a, Operand(b, a))));
}

// True division in place: only into floating point tensors.
Tensor DivInplace(Tensor& a, py::object b) {
  if (!IsScalar(b)) {
    Check(F::Div_(a, ToTensor(b, &a)));
  } else if (!IsFloating(a.dtype()) && !IsComplex(a.dtype())) {
    throw py::type_error("[div_] true division can't be written in place into " + a.meta_string());
  } else {
    Check(F::MulScalar_(a, 1.0 / ScalarValue(b)));
  }
  return a;
}

void BindMore(py::module_& m, TensorClass& cls) {
  m.def(
      "pow", [](py::object a, py::object b) { return PowAny(a, b); }, py::arg("input"),
      py::arg("exponent"));
  cls.def(
         "pow", [](const Tensor& a, py::object b) { return PowAny(py::cast(a), b); },
         py::arg("exponent"))
      .def(
          "__pow__", [](const Tensor& a, py::object b) { return PowAny(py::cast(a), b); },
          py::is_operator())
      .def(
          "__rpow__", [](const Tensor& a, py::object b) { return PowAny(b, py::cast(a)); },
          py::is_operator())
      .def(
          "pow_",
          [](Tensor& a, py::object b) {
            if (IsScalar(b))
              Check(F::PowScalar_(a, ScalarValue(b)));
            else
              Check(F::CopyInto(a, Unwrap(F::Pow(a, Operand(b, a)))));
            return a;
          },
          py::arg("exponent"))
      .def(
          "__ipow__",
          [](Tensor& a, py::object b) {
            if (IsScalar(b))
              Check(F::PowScalar_(a, ScalarValue(b)));
            else
              Check(F::CopyInto(a, Unwrap(F::Pow(a, Operand(b, a)))));
            return a;
          },
          py::is_operator());

  struct Named {
    const char* name;
    BinaryFn fn;
  };
  // The table's entries with a generated functional entry: flow.name(input, other) and
  // Tensor.name(other), the other operand a tensor, number, array or list.
  // clang-format off
#define OFL_BIND_custom(name, Name)
#define OFL_BIND_gen(name, Name) {#name, F::Name},
#define OFL_BIND_promote OFL_BIND_gen
#define OFL_BIND_division OFL_BIND_gen
#define OFL_BIND_true_div OFL_BIND_gen
#define OFL_BIND_special(name, Name)
#define OFL_BIND_logical OFL_BIND_gen
#define OFL_BIND_bitwise OFL_BIND_gen
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, ...) OFL_BIND_##api(name, Name)
#define OFL_BINARY_SCALAR(...)
  const Named plain[] = {
#include "oneflow_like/opdefs/binary.def"
      {"fmax", F::Maximum},
      {"fmin", F::Minimum},
  };
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
  // clang-format on
  for (const Named& n : plain) {
    auto f = [fn = n.fn, name = n.name](const Tensor& a, py::object b) {
      CheckOperand(name, b);
      return Unwrap(fn(a, ToTensor(b, &a)));
    };
    m.def(n.name, f, py::arg("input"), py::arg("other"));
    cls.def(n.name, f, py::arg("other"));
  }
  // api `special`: flow._C._special.name(input, other) only, as torch._C._special (no Tensor
  // method, no flow.name).
  py::module_ special = m.def_submodule("_special", "torch._C._special: the torch.special ops");
  // clang-format off
#define OFL_BIND_SPECIAL_special(name, Name) {#name, F::Name},
#define OFL_BIND_SPECIAL_OTHER(name, Name)
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, ...) \
  OFL_BIND_SPECIAL_##api(name, Name)
#define OFL_BINARY_SCALAR(...)
#define OFL_BIND_SPECIAL_custom OFL_BIND_SPECIAL_OTHER
#define OFL_BIND_SPECIAL_promote OFL_BIND_SPECIAL_OTHER
#define OFL_BIND_SPECIAL_division OFL_BIND_SPECIAL_OTHER
#define OFL_BIND_SPECIAL_true_div OFL_BIND_SPECIAL_OTHER
#define OFL_BIND_SPECIAL_logical OFL_BIND_SPECIAL_OTHER
#define OFL_BIND_SPECIAL_bitwise OFL_BIND_SPECIAL_OTHER
  const Named specials[] = {
#include "oneflow_like/opdefs/binary.def"
  };
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
  // clang-format on
  for (const Named& n : specials) {
    special.def(
        n.name,
        [fn = n.fn, name = n.name](const Tensor& a, const Tensor& b) { return Unwrap(fn(a, b)); },
        py::arg("input"), py::arg("other"));
  }
  cls.def("__floordiv__", &Generic<F::FloorDivide>, py::is_operator())
      .def("__rfloordiv__", &GenericReflected<F::FloorDivide>, py::is_operator())
      .def("__mod__", &Generic<F::Remainder>, py::is_operator())
      .def("__rmod__", &GenericReflected<F::Remainder>, py::is_operator())
      .def("__and__", &BitwiseAny<F::BitwiseAnd>, py::is_operator())
      .def("__rand__", &BitwiseAny<F::BitwiseAnd>, py::is_operator())
      .def("__or__", &BitwiseAny<F::BitwiseOr>, py::is_operator())
      .def("__ror__", &BitwiseAny<F::BitwiseOr>, py::is_operator())
      .def("__xor__", &BitwiseAny<F::BitwiseXor>, py::is_operator())
      .def("__rxor__", &BitwiseAny<F::BitwiseXor>, py::is_operator());

  struct Cmp {
    const char* name;
    const char* alias;
    const char* dunder;
    F::CompareOp op;
  };
  const Cmp cmps[] = {
      {"eq", nullptr, "__eq__", F::CompareOp::kEq},
      {"ne", "not_equal", "__ne__", F::CompareOp::kNe},
      {"lt", "less", "__lt__", F::CompareOp::kLt},
      {"le", "less_equal", "__le__", F::CompareOp::kLe},
      {"gt", "greater", "__gt__", F::CompareOp::kGt},
      {"ge", "greater_equal", "__ge__", F::CompareOp::kGe},
  };
  for (const Cmp& c : cmps) {
    F::CompareOp op = c.op;
    auto fn = [op](const Tensor& a, py::object b) { return CompareAny(op, a, b); };
    m.def(c.name, fn, py::arg("input"), py::arg("other"));
    cls.def(c.name, fn, py::arg("other"));
    if (c.alias) {
      m.def(c.alias, fn, py::arg("input"), py::arg("other"));
      cls.def(c.alias, fn, py::arg("other"));
    }
    cls.def(c.dunder, fn, py::is_operator());
  }
  m.def(
      "equal",
      [](const Tensor& a, const Tensor& b) {  // same shape and values
        if (a.shape() != b.shape()) return false;
        Tensor ne = Unwrap(F::Compare(F::CompareOp::kNe, a, b));
        py::array r = py::module_::import("numpy").attr("asarray")(py::cast(ne));
        return !py::module_::import("numpy").attr("any")(r).cast<bool>();
      },
      py::arg("input"), py::arg("other"));
}

// One row per table entry, for flow._C._binary_table().
constexpr char kOpCols[] = "name|types|out|grad|api|lower|base";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_BINARY(name, Name, types, out, Attrs, grad, api, lower, ...) \
  {#name "|" #types "|" #out "|" #grad "|" #api "|" #lower "|" "", &AttrsDict<opdefs::Attrs>},
#define OFL_BINARY_SCALAR(name, Name, types, out, Base, order, grad, lower) \
  {#name "|" #types "|" #out "|" #grad "|" "scalar_" #order "|" #lower "|" #Base, &AttrsDict<opdefs::ScalarAttrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/binary.def"
};
#undef OFL_BINARY
#undef OFL_BINARY_SCALAR
#undef OFL_ATTRS
// clang-format on

void BindBinary(py::module_& m, TensorClass& cls) {
  // The table itself, for the tests that check every op has a test row.
  DefTable(m, "_binary_table", kOpCols, kOpRows);
  m.def("add", &AddAny, py::arg("input"), py::arg("other"), py::arg("alpha") = 1.0);
  m.def("sub", &SubAny, py::arg("input"), py::arg("other"), py::arg("alpha") = 1.0);
  m.def("mul", &MulAny, py::arg("input"), py::arg("other"));
  m.def("div", &DivAny, py::arg("input"), py::arg("other"));
  cls.def("add", &AddAny, py::arg("other"), py::arg("alpha") = 1.0)
      .def("sub", &SubAny, py::arg("other"), py::arg("alpha") = 1.0)
      .def("mul", &MulAny, py::arg("other"))
      .def("div", &DivAny, py::arg("other"))
      .def(
          "__add__",
          [](py::handle self, py::handle b) {
            const Tensor& a = *AsTensor(self);
            return AddAny(a, b, 1.0);
          },
          py::is_operator())
      .def(
          "__radd__",
          [](py::handle self, py::handle b) {
            const Tensor& a = *AsTensor(self);
            return AddAny(a, b, 1.0);
          },
          py::is_operator())
      .def(
          "__sub__",
          [](py::handle self, py::handle b) {
            const Tensor& a = *AsTensor(self);
            return SubAny(a, b, 1.0);
          },
          py::is_operator())
      .def(
          "__rsub__",
          [](const Tensor& a, py::object b) {
            if (IsScalar(b)) return Unwrap(F::RSubScalar(LiftForScalar(a, b), ScalarValue(b)));
            return Unwrap(F::Sub(ToTensor(b, &a), a));
          },
          py::is_operator())
      .def(
          "__mul__",
          [](py::handle self, py::handle b) {
            const Tensor& a = *AsTensor(self);
            return MulAny(a, b);
          },
          py::is_operator())
      .def(
          "__rmul__",
          [](py::handle self, py::handle b) {
            const Tensor& a = *AsTensor(self);
            return MulAny(a, b);
          },
          py::is_operator())
      .def(
          "__truediv__",
          [](py::handle self, py::handle b) {
            const Tensor& a = *AsTensor(self);
            return DivAny(a, b);
          },
          py::is_operator())
      .def(
          "__rtruediv__",
          [](const Tensor& a, py::object b) {
            if (IsScalar(b)) return Unwrap(F::RDivScalar(a, ScalarValue(b)));
            return Unwrap(F::Div(ToTensor(b, &a), a));
          },
          py::is_operator())
      .def(
          "add_",
          [](Tensor& a, py::object b, double alpha) {
            CheckOperand("add_", b);
            if (IsScalar(b)) {
              CheckInplaceScalar("add_", a, b);
              Check(F::AddScalar_(a, alpha * ScalarValue(b)));
            } else
              Check(F::Add_(a, ToTensor(b, &a), alpha));
            return a;
          },
          py::arg("other"), py::arg("alpha") = 1.0)
      .def(
          "sub_",
          [](Tensor& a, py::object b, double alpha) {
            CheckOperand("sub_", b);
            if (IsScalar(b)) {
              CheckInplaceScalar("sub_", a, b);
              Check(F::AddScalar_(a, -alpha * ScalarValue(b)));
            } else
              Check(F::Add_(a, ToTensor(b, &a), -alpha));
            return a;
          },
          py::arg("other"), py::arg("alpha") = 1.0)
      .def(
          "mul_",
          [](Tensor& a, py::object b) {
            CheckOperand("mul_", b);
            if (IsScalar(b)) {
              CheckInplaceScalar("mul_", a, b);
              Check(F::MulScalar_(a, ScalarValue(b)));
            } else
              Check(F::Mul_(a, ToTensor(b, &a)));
            return a;
          },
          py::arg("other"))
      .def("div_", &DivInplace, py::arg("other"))
      .def(
          "__iadd__",
          [](Tensor& a, py::object b) {
            CheckOperand("add_", b);
            if (IsScalar(b)) {
              CheckInplaceScalar("add_", a, b);
              Check(F::AddScalar_(a, ScalarValue(b)));
            } else
              Check(F::Add_(a, ToTensor(b, &a), 1.0));
            return a;
          },
          py::is_operator())
      .def(
          "__isub__",
          [](Tensor& a, py::object b) {
            CheckOperand("sub_", b);
            if (IsScalar(b)) {
              CheckInplaceScalar("sub_", a, b);
              Check(F::AddScalar_(a, -ScalarValue(b)));
            } else
              Check(F::Add_(a, ToTensor(b, &a), -1.0));
            return a;
          },
          py::is_operator())
      .def(
          "__imul__",
          [](Tensor& a, py::object b) {
            CheckOperand("mul_", b);
            if (IsScalar(b)) {
              CheckInplaceScalar("mul_", a, b);
              Check(F::MulScalar_(a, ScalarValue(b)));
            } else
              Check(F::Mul_(a, ToTensor(b, &a)));
            return a;
          },
          py::is_operator())
      .def("__itruediv__", &DivInplace, py::is_operator());
  BindMore(m, cls);
}

}  // namespace
OFL_PY_BINDING(BindBinary);
}  // namespace python
}  // namespace oneflow_like
