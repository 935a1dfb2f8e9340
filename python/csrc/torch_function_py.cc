// The __torch_function__ protocol's entry point (torch.overrides, issue 19).
//
// oneflow_like.overrides wraps every public function (flow.*, nn.functional, linalg, fft,
// special) and every Tensor method, operator and property accessor in one of the two callable
// types below. A call first asks, in C++, whether anything could override it:
//   * DisableTorchFunction is active: no, call the wrapped function;
//   * a TorchFunctionMode is active on this thread: yes;
//   * DisableTorchFunctionSubclass is active: no;
//   * else: yes if an argument (or an item of a list/tuple argument) is not an exact Tensor and
//     its type defines __torch_function__ other than _disabled_torch_function_impl.
// Plain tensors and Python scalars answer from their type pointer, so the price for ordinary
// code is one extra vectorcall and a few pointer comparisons. A yes hands the call to
// overrides._handle_call(public_api, args, kwargs), which runs the protocol in Python.
#include <Python.h>
#include <structmember.h>

#include <vector>

#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

// Per-thread state, as torch's: the DisableTorchFunction* level and the mode stack's depth.
enum : int { kEnabled = 0, kSubclassDisabled = 1, kAllDisabled = 2 };
struct TFState {
  int disabled = kEnabled;
  int modes = 0;
};
thread_local TFState t_state;

PyTypeObject* g_tensor_type = nullptr;  // flow.Tensor
PyObject* g_disabled_impl = nullptr;    // _C._disabled_torch_function_impl
PyObject* g_handler = nullptr;          // overrides._handle_call
PyObject* g_tf_name = nullptr;          // interned "__torch_function__"

// Whether an object's type overrides the protocol (Tensor subclasses included, Tensor itself
// and classes whose __torch_function__ is _disabled_torch_function_impl excluded).
inline bool OverloadedLeaf(PyObject* o) {
  PyTypeObject* tp = Py_TYPE(o);
  if (tp == g_tensor_type || tp == &PyLong_Type || tp == &PyFloat_Type || o == Py_None ||
      tp == &PyBool_Type || tp == &PyUnicode_Type || tp == &PyTuple_Type || tp == &PyList_Type)
    return false;
  PyObject* attr = _PyType_Lookup(tp, g_tf_name);  // borrowed; the type's method cache
  return attr != nullptr && attr != g_disabled_impl;
}

// Also looks one level into lists and tuples (flow.cat([a, b]), flow.stack((a, b))).
inline bool Overloaded(PyObject* o) {
  PyTypeObject* tp = Py_TYPE(o);
  if (tp == &PyTuple_Type || tp == &PyList_Type) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i)
      if (OverloadedLeaf(items[i])) return true;
    return false;
  }
  return OverloadedLeaf(o);
}

bool AnyOverloaded(PyObject* const* args, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i)
    if (Overloaded(args[i])) return true;
  return false;
}

// Whether this call must go through the protocol (the order of the checks is torch's).
inline bool NeedsDispatch(PyObject* const* args, Py_ssize_t n) {
  const TFState& s = t_state;
  if (s.disabled == kAllDisabled) return false;
  if (s.modes > 0) return true;
  if (s.disabled == kSubclassDisabled || g_handler == nullptr) return false;
  return AnyOverloaded(args, n);
}

// The wrapper object. Kind: what __torch_function__ receives as `func`: the wrapper itself, for
// a property accessor `owner.__get__` / `owner.__set__` (owner: the property), or for an
// operator torch reports under a method's name (Tensor.__add__ as Tensor.add) `owner`.
enum : int { kFunction = 0, kGetter = 1, kSetter = 2, kAlias = 3 };
struct Wrapper {
  PyObject_HEAD PyObject* func;
  PyObject* owner;
  PyObject* dict;
  PyObject* weakrefs;
  vectorcallfunc vectorcall;
  int kind;
};

PyObject* PublicApi(Wrapper* w) {
  if (w->kind == kFunction || w->owner == nullptr) {
    Py_INCREF(w);
    return reinterpret_cast<PyObject*>(w);
  }
  if (w->kind == kAlias) {
    Py_INCREF(w->owner);
    return w->owner;
  }
  return PyObject_GetAttrString(w->owner, w->kind == kGetter ? "__get__" : "__set__");
}

PyObject* SlowCall(Wrapper* w, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* api = PublicApi(w);
  if (api == nullptr) return nullptr;
  PyObject* tuple = PyTuple_New(nargs);
  PyObject* kwargs = PyDict_New();
  PyObject* result = nullptr;
  if (tuple != nullptr && kwargs != nullptr) {
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    bool ok = true;
    for (Py_ssize_t i = 0; i < nkw && ok; ++i)
      ok = PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) == 0;
    if (ok) result = PyObject_CallFunctionObjArgs(g_handler, api, tuple, kwargs, nullptr);
  }
  Py_XDECREF(tuple);
  Py_XDECREF(kwargs);
  Py_DECREF(api);
  return result;
}

PyObject* WrapperVectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (!NeedsDispatch(args, nargs + nkw)) return PyObject_Vectorcall(w->func, args, nargsf, kwnames);
  return SlowCall(w, args, nargs, kwnames);
}

int WrapperTraverse(PyObject* self, visitproc visit, void* arg) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  Py_VISIT(w->func);
  Py_VISIT(w->owner);
  Py_VISIT(w->dict);
  return 0;
}

int WrapperClear(PyObject* self) {
  auto* w = reinterpret_cast<Wrapper*>(self);
  Py_CLEAR(w->func);
  Py_CLEAR(w->owner);
  Py_CLEAR(w->dict);
  return 0;
}

void WrapperDealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  if (reinterpret_cast<Wrapper*>(self)->weakrefs != nullptr) PyObject_ClearWeakRefs(self);
  WrapperClear(self);
  PyTypeObject* tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);  // instances of a heap type own a reference to it
}

PyObject* WrapperRepr(PyObject* self) {
  return PyObject_Repr(reinterpret_cast<Wrapper*>(self)->func);
}

// Methods bind to the instance as Python functions do.
PyObject* WrapperDescrGet(PyObject* self, PyObject* obj, PyObject* /*type*/) {
  if (obj == nullptr || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

// pickle and copy: by qualified name, as functions are.
PyObject* WrapperReduce(PyObject* self, PyObject* /*unused*/) {
  return PyObject_GetAttrString(self, "__qualname__");
}

PyMethodDef g_wrapper_methods[] = {
    {"__reduce__", WrapperReduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyMemberDef g_wrapper_members[] = {
    {"_tf_func", T_OBJECT, offsetof(Wrapper, func), READONLY, "the wrapped callable"},
    {"_tf_owner", T_OBJECT, offsetof(Wrapper, owner), READONLY, "property or aliased method"},
    {"_tf_kind", T_INT, offsetof(Wrapper, kind), READONLY, "0 function, 1/2 accessor, 3 alias"},
    {"__dictoffset__", T_PYSSIZET, offsetof(Wrapper, dict), READONLY, nullptr},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(Wrapper, weakrefs), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Wrapper, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyGetSetDef g_wrapper_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

// Two types: one binds like a Python function (Tensor methods, Python functions), one does not
// (C++ functions, like builtins).
PyTypeObject* MakeType(const char* name, bool binds) {
  std::vector<PyType_Slot> slots = {
      {Py_tp_dealloc, reinterpret_cast<void*>(WrapperDealloc)},
      {Py_tp_traverse, reinterpret_cast<void*>(WrapperTraverse)},
      {Py_tp_clear, reinterpret_cast<void*>(WrapperClear)},
      {Py_tp_repr, reinterpret_cast<void*>(WrapperRepr)},
      {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
      {Py_tp_methods, g_wrapper_methods},
      {Py_tp_members, g_wrapper_members},
      {Py_tp_getset, g_wrapper_getset},
  };
  if (binds) slots.push_back({Py_tp_descr_get, reinterpret_cast<void*>(WrapperDescrGet)});
  slots.push_back({0, nullptr});
  unsigned flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
  if (binds) flags |= Py_TPFLAGS_METHOD_DESCRIPTOR;
  PyType_Spec spec = {name, sizeof(Wrapper), 0, flags, slots.data()};
  PyObject* t = PyType_FromSpec(&spec);
  if (t == nullptr) throw py::error_already_set();
  return reinterpret_cast<PyTypeObject*>(t);
}

PyTypeObject* g_function_type = nullptr;
PyTypeObject* g_method_type = nullptr;

bool IsWrapper(py::handle h) {
  PyTypeObject* tp = Py_TYPE(h.ptr());
  return tp == g_function_type || tp == g_method_type;
}

// _tf_wrap(func, binds, kind=0, owner=None): a wrapper of `func` (the same object when `func`
// already is one).
py::object Wrap(py::object func, bool binds, int kind, py::object owner) {
  if (IsWrapper(func)) return func;
  if (kind < kFunction || kind > kAlias)
    throw py::value_error("[torch_function] _tf_wrap: kind must be 0..3, got " +
                          std::to_string(kind));
  if (!PyCallable_Check(func.ptr()))
    throw py::type_error("[torch_function] cannot wrap the non-callable " +
                         std::string(py::repr(func)));
  PyTypeObject* tp = binds ? g_method_type : g_function_type;
  auto* w = PyObject_GC_New(Wrapper, tp);
  if (w == nullptr) throw py::error_already_set();
  w->func = func.release().ptr();
  w->owner = owner.is_none() ? nullptr : owner.release().ptr();
  w->dict = nullptr;
  w->weakrefs = nullptr;
  w->vectorcall = WrapperVectorcall;
  w->kind = kind;
  PyObject_GC_Track(w);
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(w));
}

// Sets the DisableTorchFunction* level for a scope; returns the previous one.
struct LevelGuard {
  int saved;
  explicit LevelGuard(int level) : saved(t_state.disabled) {
    if (level > t_state.disabled) t_state.disabled = level;
  }
  ~LevelGuard() { t_state.disabled = saved; }
};

bool HasTorchFunction(py::handle seq) {
  if (t_state.disabled == kAllDisabled) return false;
  if (t_state.modes > 0) return true;
  if (t_state.disabled == kSubclassDisabled) return false;
  for (py::handle o : py::reinterpret_borrow<py::iterable>(seq))
    if (OverloadedLeaf(o.ptr())) return true;
  return false;
}

void BindTorchFunction(py::module_& m, TensorClass& cls) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  g_tf_name = PyUnicode_InternFromString("__torch_function__");
  g_function_type = MakeType("oneflow_like._C._TorchFunctionWrapper", false);
  g_method_type = MakeType("oneflow_like._C._TorchFunctionMethodWrapper", true);
  m.attr("_TorchFunctionWrapper") = py::handle(reinterpret_cast<PyObject*>(g_function_type));
  m.attr("_TorchFunctionMethodWrapper") = py::handle(reinterpret_cast<PyObject*>(g_method_type));

  m.def("_tf_wrap", &Wrap, py::arg("func"), py::arg("binds"), py::arg("kind") = 0,
        py::arg("owner") = py::none(),
        "A callable that runs the __torch_function__ protocol around `func` (binds: as a "
        "method; kind 1/2: the getter/setter of the property `owner`; kind 3: dispatches as "
        "the callable `owner`).");
  m.def("_tf_is_wrapper", [](py::handle h) { return IsWrapper(h); });
  m.def("_tf_set_owner", [](py::handle w, py::object owner) {
    // The property an accessor's wrapper belongs to exists only after the wrapper.
    if (!IsWrapper(w)) throw py::type_error("[torch_function] _tf_set_owner: not a wrapper");
    auto* wr = reinterpret_cast<Wrapper*>(w.ptr());
    Py_XSETREF(wr->owner, owner.release().ptr());
  });
  m.def("_tf_set_handler", [](py::object handler) {
    Py_XDECREF(g_handler);
    g_handler = handler.is_none() ? nullptr : handler.release().ptr();
  });
  m.def("_tf_disabled_level", []() { return t_state.disabled; });
  m.def("_tf_set_disabled_level", [](int level) {
    if (level < kEnabled || level > kAllDisabled)
      throw py::value_error("[torch_function] disabled level must be 0, 1 or 2, got " +
                            std::to_string(level));
    const int old = t_state.disabled;
    t_state.disabled = level;
    return old;
  });
  m.def("_tf_set_mode_count", [](int n) {
    if (n < 0) throw py::value_error("[torch_function] negative mode count");
    t_state.modes = n;
  });
  m.def("_is_torch_function_enabled", []() { return t_state.disabled == kEnabled; });
  m.def("_is_torch_function_mode_enabled",
        []() { return t_state.disabled != kAllDisabled && t_state.modes > 0; });
  m.def("_has_torch_function", &HasTorchFunction, py::arg("args"),
        "torch._C._has_torch_function: whether a call with these arguments dispatches.");
  m.def(
      "_has_torch_function_unary", [](py::handle o) { return HasTorchFunction(py::make_tuple(o)); },
      py::arg("input"));
  m.def("_has_torch_function_variadic", [](py::args args) { return HasTorchFunction(args); });
  m.def("_tf_is_overloaded", [](py::handle o) { return OverloadedLeaf(o.ptr()); });
  m.def(
      "_disabled_torch_function_impl",
      [](py::object func, py::object /*types*/, py::object args, py::object kwargs) {
        LevelGuard g(kSubclassDisabled);
        py::tuple a = args.is_none() ? py::tuple() : py::tuple(args);
        if (kwargs.is_none()) return func(*a);
        return func(*a, **py::dict(kwargs));
      },
      py::arg("func"), py::arg("types"), py::arg("args") = py::tuple(),
      py::arg("kwargs") = py::none(),
      "torch._C._disabled_torch_function_impl: a __torch_function__ that opts a Tensor "
      "subclass out of the protocol (calls func with subclass dispatch off, no wrapping).");
  g_disabled_impl = m.attr("_disabled_torch_function_impl").ptr();
  Py_INCREF(g_disabled_impl);
}

OFL_PY_BINDING(BindTorchFunction);

}  // namespace
}  // namespace python
}  // namespace oneflow_like
