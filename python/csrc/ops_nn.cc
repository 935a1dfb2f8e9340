// Bindings of the NN op families (softmax, loss, nn_misc; conv, norm and pool: ops_conv.cc,
// ops_norm.cc and ops_pool.cc, from their op tables): module-level functions with
// torch.nn.functional signatures, also placed in `_C.nn_functional` (where nn/functional.py looks
// for ops whose torch top-level signature differs), and Tensor methods.
#include "oneflow_like/ops/loss.h"
#include "oneflow_like/ops/nn_misc.h"
#include "oneflow_like/ops/softmax.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

Tensor OptTensor(const py::object& o) {
  return o.is_none() ? Tensor() : o.cast<Tensor>();
}

F::NllOptions NllOpts(const py::object& weight, int64_t ignore_index, const std::string& reduction,
                      double smoothing) {
  F::NllOptions o;
  o.weight = OptTensor(weight);
  o.ignore_index = ignore_index;
  o.reduction = reduction;
  o.label_smoothing = smoothing;
  return o;
}

void Define(py::module_& m) {
  m.def(
      "softmax", [](const Tensor& x, int64_t dim) { return Unwrap(F::Softmax(x, dim)); },
      py::arg("input"), py::arg("dim") = -1);
  m.def(
      "log_softmax", [](const Tensor& x, int64_t dim) { return Unwrap(F::LogSoftmax(x, dim)); },
      py::arg("input"), py::arg("dim") = -1);
  m.def(
      "cross_entropy",
      [](const Tensor& x, const Tensor& t, py::object w, int64_t ignore, const std::string& red,
         double ls) { return Unwrap(F::CrossEntropy(x, t, NllOpts(w, ignore, red, ls))); },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("ignore_index") = -100, py::arg("reduction") = "mean",
      py::arg("label_smoothing") = 0.0);
  m.def(
      "nll_loss",
      [](const Tensor& x, const Tensor& t, py::object w, int64_t ignore, const std::string& red) {
        return Unwrap(F::NllLoss(x, t, NllOpts(w, ignore, red, 0.0)));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("ignore_index") = -100, py::arg("reduction") = "mean");
  m.def(
      "mse_loss",
      [](const Tensor& x, const Tensor& t, const std::string& red) {
        return Unwrap(F::MseLoss(x, t, red));
      },
      py::arg("input"), py::arg("target"), py::arg("reduction") = "mean");
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& x, const Tensor& t, py::object w, const std::string& red, py::object pw) {
        return Unwrap(F::BinaryCrossEntropyWithLogits(x, t, OptTensor(w), OptTensor(pw), red));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
      py::arg("reduction") = "mean", py::arg("pos_weight") = py::none());
  m.def(
      "embedding",
      [](const Tensor& idx, const Tensor& w, py::object pad) {
        std::optional<int64_t> p;
        if (!pad.is_none()) p = pad.cast<int64_t>();
        return Unwrap(F::Embedding(idx, w, p));
      },
      py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none());
  m.def(
      "dropout",
      [](const Tensor& x, double p, bool training) { return Unwrap(F::Dropout(x, p, training)); },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true);
  m.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, py::object mask, double dp, bool causal,
         py::object scale) {
        std::optional<double> sc;
        if (!scale.is_none()) sc = scale.cast<double>();
        return Unwrap(F::ScaledDotProductAttention(q, k, v, OptTensor(mask), dp, causal, sc));
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("scale") = py::none());
}

void BindNn(py::module_& m, TensorClass& cls) {
  Define(m);
  py::module_ sub = py::hasattr(m, "nn_functional")
                        ? py::module_(m.attr("nn_functional"))
                        : m.def_submodule("nn_functional", "torch.nn.functional-style primitives");
  Define(sub);
  cls.def(
         "softmax", [](const Tensor& x, int64_t dim) { return Unwrap(F::Softmax(x, dim)); },
         py::arg("dim") = -1)
      .def(
          "log_softmax", [](const Tensor& x, int64_t dim) { return Unwrap(F::LogSoftmax(x, dim)); },
          py::arg("dim") = -1);
}

}  // namespace
OFL_PY_BINDING(BindNn);
}  // namespace python
}  // namespace oneflow_like
