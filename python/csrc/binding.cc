#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"

namespace oneflow_like {
namespace python {

// ---- op-table rows (op_tables_py.h) -----
// --------------------------------------------------------------
namespace table_detail {
void PutDefault(py::dict* d, const char* name, bool v) {
  (*d)[name] = v;
}
void PutDefault(py::dict* d, const char* name, double v) {
  (*d)[name] = v;
}
void PutDefault(py::dict* d, const char* name, int64_t v) {
  (*d)[name] = v;
}
void PutDefault(py::dict* d, const char* name, const std::vector<int64_t>& v) {
  (*d)[name] = v;
}
void PutDefault(py::dict* d, const char* name, const std::string& v) {
  (*d)[name] = v;
}
void PutDefault(py::dict* d, const char* name, DType v) {
  (*d)[name] = v;
}
}  // namespace table_detail

namespace {
py::list TableRows(const char* table, const char* cols, const TableRow* rows, size_t n_rows) {
  // The columns once: their keys as Python strings, and which hold integers ('#').
  std::vector<py::str> keys;
  std::vector<bool> is_int;
  for (absl::string_view c : absl::StrSplit(cols, '|')) {
    is_int.push_back(absl::ConsumePrefix(&c, "#"));
    keys.emplace_back(c.data(), c.size());
  }
  py::list out;
  for (size_t r = 0; r < n_rows; ++r) {
    const std::vector<absl::string_view> cells = absl::StrSplit(rows[r].cells, '|');
    if (cells.size() != keys.size())
      throw std::runtime_error(
          absl::StrFormat("%s: row \"%s\" has %d cells for the %d columns \"%s\"", table,
                          rows[r].cells, cells.size(), keys.size(), cols));
    py::dict d;
    for (size_t c = 0; c < keys.size(); ++c) {
      int64_t v = 0;
      if (!is_int[c])
        d[keys[c]] = py::str(cells[c].data(), cells[c].size());
      else if (absl::SimpleAtoi(cells[c], &v))
        d[keys[c]] = py::int_(v);
      else
        throw std::runtime_error(
            absl::StrFormat("%s: row \"%s\": cell %d is not an integer", table, rows[r].cells, c));
    }
    if (rows[r].attrs != nullptr) d["attrs"] = rows[r].attrs();
    out.append(std::move(d));
  }
  return out;
}
}  // namespace

void DefTableSpec(py::module_& m, const char* name, const TableSpec& spec) {
  m.def(name, [name, spec]() -> py::object {
    py::list ops = TableRows(name, spec.op_cols, spec.ops, spec.n_ops);
    if (spec.api_cols == nullptr) return std::move(ops);
    py::dict d;
    d["ops"] = std::move(ops);
    d["apis"] = TableRows(name, spec.api_cols, spec.apis, spec.n_apis);
    return std::move(d);
  });
}

void RaiseStatus(const Status& s) {
  std::string msg(s.message());
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument: throw py::value_error(msg);
    case absl::StatusCode::kOutOfRange: throw py::index_error(msg);
    case absl::StatusCode::kFailedPrecondition: throw py::type_error(msg);
    case absl::StatusCode::kResourceExhausted: {
      // oneflow_like.OutOfMemoryError (RuntimeError and MemoryError, as torch's); MemoryError
      // while the package is not importable.
      py::object cls = py::reinterpret_borrow<py::object>(PyExc_MemoryError);
      py::module_ sys = py::module_::import("sys");
      py::object pkg = sys.attr("modules").attr("get")("oneflow_like");
      if (!pkg.is_none() && py::hasattr(pkg, "OutOfMemoryError"))
        cls = pkg.attr("OutOfMemoryError");
      PyErr_SetString(cls.ptr(), msg.c_str());
      throw py::error_already_set();
    }
    default: throw std::runtime_error(msg);
  }
}

bool IsScalar(py::handle h) {
  return PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()) ||
         (py::isinstance<py::array>(h) &&
          py::array(py::reinterpret_borrow<py::object>(h)).ndim() == 0 && false);
}
bool IsFloatScalar(py::handle h) {
  return PyFloat_Check(h.ptr());
}
double ScalarValue(py::handle h) {
  return py::cast<double>(h);
}
bool ComplexScalarValue(py::handle h, double* re, double* im) {
  if (!PyComplex_Check(h.ptr())) return false;
  *re = PyComplex_RealAsDouble(h.ptr());
  *im = PyComplex_ImagAsDouble(h.ptr());
  return true;
}

DType ParseDType(py::handle h) {
  if (py::isinstance<DType>(h)) return py::cast<DType>(h);
  if (py::isinstance<py::str>(h)) return Unwrap(DTypeFromName(py::cast<std::string>(h)));
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::kF32;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::kI64;
  if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::kBool;
  try {
    py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(h));
    std::string name = py::str(d.attr("name"));
    return Unwrap(DTypeFromName(name));
  } catch (py::error_already_set&) {}
  throw py::type_error("[dtype] cannot interpret " + std::string(py::repr(h)) + " as a dtype");
}

Device ParseDevice(py::handle h) {
  if (py::isinstance<Device>(h)) return py::cast<Device>(h);
  if (py::isinstance<py::str>(h)) return Unwrap(Device::Parse(py::cast<std::string>(h)));
  throw py::type_error("[device] expected a device or a string like 'cpu' / 'cuda:0', got " +
                       std::string(py::repr(h)));
}

std::vector<int64_t> ParseIntList(py::handle h) {
  if (PyLong_Check(h.ptr())) return {py::cast<int64_t>(h)};
  std::vector<int64_t> r;
  for (auto item : py::reinterpret_borrow<py::iterable>(h)) r.push_back(py::cast<int64_t>(item));
  return r;
}

std::vector<int64_t> ParseShape(py::args args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return ParseIntList(args[0]);
  std::vector<int64_t> r;
  for (auto a : args) r.push_back(py::cast<int64_t>(a));
  return r;
}

namespace {
PyTypeObject* g_tensor_type = nullptr;
}

void SetTensorType(py::handle type) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(type.ptr());
}

const Tensor* AsTensor(py::handle h) {
  PyTypeObject* t = Py_TYPE(h.ptr());
  if (g_tensor_type == nullptr || (t != g_tensor_type && !PyType_IsSubtype(t, g_tensor_type)))
    return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(h.ptr());
  return static_cast<const Tensor*>(inst->get_value_and_holder().value_ptr());
}

std::vector<Binder>& Binders() {
  static std::vector<Binder>* b = new std::vector<Binder>();
  return *b;
}
void RegisterBinder(Binder b) {
  Binders().push_back(b);
}

}  // namespace python
}  // namespace oneflow_like
