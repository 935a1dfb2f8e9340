// The Tensor class, dtype and device objects, NumPy conversion and autograd entry points.
#include <mutex>

#include "oneflow_like/framework/autograd.h"
#include "oneflow_like/ops/binary.h"
#include "oneflow_like/ops/complex.h"
#include "oneflow_like/ops/copy.h"
#include "oneflow_like/ops/creation.h"
#include "oneflow_like/ops/shape_ops.h"
#include "python/csrc/binding.h"
#include "python/csrc/default_dtype.h"
#include "python/csrc/tensor_py.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace python {
py::object NodeObject(const std::shared_ptr<Node>& n);  // autograd_py.cc: grad_fn's class
namespace {

// NumPy arrays shared with tensors are released by whichever thread frees the tensor's memory;
// a worker thread never takes the GIL, it queues the reference for the next Python call.
std::mutex g_pending_mu;
std::vector<PyObject*> g_pending_decrefs;

struct PyRef {
  PyObject* obj;
  ~PyRef() {
    if (Py_IsInitialized() && PyGILState_Check()) {
      Py_DECREF(obj);
    } else {
      std::lock_guard<std::mutex> l(g_pending_mu);
      g_pending_decrefs.push_back(obj);
    }
  }
};

const char* NumpyName(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kU8: return "uint8";
    case DType::kI8: return "int8";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kF16: return "float16";
    case DType::kBF16: return "uint16";  // raw bits; converted by the caller
    case DType::kF32: return "float32";
    case DType::kF64: return "float64";
    case DType::kC64: return "complex64";
    case DType::kC128: return "complex128";
    case DType::kI16: return "int16";
    case DType::kU16: return "uint16";
    case DType::kU32: return "uint32";
    case DType::kU64: return "uint64";
    default: break;  // float8: NumPy has no type, converted through float32 by the callers
  }
  return "float32";
}

StatusOr<DType> FromNumpyDtype(const py::dtype& d) {
  std::string name = py::str(d.attr("name"));
  return DTypeFromName(name);
}

}  // namespace

std::shared_ptr<void> KeepPyObject(PyObject* obj) {
  Py_INCREF(obj);
  return std::shared_ptr<void>(new PyRef{obj}, [](void* p) { delete static_cast<PyRef*>(p); });
}

void DrainPendingDecrefs() {
  std::vector<PyObject*> todo;
  {
    std::lock_guard<std::mutex> l(g_pending_mu);
    todo.swap(g_pending_decrefs);
  }
  for (PyObject* o : todo) Py_DECREF(o);
}

Tensor FromNumpy(py::array arr) {
  DrainPendingDecrefs();
  DType dt = Unwrap(FromNumpyDtype(arr.dtype()));
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  Shape s(DimVector(shape.begin(), shape.end()));
  // A read-only array (np.broadcast_to, a memory-mapped file) is shared as PyTorch does, with
  // its warning: writing through the tensor is undefined behaviour.
  if (!arr.writeable() &&
      PyErr_WarnEx(PyExc_UserWarning,
                   "[from_numpy] the given NumPy array is not writable; writing to the tensor is "
                   "undefined (copy the array to protect its data)",
                   1) < 0)
    throw py::error_already_set();  // warnings turned into errors
  void* data = const_cast<void*>(arr.data());
  if ((arr.flags() & py::array::c_style) || s.numel() == 0)
    return Unwrap(functional::WrapHost(data, s, dt, KeepPyObject(arr.ptr())));
  // Any other non-negative strides (slices, transposes, broadcasts), as PyTorch: a strided view
  // of the array's memory, which stays shared.
  DimVector strides;
  int64_t span = 1;
  const int64_t item = arr.itemsize();
  for (int64_t i = 0; i < arr.ndim(); ++i) {
    int64_t st = arr.strides(i);
    if (st < 0)
      throw py::value_error(
          "[from_numpy] at least one stride in the given numpy array is negative; "
          "make a copy first (numpy.ascontiguousarray)");
    if (st % item)
      throw py::value_error("[from_numpy] stride " + std::to_string(st) + " of dim " +
                            std::to_string(i) + " is not a multiple of the element size " +
                            std::to_string(item));
    strides.push_back(st / item);
    span += (shape[i] - 1) * (st / item);
  }
  Tensor base = Unwrap(functional::WrapHost(data, Shape{span}, dt, KeepPyObject(arr.ptr())));
  return Unwrap(functional::AsStrided(base, s, strides, 0));
}

Tensor TensorFromData(py::handle data, py::object dtype, py::object device) {
  if (py::isinstance<Tensor>(data)) {
    Tensor t = py::cast<Tensor>(data).detach();
    NoGradGuard g;
    if (!dtype.is_none()) t = Unwrap(functional::Cast(t, ParseDType(dtype)));
    if (!device.is_none()) t = Unwrap(functional::To(t, ParseDevice(device)));
    return Unwrap(functional::Clone(t)).detach();
  }
  py::module_ np = py::module_::import("numpy");
  bool from_python = !py::isinstance<py::array>(data);
  py::array arr = np.attr("asarray")(data);
  if (!dtype.is_none()) {
    DType want = ParseDType(dtype);
    if (want == DType::kBF16 || IsFloat8(want)) {  // no NumPy type: round from float32
      Tensor f = TensorFromData(data, py::str("float32"), device);
      NoGradGuard g;
      return Unwrap(functional::Cast(f, want));
    }
    arr = np.attr("asarray")(arr, NumpyName(want));
  } else if (from_python && py::str(arr.dtype().attr("name")).cast<std::string>() == "float64" &&
             DefaultFloatDType() != DType::kF64) {
    // Python floats make tensors of the default float dtype (float32 unless changed), as in
    // PyTorch; NumPy has no bfloat16, which is rounded from float32.
    if (DefaultFloatDType() == DType::kBF16)
      return TensorFromData(data, py::str("bfloat16"), device);
    arr = np.attr("asarray")(arr, NumpyName(DefaultFloatDType()));
  } else if (from_python && py::str(arr.dtype().attr("name")).cast<std::string>() == "complex128" &&
             DefaultFloatDType() != DType::kF64) {
    // Python complex numbers make complex64 unless the default float dtype is float64 (torch)
    arr = np.attr("asarray")(arr, "complex64");
  }
  arr =
      np.attr("asarray")(arr, py::arg("order") = "C");  // (ascontiguousarray makes 0-d arrays 1-d)
  DType dt = Unwrap(FromNumpyDtype(arr.dtype()));
  std::vector<int64_t> shape(arr.shape(), arr.shape() + arr.ndim());
  Device dev = device.is_none() ? DefaultDevice() : ParseDevice(device);
  return Unwrap(
      functional::FromHost(arr.data(), Shape(DimVector(shape.begin(), shape.end())), dt, dev));
}

Tensor ToTensor(py::handle h, const Tensor* like) {
  if (const Tensor* t = AsTensor(h)) return *t;
  if (like && PyComplex_Check(h.ptr())) {  // a Python complex: the like's complex counterpart
    const DType dt = IsComplex(like->dtype())    ? like->dtype()
                     : IsFloating(like->dtype()) ? PromoteWithComplexScalar(like->dtype())
                                                 : ToComplexDType(DefaultFloatDType());
    return Unwrap(functional::ComplexScalarTensor(
        PyComplex_RealAsDouble(h.ptr()), PyComplex_ImagAsDouble(h.ptr()), dt, like->device()));
  }
  if (IsScalar(h) && like) {
    DType dt = IsFloatScalar(h) ? (IsFloating(like->dtype())  ? like->dtype()
                                   : IsComplex(like->dtype()) ? ToRealDType(like->dtype())
                                                              : DefaultFloatDType())
                                : (PyBool_Check(h.ptr()) ? (like->dtype()) : like->dtype());
    return Unwrap(functional::Full(Shape{}, ScalarValue(h), dt, like->device()));
  }
  return TensorFromData(h, py::none(), like ? py::cast(like->device()) : py::none());
}

py::array ToNumpy(const Tensor& t) {
  DrainPendingDecrefs();
  std::vector<ssize_t> shape(t.shape().dims().begin(), t.shape().dims().end());
  Tensor src = t;
  if (t.dtype() == DType::kBF16 || IsFloat8(t.dtype()))  // NumPy has no type: as float32
    src = Unwrap(functional::Cast(t.detach(), DType::kF32));
  py::array out;
  try {
    out = py::array(py::dtype(NumpyName(src.dtype())), shape);
  } catch (py::error_already_set& e) {
    // NumPy could not allocate the result: if the tensor itself failed (most likely the same
    // out-of-memory, in the op that made it), raise the runtime's error, once, here.
    if (!e.matches(PyExc_MemoryError) || src.is_lazy() || !src.device().is_cpu()) throw;
    Status produced;
    {
      py::gil_scoped_release nogil;
      produced =
          vm::SyncAccessBlob(src.blob(), vm::AccessMode::kRead, [](void*) { return Status(); });
    }
    Check(produced);
    throw;
  }
  Status s;
  {
    py::gil_scoped_release nogil;
    s = functional::CopyToHost(src, out.mutable_data());
  }
  Check(s);
  return out;
}

namespace {

void BindTensorClass(py::module_& m, TensorClass& cls) {
  cls.def(py::init([](const Tensor& other) { return other; }), py::arg("data"))
      .def(py::init([](py::array arr) { return TensorFromData(arr, py::none(), py::none()); }))
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               py::tuple r(t.ndim());
                               for (int64_t i = 0; i < t.ndim(); ++i) r[i] = t.dim(i);
                               return r;
                             })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("is_lazy", &Tensor::is_lazy)
      .def_property_readonly("_version", &Tensor::version)
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& t, bool r) { Check(t.set_requires_grad(r)); })
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            Tensor g = t.grad();
            return g.defined() ? py::cast(g) : py::none();
          },
          [](Tensor& t, py::object g) { t.set_grad(g.is_none() ? Tensor() : py::cast<Tensor>(g)); })
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               return NodeObject(t.grad_fn());  // autograd_py.cc
                             })
      .def("dim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", [](const Tensor& t) { return DTypeSize(t.dtype()); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def(
          "stride",  // a tuple, or one dim's stride (negative dims count from the end)
          [](const Tensor& t, py::object dim) -> py::object {
            py::tuple all(t.ndim());
            for (int64_t i = 0; i < t.ndim(); ++i) all[i] = t.strides()[i];
            if (dim.is_none()) return std::move(all);
            int64_t d = dim.cast<int64_t>(), n = t.ndim();
            if (d < -n || d >= n)
              throw py::index_error("[stride] dim " + std::to_string(d) + " out of range for " +
                                    std::to_string(n) + "-d tensor");
            return all[d < 0 ? d + n : d];
          },
          py::arg("dim") = py::none())
      .def("storage_offset", &Tensor::offset)
      // Elements the storage holds (0 for a lazy tensor): resize_ reuses it when it is enough.
      .def("_storage_numel",
           [](const Tensor& t) -> int64_t {
             const TensorImpl* i = t.impl();
             return i->storage
                        ? static_cast<int64_t>(i->storage->blob()->bytes()) / DTypeSize(i->dtype)
                        : 0;
           })
      // A 1-D view of the whole storage from element 0 (no autograd): resize_ and set_ read
      // the storage beyond this tensor's own extent through it.
      .def("_storage_view",
           [](const Tensor& t) {
             if (t.is_lazy() || !t.impl()->storage)
               throw py::value_error("[resize_] a lazy (traced) tensor has no storage");
             const int64_t n =
                 static_cast<int64_t>(t.impl()->storage->blob()->bytes()) / DTypeSize(t.dtype());
             return Tensor::MakeView(t, Shape{n}, DimVector{1}, 0);
           })
      // The in-place metadata methods (t_, squeeze_, resize_, set_, the .data setter; Python:
      // _tensor_inplace_meta.py): this tensor object takes `src`'s storage, shape, strides,
      // offset, dtype and device, as torch's set_data / shallow copy does, so every reference to
      // it sees the change. In-flight instructions are unaffected (they hold their own views
      // and blobs). take_grad_fn: take a copy of src's autograd meta (the view op's grad_fn),
      // else keep this tensor's (a leaf stays the same leaf). `bump` marks the storage
      // modified, so saved tensors of this storage raise in backward, as in torch.
      .def(
          "_rebind_",
          [](Tensor& self, const Tensor& src, bool take_grad_fn, bool bump) {
            if (self.same(src)) return;
            if (!take_grad_fn && self.requires_grad() && !IsFloating(src.dtype()))
              throw py::type_error(
                  "[data] data set to a tensor that requires gradients must be "
                  "floating point: got " +
                  src.meta_string());
            TensorImpl* d = self.impl();
            const TensorImpl* s = src.impl();
            d->shape = s->shape;
            d->strides = s->strides;
            d->offset = s->offset;
            d->dtype = s->dtype;
            d->device = s->device;
            d->storage = s->storage;
            d->is_view = s->is_view;
            // A view's base and creation travel with it (a root taking a view of itself, as
            // t_() does, stays its own root).
            d->view_base = s->view_base.get() == d ? nullptr : s->view_base;
            d->view_creation = s->view_creation;
            d->view_output_nr = s->view_output_nr;
            d->view_multi_fn = s->view_multi_fn;
            d->view_version = s->view_version;
            d->lazy_id = s->lazy_id;
            d->lazy_ctx = s->lazy_ctx;
            if (take_grad_fn)
              d->autograd = s->autograd ? std::make_shared<AutogradMeta>(*s->autograd) : nullptr;
            if (bump) self.bump_version();
          },
          py::arg("src"), py::arg("take_grad_fn"), py::arg("bump"))
      .def("data_ptr",  // the first element's address, once the op that makes it has run
           [](const Tensor& t) -> uintptr_t {
             if (t.is_lazy())
               throw py::value_error("[data_ptr] a lazy (traced) tensor has no data");
             if (t.numel() == 0) return 0;
             void* base = nullptr;
             Status s;
             {
               py::gil_scoped_release nogil;
               s = vm::SyncAccessBlob(t.blob(), vm::AccessMode::kRead, [&](void* p) {
                 base = p;
                 return Status();
               });
             }
             Check(s);
             return reinterpret_cast<uintptr_t>(static_cast<char*>(base) +
                                                t.offset() * DTypeSize(t.dtype()));
           })
      .def("detach", &Tensor::detach)
      .def(
          "requires_grad_",
          [](Tensor& t, bool r) {
            Check(t.set_requires_grad(r));
            return t;
          },
          py::arg("requires_grad") = true)
      .def("retain_grad", [](Tensor& t) { Check(RetainGrad(t)); })
      // torch.Tensor.retains_grad: a non-leaf whose .grad backward keeps (after retain_grad()).
      .def_property_readonly("retains_grad",
                             [](const Tensor& t) {
                               return !t.is_leaf() && t.autograd_meta() != nullptr &&
                                      t.autograd_meta()->retains_grad;
                             })
      .def("_is_view", &Tensor::is_view)
      // torch.Tensor.numpy(*, force=False): refuses a tensor that requires grad in grad mode
      // (the array would not be tracked); force=True converts its detached (CPU) value.
      .def(
          "numpy",
          [](const Tensor& t, bool force) {
            if (!force && GradModeEnabled() && t.requires_grad())
              throw std::runtime_error(
                  "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                  "instead.");
            if (force && !t.is_lazy() && !t.device().is_cpu())
              return ToNumpy(Unwrap(functional::To(t.detach(), Device::CPU())));
            return ToNumpy(t);
          },
          py::kw_only(), py::arg("force") = false)
      .def("_same", [](const Tensor& a, const Tensor& b) { return a.same(b); })
      .def(
          "_backward",
          [](const Tensor& t, py::object gradient, bool retain_graph, bool create_graph,
             std::vector<Tensor> inputs) {
            TensorList g{gradient.is_none() ? Tensor() : py::cast<Tensor>(gradient)};
            Check(Backward({t}, g, retain_graph, create_graph, inputs));
          },
          py::arg("gradient") = py::none(), py::arg("retain_graph") = false,
          py::arg("create_graph") = false, py::arg("inputs") = std::vector<Tensor>());

  m.def("from_numpy", &FromNumpy, py::arg("array"));
  m.def(
      "tensor",
      [](py::handle data, py::object dtype, py::object device, bool requires_grad) {
        Tensor t = TensorFromData(data, dtype, device);
        if (requires_grad) Check(t.set_requires_grad(true));
        return t;
      },
      py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
  m.def("_to_numpy", &ToNumpy);
  m.def("sync", [] {
    DrainPendingDecrefs();
    Status s;
    {
      py::gil_scoped_release nogil;
      s = vm::VirtualMachine::Get()->SyncAll();
    }
    Check(s);
  });
  m.def("_shutdown", [] {
    py::gil_scoped_release nogil;
    vm::VirtualMachine::ShutdownSingleton();
  });
  m.def("is_grad_enabled", &GradModeEnabled);
  m.def("set_grad_enabled", &SetGradMode);
  m.def(
      "_autograd_backward",
      [](std::vector<Tensor> tensors, std::vector<py::object> grads, bool retain_graph,
         bool create_graph, std::vector<Tensor> inputs) {
        TensorList g;
        for (auto& o : grads) g.push_back(o.is_none() ? Tensor() : py::cast<Tensor>(o));
        Check(Backward(tensors, g, retain_graph, create_graph, inputs));
      },
      py::arg("tensors"), py::arg("grads"), py::arg("retain_graph"), py::arg("create_graph"),
      py::arg("inputs") = std::vector<Tensor>());
  m.def("_autograd_grad",
        [](std::vector<Tensor> outputs, std::vector<Tensor> inputs, std::vector<py::object> grads,
           bool retain_graph, bool create_graph, bool allow_unused) {
          TensorList g;
          for (auto& o : grads) g.push_back(o.is_none() ? Tensor() : py::cast<Tensor>(o));
          TensorList r = Unwrap(Grad(outputs, inputs, g, retain_graph, create_graph, allow_unused));
          py::list out;
          for (auto& t : r) out.append(t.defined() ? py::cast(t) : py::none());
          return out;
        });
}

}  // namespace

void BindCore(py::module_& m, TensorClass& cls) {
  py::enum_<DType>(m, "dtype")
      .value("bool", DType::kBool)
      .value("uint8", DType::kU8)
      .value("int8", DType::kI8)
      .value("int32", DType::kI32)
      .value("int64", DType::kI64)
      .value("float16", DType::kF16)
      .value("bfloat16", DType::kBF16)
      .value("float32", DType::kF32)
      .value("float64", DType::kF64)
      .value("complex64", DType::kC64)
      .value("complex128", DType::kC128)
      .value("int16", DType::kI16)
      .value("uint16", DType::kU16)
      .value("uint32", DType::kU32)
      .value("uint64", DType::kU64)
      .value("float8_e4m3fn", DType::kF8E4M3FN)
      .value("float8_e5m2", DType::kF8E5M2)
      .value("float8_e4m3fnuz", DType::kF8E4M3FNUZ)
      .value("float8_e5m2fnuz", DType::kF8E5M2FNUZ)
      .def_property_readonly("is_complex", [](DType t) { return IsComplex(t); })
      .def_property_readonly("is_signed", [](DType t) { return IsSigned(t); })
      .def("to_complex", [](DType t) { return ToComplexDType(t); })
      .def("to_real", [](DType t) { return ToRealDType(t); })
      .def_property_readonly("is_floating_point", [](DType t) { return IsFloating(t); })
      .def_property_readonly("itemsize", [](DType t) { return DTypeSize(t); })
      .def("__repr__", [](DType t) { return std::string("oneflow_like.") + DTypeLongName(t); })
      .def("__str__", [](DType t) { return std::string("oneflow_like.") + DTypeLongName(t); });
  // torch.promote_types: the runtime's promotion with torch 2.x's refusals (float8 with another
  // dtype, u16/u32/u64 with a non-floating one).
  m.def("_promote_types",
        [](DType a, DType b) { return Unwrap(PromoteTypesChecked("promote_types", a, b)); });
  py::class_<Device>(m, "device")
      .def(py::init([](const std::string& s) { return Unwrap(Device::Parse(s)); }))
      .def(py::init([](const std::string& type, int index) {
        return Unwrap(Device::Parse(type + ":" + std::to_string(index)));
      }))
      // torch.device(other_device) and torch.device(index) (a CUDA device), as PyTorch.
      .def(py::init([](const Device& d) { return d; }))
      .def(py::init(
          [](int index) { return Unwrap(Device::Parse("cuda:" + std::to_string(index))); }))
      .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_property_readonly("index", &Device::index)
      .def("__str__", &Device::ToString)
      .def("__repr__",
           [](const Device& d) {
             return std::string("device(type='") + (d.is_cpu() ? "cpu" : "cuda") +
                    "', index=" + std::to_string(d.index()) + ")";
           })
      .def("__hash__", [](const Device& d) { return std::hash<std::string>()(d.ToString()); })
      .def("__eq__", [](const Device& d, py::object o) {
        if (py::isinstance<Device>(o)) return d == py::cast<Device>(o);
        if (py::isinstance<py::str>(o)) {
          auto p = Device::Parse(py::cast<std::string>(o));
          return p.ok() && *p == d;
        }
        return false;
      });
  py::implicitly_convertible<py::str, Device>();
  BindTensorClass(m, cls);
}

}  // namespace python
}  // namespace oneflow_like
