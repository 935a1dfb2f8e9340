// Shared pieces of the `_C` extension: the one place Status becomes a Python exception, and
// a registry so each op family binds its functions from its own file (ops_<family>.cc):
//   static void BindUnary(py::module_& m, TensorClass& cls) { m.def("relu", ...); }
//   OFL_PY_BINDING(BindUnary);
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "oneflow_like/framework/tensor.h"

namespace oneflow_like {
namespace python {

namespace py = pybind11;
using TensorClass = py::class_<Tensor>;

// Raises the Python exception for a non-OK status: InvalidArgument -> ValueError,
// OutOfRange -> IndexError, FailedPrecondition -> TypeError, ResourceExhausted -> MemoryError,
// anything else -> RuntimeError.
[[noreturn]] void RaiseStatus(const Status& s);
inline void Check(const Status& s) {
  if (!s.ok()) RaiseStatus(s);
}
template <typename T>
T Unwrap(StatusOr<T>&& s) {
  if (!s.ok()) RaiseStatus(s.status());
  return std::move(s).value();
}

// Python scalar or Tensor argument helpers.
bool IsScalar(py::handle h);
double ScalarValue(py::handle h);
// A Python complex (or a complex NumPy scalar): its parts, true; anything else: false.
bool ComplexScalarValue(py::handle h, double* re, double* im);
bool IsFloatScalar(py::handle h);
DType ParseDType(py::handle h);    // flow.float32, "float32", numpy dtype, python type
Device ParseDevice(py::handle h);  // "cpu", "cuda:0", flow.device
std::vector<int64_t> ParseShape(py::args args);   // f(2, 3) or f((2, 3)) or f([2, 3])
std::vector<int64_t> ParseIntList(py::handle h);  // int or sequence of ints
// The C++ Tensor inside a Python Tensor (or subclass such as nn.Parameter), or null: a type
// check against the cached class object instead of pybind11's registry lookups (hot path).
const Tensor* AsTensor(py::handle h);
void SetTensorType(py::handle type);
// A tensor from a Tensor, NumPy array, Python scalar or nested list (for mixed arguments).
Tensor ToTensor(py::handle h, const Tensor* like = nullptr);

using Binder = void (*)(py::module_& m, TensorClass& cls);
void RegisterBinder(Binder b);
std::vector<Binder>& Binders();
struct BinderRegistrar {
  explicit BinderRegistrar(Binder b) { RegisterBinder(b); }
};
#define OFL_PY_BINDING(fn) \
  static ::oneflow_like::python::BinderRegistrar OFL_CONCAT(_ofl_py_bind_, __LINE__)(fn)

}  // namespace python
}  // namespace oneflow_like
