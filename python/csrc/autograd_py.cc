// User-defined autograd functions (flow.autograd.Function): a Node whose backward calls back
// into Python. The Python side runs forward under no_grad and records the node here.
#include "oneflow_like/framework/anomaly.h"
#include "oneflow_like/framework/autograd.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

class PyFunctionNode : public Node {
 public:
  PyFunctionNode(std::string name, py::function backward)
      : name_(std::move(name)), backward_(std::move(backward)) {}
  ~PyFunctionNode() override {
    py::gil_scoped_acquire gil;
    backward_ = py::function();
  }
  std::string name() const override { return name_ + "Backward"; }
  StatusOr<TensorList> Apply(TensorList grads, bool) override {
    py::gil_scoped_acquire gil;
    try {
      py::tuple args(grads.size());
      for (size_t i = 0; i < grads.size(); ++i)
        args[i] = grads[i].defined() ? py::cast(grads[i]) : py::none();
      py::object r = backward_(*args);
      TensorList out;
      for (auto item : py::reinterpret_borrow<py::iterable>(r))
        out.push_back(item.is_none() ? Tensor() : py::cast<Tensor>(item));
      if (out.size() != next_edges.size())
        return InvalidArgument("[%s.backward] returned %d gradients, expected %d", name_,
                               int(out.size()), int(next_edges.size()));
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i].defined() && out[i].shape() != input_shapes_[i])
          return InvalidArgument("[%s.backward] gradient %d has shape %s, expected %s", name_,
                                 int(i), out[i].meta_string(), input_shapes_[i].ToString());
      }
      return out;
    } catch (py::error_already_set& e) {
      return Internal("[%s.backward] raised %s", name_, e.what());
    }
  }
  std::vector<Shape> input_shapes_;

 private:
  std::string name_;
  py::function backward_;
};

std::atomic<uint64_t> g_py_seq{1ull << 62};

// A Python object C++ may drop without the GIL (a node freed by the engine, or at exit).
std::shared_ptr<py::object> Hold(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      delete p;
    } else {
      p->release();
      delete p;
    }
  });
}

// What a Python hook raised, as the engine's error (a RuntimeError carrying its message).
Status HookError(const char* what, py::error_already_set& e) {
  return Internal("[%s] %s", what, e.what());
}

// The result of a Python unpack hook / tensor hook, which must be a Tensor.
StatusOr<Tensor> AsTensorResult(const char* what, py::handle r) {
  const Tensor* t = AsTensor(r);
  if (t == nullptr)
    return TypeError("[%s] expected a Tensor, got %s", what,
                     std::string(py::str(py::type::of(r).attr("__name__"))));
  return *t;
}

// saved_tensors_hooks with Python callables: pack at save time, unpack in backward.
class PyPacked : public PackedTensor {
 public:
  PyPacked(std::shared_ptr<py::object> packed, std::shared_ptr<py::object> unpack)
      : packed_(std::move(packed)), unpack_(std::move(unpack)) {}
  StatusOr<Tensor> Unpack() override {
    py::gil_scoped_acquire gil;
    try {
      py::object r = (*unpack_)(*packed_);
      return AsTensorResult("saved_tensors_hooks unpack_hook", r);
    } catch (py::error_already_set& e) {
      return HookError("saved_tensors_hooks unpack_hook", e);
    }
  }

 private:
  std::shared_ptr<py::object> packed_, unpack_;
};

class PySavedTensorsHooks : public SavedTensorsHooks {
 public:
  PySavedTensorsHooks(py::function pack, py::function unpack)
      : pack_(Hold(std::move(pack))), unpack_(Hold(std::move(unpack))) {}
  StatusOr<std::unique_ptr<PackedTensor>> Pack(const Tensor& t) override {
    py::gil_scoped_acquire gil;
    try {
      py::object r = (*pack_)(t);
      return std::unique_ptr<PackedTensor>(new PyPacked(Hold(std::move(r)), unpack_));
    } catch (py::error_already_set& e) {
      return HookError("saved_tensors_hooks pack_hook", e);
    }
  }
  py::tuple pair() const { return py::make_tuple(*pack_, *unpack_); }

 private:
  std::shared_ptr<py::object> pack_, unpack_;
};

// grad_fn.metadata: a dict kept on the node for its lifetime.
py::object& Metadata(Node& n) {
  if (!n.front_end_state) n.front_end_state = Hold(py::dict());
  return *static_cast<py::object*>(n.front_end_state.get());
}

// What a node hook returned: one gradient (a Tensor or None) per slot, `n` of them.
StatusOr<TensorList> ToTensorList(const Node& node, const char* kind, py::handle seq, size_t n) {
  if (!py::isinstance<py::sequence>(seq))
    return TypeError("[%s] a %s must return None or a sequence of gradients, got %s", node.name(),
                     kind, std::string(py::str(py::type::of(seq).attr("__name__"))));
  TensorList out;
  for (auto item : py::reinterpret_borrow<py::sequence>(seq)) {
    if (item.is_none()) {
      out.emplace_back();
      continue;
    }
    ASSIGN_OR_RETURN(Tensor t, AsTensorResult(kind, item));
    out.push_back(std::move(t));
  }
  if (out.size() != n)
    return InvalidArgument("[%s] a %s returned %d gradients, expected %d", node.name(), kind,
                           int(out.size()), int(n));
  return out;
}

py::tuple ToTuple(const TensorList& ts) {
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = ts[i].defined() ? py::cast(ts[i]) : py::none();
  return t;
}

// Runs a node hook `f(*args)` (the caller holds the GIL); its result replaces the `n` gradients
// unless None.
StatusOr<std::optional<TensorList>> CallNodeHook(const Node& node, const char* kind,
                                                 const py::object& f, const py::tuple& args,
                                                 size_t n) {
  try {
    py::object r = f(*args);
    if (r.is_none()) return std::optional<TensorList>();
    ASSIGN_OR_RETURN(TensorList g, ToTensorList(node, kind, r, n));
    return std::optional<TensorList>(std::move(g));
  } catch (py::error_already_set& e) {
    return HookError(kind, e);
  }
}

// A callable that empties entry `index` of the hook list `get` finds (if it still exists).
template <typename Owner, typename Get>
py::cpp_function Remover(std::weak_ptr<Owner> owner, Get get, int index) {
  return py::cpp_function([owner, get, index]() {
    if (auto o = owner.lock()) {
      auto& hooks = get(*o);
      if (index < static_cast<int>(hooks.size())) hooks[index] = nullptr;
    }
  });
}

}  // namespace

// A node as Python sees it (grad_fn, next_functions). Its name() and repr are torch's
// ("<MulBackward0 object at 0x...>"); its type stays Node (a per-name subclass cannot take over a
// pybind instance: CPython refuses the __class__ change, the deallocators differ).
py::object NodeObject(const std::shared_ptr<Node>& n) {
  if (!n) return py::none();
  return py::cast(n);
}

namespace {
void BindNode(py::module_& m) {
  py::class_<Node, std::shared_ptr<Node>>(m, "Node")
      .def("name", &Node::name)
      .def_property_readonly("next_functions",
                             [](const Node& n) {
                               py::tuple r(n.next_edges.size());
                               for (size_t i = 0; i < n.next_edges.size(); ++i) {
                                 const Edge& e = n.next_edges[i];
                                 r[i] = py::make_tuple(NodeObject(e.fn), e.input_nr);
                               }
                               return r;
                             })
      .def_property_readonly("metadata", [](Node& n) { return Metadata(n); })
      .def("_sequence_nr", [](const Node& n) { return n.sequence_nr; })
      .def_property_readonly(
          "variable",  // AccumulateGrad's leaf (as torch's)
          [](const Node& n) -> py::object {
            auto* acc = dynamic_cast<const AccumulateGrad*>(&n);
            if (acc == nullptr)
              throw py::attribute_error("'" + n.name() + "' object has no attribute 'variable'");
            auto v = acc->variable();
            return v ? py::cast(Tensor(v)) : py::none();
          })
      .def("_register_prehook",
           [](Node& n, py::function fn) {
             auto f = Hold(std::move(fn));
             const Node* self = &n;  // the hook lives in the node: a plain pointer is safe
             n.pre_hooks.push_back([f, self](const TensorList& grads) {
               py::gil_scoped_acquire gil;
               return CallNodeHook(*self, "pre-hook", *f, py::make_tuple(ToTuple(grads)),
                                   grads.size());
             });
             return Remover(
                 std::weak_ptr<Node>(n.shared_from_this()),
                 [](Node & o) -> auto& { return o.pre_hooks; },
                 static_cast<int>(n.pre_hooks.size()) - 1);
           })
      .def("_register_hook",
           [](Node& n, py::function fn) {
             auto f = Hold(std::move(fn));
             const Node* self = &n;
             n.post_hooks.push_back(
                 [f, self](const TensorList& grad_inputs, const TensorList& grad_outputs) {
                   py::gil_scoped_acquire gil;
                   return CallNodeHook(*self, "hook", *f,
                                       py::make_tuple(ToTuple(grad_inputs), ToTuple(grad_outputs)),
                                       grad_inputs.size());
                 });
             return Remover(
                 std::weak_ptr<Node>(n.shared_from_this()),
                 [](Node & o) -> auto& { return o.post_hooks; },
                 static_cast<int>(n.post_hooks.size()) - 1);
           })
      .def("__eq__",
           [](const Node& a, py::object b) {
             return py::isinstance<Node>(b) && &a == &py::cast<const Node&>(b);
           })
      .def("__hash__", [](const Node& n) { return reinterpret_cast<uintptr_t>(&n); })
      .def("__repr__", [](const Node& n) {
        return absl::StrFormat("<%s object at %p>", n.name(), static_cast<const void*>(&n));
      });

  m.def("_push_saved_tensors_hooks", [](py::function pack, py::function unpack) {
    Check(PushSavedTensorsHooks(std::make_shared<PySavedTensorsHooks>(pack, unpack)));
  });
  m.def("_pop_saved_tensors_hooks", []() { Check(PopSavedTensorsHooks()); });
  // The innermost (pack_hook, unpack_hook), or None: custom Functions pack their saved tensors.
  m.def("_current_saved_tensors_hooks", []() -> py::object {
    auto h = std::dynamic_pointer_cast<PySavedTensorsHooks>(CurrentSavedTensorsHooks());
    return h ? py::object(h->pair()) : py::none();
  });
  m.def("_set_saved_tensors_hooks_disabled", [](std::optional<std::string> message) {
    Check(DisableSavedTensorsHooks(std::move(message)));
  });
  m.def("_saved_tensors_hooks_disabled_message", &SavedTensorsHooksDisabledMessage);
  m.def("_current_graph_task_id", &CurrentGraphTaskId);
  m.def("_will_engine_execute_node",
        [](const std::shared_ptr<Node>& n) { return WillEngineExecuteNode(n.get()); });
  // torch.autograd.graph.get_gradient_edge: (node, input_nr) a gradient of `t` flows into.
  m.def("_gradient_edge", [](const Tensor& t) {
    if (!t.requires_grad())
      throw py::value_error("[get_gradient_edge] the tensor does not require grad (" +
                            t.meta_string() + ")");
    Edge e = GradientEdge(t);
    return py::make_tuple(e.fn, e.input_nr);
  });
  // torch.autograd.graph.increment_version: marks `t` modified in place (saved copies raise).
  m.def("_increment_version", [](const Tensor& t) { t.bump_version(); });
  m.def("_register_post_accumulate_grad_hook", [](Tensor& t, py::function fn) {
    auto f = Hold(std::move(fn));
    int index = Unwrap(RegisterPostAccumulateGradHook(t, [f](const Tensor& leaf) -> Status {
      py::gil_scoped_acquire gil;
      try {
        (*f)(leaf);
        return Status();
      } catch (py::error_already_set& e) {
        return HookError("post accumulate grad hook", e);
      }
    }));
    return Remover(
        std::weak_ptr<AutogradMeta>(t.impl()->autograd),
        [](AutogradMeta & a) -> auto& { return a.post_accumulate_hooks; }, index);
  });
  m.def("_register_tensor_hook", [](Tensor& t, py::function fn) {
    auto f = Hold(std::move(fn));
    int index = Unwrap(RegisterHook(t, [f](const Tensor& g) -> StatusOr<Tensor> {
      py::gil_scoped_acquire gil;
      try {
        py::object r = (*f)(g);
        if (r.is_none()) return Tensor();
        return AsTensorResult("hook", r);
      } catch (py::error_already_set& e) {
        return HookError("hook", e);
      }
    }));
    if (t.is_leaf())
      return Remover(
          std::weak_ptr<AutogradMeta>(t.impl()->autograd),
          [](AutogradMeta & a) -> auto& { return a.hooks; }, index);
    const int nr = t.autograd_meta()->output_nr;
    return Remover(
        std::weak_ptr<Node>(t.autograd_meta()->grad_fn),
        [nr](Node & n) -> auto& { return n.output_hooks[nr]; }, index);
  });
}

void BindAutogradFunction(py::module_& m, TensorClass&) {
  BindNode(m);
  m.def("_record_function", [](const std::string& name, py::function backward,
                               std::vector<Tensor> inputs, std::vector<Tensor> outputs) {
    auto node = std::make_shared<PyFunctionNode>(name, std::move(backward));
    node->sequence_nr = g_py_seq.fetch_add(1);
    node->num_outputs = static_cast<int>(outputs.size());
    node->output_hooks.resize(outputs.size());
    for (auto& t : inputs) {
      node->next_edges.push_back(t.requires_grad() ? GradientEdge(t) : Edge{});
      node->input_shapes_.push_back(t.shape());
    }
    SetHistory(outputs, node);
  });
  // torch.autograd.detect_anomaly / set_detect_anomaly: the engine's NaN check per node.
  m.def("_set_anomaly_enabled", &SetAnomalyMode, py::arg("enabled"), py::arg("check_nan") = true);
  m.def("_is_anomaly_enabled", &AnomalyModeEnabled);
  m.def("_is_anomaly_check_nan_enabled", &AnomalyCheckNan);
  // Tensor.detach_: cuts the tensor from its graph in place (a leaf without requires_grad).
  m.def("_detach_", [](Tensor& t) {
    // Any view a view op made (torch: even of a tensor that does not require grad, or made in
    // no_grad mode) is refused with torch's RuntimeError.
    if (t.impl()->view_base || (t.autograd_meta() && t.autograd_meta()->grad_fn && t.is_view()))
      throw std::runtime_error("[detach_] cannot detach a view in place (" + t.meta_string() +
                               "): Can't detach views in-place. Use detach() instead.");
    AutogradMeta* meta = t.autograd_meta();
    if (!meta) return;
    meta->grad_fn.reset();
    meta->output_nr = 0;
    meta->requires_grad = false;
    t.impl()->view_base.reset();  // no history to regenerate from a base either
  });
}

}  // namespace
OFL_PY_BINDING(BindAutogradFunction);
}  // namespace python
}  // namespace oneflow_like
