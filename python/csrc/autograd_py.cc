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

void BindAutogradFunction(py::module_& m, TensorClass&) {
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
    AutogradMeta* meta = t.autograd_meta();
    if (!meta) return;
    if (meta->grad_fn && t.is_view())
      throw std::runtime_error("[detach_] cannot detach a view in place (" + t.meta_string() +
                               "); use detach()");  // RuntimeError, as torch
    meta->grad_fn.reset();
    meta->output_nr = 0;
    meta->requires_grad = false;
  });
}

}  // namespace
OFL_PY_BINDING(BindAutogradFunction);
}  // namespace python
}  // namespace oneflow_like
