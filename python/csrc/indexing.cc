// Tensor.__getitem__ / __setitem__ with NumPy semantics. Basic indices (ints, slices with
// steps, None, Ellipsis) become view ops (select / slice / unsqueeze) sharing storage; integer
// tensors, lists, arrays and bool masks become one advanced-index op (index / index_put_) over
// the basic view. With any advanced index present, ints count as 0-d advanced indices, so the
// result-dim placement follows NumPy. setitem writes through CopyInto / fill_ / index_put_.
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/index.h"
#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

enum class Kind { kInt, kSlice, kNone, kEllipsis, kTensor };

struct Item {
  Kind kind;
  int64_t value = 0;  // kInt
  py::slice slice = py::slice(0, 0, 1);
  Tensor tensor;     // kTensor (int or bool)
  int64_t dims = 1;  // dims of the indexed tensor this item consumes
};

bool IsIntLike(py::handle h) {
  return !py::isinstance<Tensor>(h) && !PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr()) &&
         !py::isinstance<py::array>(h);
}

// Lists, arrays and Python bools become index tensors (empty lists index nothing, as int64).
Tensor IndexTensor(py::handle h) {
  if (py::isinstance<Tensor>(h)) return py::cast<Tensor>(h);
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(h);
  std::string kind = py::str(a.dtype().attr("kind"));
  if (kind == "f" && a.size() == 0)
    a = np.attr("asarray")(a, "int64");
  else if (kind != "b" && kind != "i" && kind != "u")
    throw py::index_error("[index] tensors used as indices must be long, int or bool; got " +
                          std::string(py::repr(h)));
  return ToTensor(a);
}

std::vector<Item> ParseItems(py::handle index) {
  py::tuple items = py::isinstance<py::tuple>(index) ? py::reinterpret_borrow<py::tuple>(index)
                                                     : py::make_tuple(index);
  std::vector<Item> r;
  for (auto h : items) {
    Item it{Kind::kNone};
    if (h.is_none()) {
      it.kind = Kind::kNone;
      it.dims = 0;
    } else if (h.ptr() == Py_Ellipsis) {
      it.kind = Kind::kEllipsis;
      it.dims = 0;
    } else if (py::isinstance<py::slice>(h)) {
      it.kind = Kind::kSlice;
      it.slice = py::reinterpret_borrow<py::slice>(h);
    } else if (IsIntLike(h)) {
      it.kind = Kind::kInt;
      it.value = py::cast<int64_t>(py::reinterpret_borrow<py::object>(h).attr("__index__")());
    } else {
      it.kind = Kind::kTensor;
      it.tensor = PyBool_Check(h.ptr()) ? Unwrap(F::Full(Shape{}, h.ptr() == Py_True ? 1.0 : 0.0,
                                                         DType::kBool, Device::CPU()))
                                        : IndexTensor(h);
      if (it.tensor.dtype() == DType::kBool || it.tensor.dtype() == DType::kU8)
        it.dims = it.tensor.ndim();
      else if (IsFloating(it.tensor.dtype()))
        throw py::index_error(
            "[index] tensors used as indices must be long, int or bool tensors, got " +
            it.tensor.meta_string());
    }
    r.push_back(it);
  }
  return r;
}

// The basic view of `x` under `items` plus the advanced indices over that view's dims (empty
// when there are none; undefined entries are full slices).
struct Resolved {
  Tensor view;
  TensorList advanced;
};

Resolved Resolve(const Tensor& x, const std::vector<Item>& items) {
  int64_t consumed = 0, ellipses = 0;
  bool any_tensor = false;
  for (auto& it : items) {
    consumed += it.dims;
    ellipses += it.kind == Kind::kEllipsis;
    any_tensor |= it.kind == Kind::kTensor;
  }
  if (ellipses > 1)
    throw py::index_error("[index] an index can only have a single ellipsis ('...')");
  if (consumed > x.ndim())
    throw py::index_error("[index] too many indices for tensor of dimension " +
                          std::to_string(x.ndim()) + " (got " + std::to_string(consumed) + ")");
  Resolved r;
  r.view = x;
  int64_t dim = 0;                              // the view's dim the next item applies to
  int64_t src_dim = 0;                          // the same dim's number in x (for error messages)
  std::vector<std::pair<int64_t, Tensor>> adv;  // (view dim, index)
  for (auto& it : items) {
    switch (it.kind) {
      case Kind::kNone:
        r.view = Unwrap(F::Unsqueeze(r.view, dim));
        ++dim;
        break;
      case Kind::kEllipsis:
        dim += x.ndim() - consumed;
        src_dim += x.ndim() - consumed;
        break;
      case Kind::kInt: {
        int64_t n = r.view.dim(dim);
        if (it.value < -n || it.value >= n)
          throw py::index_error("[index] index " + std::to_string(it.value) +
                                " is out of bounds for dim " + std::to_string(src_dim) +
                                " with size " + std::to_string(n));
        if (any_tensor) {
          adv.emplace_back(dim, Unwrap(F::Full(Shape{}, static_cast<double>(it.value), DType::kI64,
                                               x.device())));
          ++dim;
        } else {
          r.view = Unwrap(F::Select(r.view, dim, it.value));
        }
        ++src_dim;
        break;
      }
      case Kind::kSlice: {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(it.slice.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
        if (step <= 0)
          throw py::value_error("[slice] step must be greater than zero, got " +
                                std::to_string(step));
        int64_t n = r.view.dim(dim);
        PySlice_AdjustIndices(n, &start, &stop, step);
        r.view = Unwrap(F::Slice(r.view, dim, start, std::max<Py_ssize_t>(stop, start), step));
        ++dim;
        ++src_dim;
        break;
      }
      case Kind::kTensor:
        adv.emplace_back(dim, it.tensor);
        dim += it.dims;
        src_dim += it.dims;
        break;
    }
  }
  if (!adv.empty()) {
    int64_t d = 0;
    for (auto& [pos, t] : adv) {
      for (; d < pos; ++d) r.advanced.push_back(Tensor());
      r.advanced.push_back(t.device() == x.device() ? t : Unwrap(F::To(t, x.device())));
      d += (t.dtype() == DType::kBool || t.dtype() == DType::kU8) ? t.ndim() : 1;
    }
  }
  return r;
}

Tensor GetItem(const Tensor& x, py::handle index) {
  Resolved r = Resolve(x, ParseItems(index));
  if (r.advanced.empty()) return r.view;
  return Unwrap(F::Index(r.view, r.advanced));
}

void SetItem(const Tensor& x, py::handle index, py::handle value) {
  Resolved r = Resolve(x, ParseItems(index));
  if (r.advanced.empty()) {
    if (IsScalar(value))
      Check(F::Fill_(r.view, ScalarValue(value)));
    else
      Check(F::CopyInto(r.view, ToTensor(value, &x)));
    return;
  }
  Check(F::IndexPut_(r.view, r.advanced, ToTensor(value, &x), false));
}

void BindIndexing(py::module_&, TensorClass& cls) {
  cls.def("__getitem__", &GetItem);
  cls.def("__setitem__", &SetItem);
}

}  // namespace
OFL_PY_BINDING(BindIndexing);
}  // namespace python
}  // namespace oneflow_like
