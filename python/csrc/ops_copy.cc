// Bindings of the copy family, generated from oneflow_like/opdefs/copy.def: one Tensor method or
// function per OFL_COPY_API line, with the signature of its sig column; plus flow._C._copy_table()
// for the op-table tests. Tensor.fill_ and zero_ are the creation family's (ops_creation.cc).
#include <optional>
#include <string>

#include "oneflow_like/opdefs/copy.h"
#include "oneflow_like/ops/copy.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

using ToFn = StatusOr<Tensor> (*)(const Tensor&, Device);
using CastFn = StatusOr<Tensor> (*)(const Tensor&, DType);

// torch's UserWarning when a cast or copy drops the imaginary part, attributed to the first
// caller outside the oneflow_like package (Python's default filter then shows it once per call
// site; torch 1.13 warns once per process).
void WarnComplexToReal(DType from, DType to) {
  if (!IsComplex(from) || IsComplex(to) || to == DType::kBool) return;  // bool: nonzero test
  static const std::string package =  // the oneflow_like package's directory, with a slash
      py::cast<std::string>(py::module_::import("os.path").attr("dirname")(
          py::module_::import("oneflow_like").attr("__file__"))) +
      "/";
  int level = 1;
  py::object f = py::module_::import("sys").attr("_getframe")(0);
  while (!f.is_none() &&
         py::cast<std::string>(f.attr("f_code").attr("co_filename")).rfind(package, 0) == 0) {
    f = f.attr("f_back");
    ++level;
  }
  if (PyErr_WarnEx(PyExc_UserWarning, "Casting complex values to real discards the imaginary part",
                   level) < 0)
    throw py::error_already_set();  // warnings turned into errors
}
Tensor CastWarn(CastFn f, const Tensor& x, DType t) {
  WarnComplexToReal(x.dtype(), t);
  return Unwrap(f(x, t));
}

// to(device), to(dtype), to(device, dtype), to(other_tensor), keyword forms too, with torch's
// non_blocking and copy (positional after them as well): copy=True returns a new tensor even
// when nothing changes; non_blocking is accepted (copies are asynchronous VM instructions
// anyway); memory_format is accepted when it is None or a format object (Python checks it).
Tensor ToAny(const Tensor& t, py::args args, py::kwargs kwargs) {
  Tensor r = t;
  int bools = 0;
  bool copy = false;
  auto apply = [&](py::handle h) {
    if (py::isinstance<py::bool_>(h)) {
      if (bools++ == 1) copy = py::cast<bool>(h);  // (..., non_blocking, copy)
      if (bools > 2) throw py::type_error("[to] too many positional bool arguments");
    } else if (py::isinstance<Tensor>(h)) {
      Tensor o = py::cast<Tensor>(h);
      r = CastWarn(F::Cast, Unwrap(F::To(r, o.device())), o.dtype());
    } else if (py::isinstance<DType>(h)) {
      r = CastWarn(F::Cast, r, py::cast<DType>(h));
    } else if (py::isinstance<py::str>(h) && DTypeFromName(py::cast<std::string>(h)).ok() &&
               !Device::Parse(py::cast<std::string>(h)).ok()) {
      r = CastWarn(F::Cast, r, ParseDType(h));
    } else if (!h.is_none()) {
      r = Unwrap(F::To(r, ParseDevice(h)));
    }
  };
  for (auto a : args) apply(a);
  for (auto item : kwargs) {
    const std::string key = py::cast<std::string>(item.first);
    if (key == "copy") {
      copy = py::cast<bool>(item.second);
    } else if (key != "device" && key != "dtype" && key != "non_blocking" &&
               key != "memory_format") {
      throw py::type_error("[to] got an unexpected keyword argument '" + key + "'");
    }
  }
  if (kwargs.contains("device")) apply(kwargs["device"]);
  if (kwargs.contains("dtype")) apply(kwargs["dtype"]);
  if (copy && r.same(t)) r = Unwrap(F::Clone(t));
  return r;
}

// One binder per sig column; `dtype` is the dtype column (as_dtype only).
struct Binder {
  py::module_& m;
  TensorClass& cls;
  // Tensor.name()
  void self(const char* name, StatusOr<Tensor> (*f)(const Tensor&), std::optional<DType>) {
    cls.def(name, [f](const Tensor& x) { return Unwrap(f(x)); });
  }
  // Tensor.name(): a cast to the dtype column's dtype.
  void as_dtype(const char* name, CastFn f, std::optional<DType> dtype) {
    cls.def(name, [f, dt = *dtype](const Tensor& x) { return CastWarn(f, x, dt); });
  }
  // Tensor.name(other): a cast to other's dtype.
  void type_as(const char* name, CastFn f, std::optional<DType>) {
    cls.def(name, [f](const Tensor& x, const Tensor& o) { return CastWarn(f, x, o.dtype()); });
  }
  // Tensor.to(*args, **kwargs) (ToAny calls F::To and F::Cast).
  void to(const char* name, ToFn, std::optional<DType>) { cls.def(name, &ToAny); }
  // Tensor.name(): to the CPU.
  void cpu(const char* name, ToFn f, std::optional<DType>) {
    cls.def(name, [f](const Tensor& x) { return Unwrap(f(x, Device::CPU())); });
  }
  // Tensor.name(device=None): to `device`, or cuda:0.
  void cuda(const char* name, ToFn f, std::optional<DType>) {
    cls.def(
        name,
        [f](const Tensor& x, py::object d) {
          return Unwrap(f(x, d.is_none() ? Device(DeviceType::kCUDA, 0) : ParseDevice(d)));
        },
        py::arg("device") = py::none());
  }
  // Tensor.name(src), in place: src a tensor, array or number (in x's dtype).
  void copy_(const char* name, Status (*f)(const Tensor&, const Tensor&), std::optional<DType>) {
    cls.def(name, [f](Tensor& x, py::object src) {
      Tensor s = ToTensor(src, &x);
      WarnComplexToReal(s.dtype(), x.dtype());
      Check(f(x, s));
      return x;
    });
  }
  // flow._C.name(x, dtype)
  void cast(const char* name, CastFn f, std::optional<DType>) {
    m.def(name,
          [f](const Tensor& x, py::object dtype) { return CastWarn(f, x, ParseDType(dtype)); });
  }
};

// One row per table entry, for flow._C._copy_table().
constexpr char kOpCols[] = "name|out|grad|save|layout|devices";
constexpr char kApiCols[] = "name|sig|entry|dtype";
// The dtype column.
#define OFL_COPY_DTYPE_none std::optional<DType>()
#define OFL_COPY_DTYPE_float32 std::optional<DType>(DType::kF32)
#define OFL_COPY_DTYPE_float64 std::optional<DType>(DType::kF64)
#define OFL_COPY_DTYPE_float16 std::optional<DType>(DType::kF16)
#define OFL_COPY_DTYPE_bfloat16 std::optional<DType>(DType::kBF16)
#define OFL_COPY_DTYPE_int64 std::optional<DType>(DType::kI64)
#define OFL_COPY_DTYPE_int32 std::optional<DType>(DType::kI32)
#define OFL_COPY_DTYPE_bool std::optional<DType>(DType::kBool)
// clang-format off
#define OFL_ATTRS(...)
#define OFL_COPY_API(...)
#define OFL_COPY(name, Name, Attrs, out, grad, save, layout, devices) \
  {#name "|" #out "|" #grad "|" #save "|" #layout "|" #devices, &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/copy.def"
};
#undef OFL_COPY
#undef OFL_COPY_API
#define OFL_COPY(...)
#define OFL_COPY_API(pyname, sig, entry, dtype) {#pyname "|" #sig "|" #entry "|" #dtype},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/copy.def"
};
#undef OFL_COPY_API
// clang-format on

void BindCopy(py::module_& m, TensorClass& cls) {
  Binder b{m, cls};
  // clang-format off
#define OFL_COPY_API(pyname, sig, entry, dtype) b.sig(#pyname, F::entry, OFL_COPY_DTYPE_##dtype);
#include "oneflow_like/opdefs/copy.def"
#undef OFL_COPY_API
#undef OFL_COPY
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_copy_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindCopy);
}  // namespace python
}  // namespace oneflow_like
