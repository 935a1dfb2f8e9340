// Bindings of the fused recurrent cells (private: nn/modules/rnn.py calls them):
// _C._fused_lstm_cell(gates, c) -> (h', c') and _C._fused_gru_cell(xw, gh, h) -> h'.
#include "oneflow_like/ops/rnn.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

void BindRnn(py::module_& m, TensorClass&) {
  m.def(
      "_fused_lstm_cell",
      [](const Tensor& gates, const Tensor& c) {
        auto hc = Unwrap(F::LstmCellFused(gates, c));
        return py::make_tuple(hc.first, hc.second);
      },
      py::arg("gates"), py::arg("c"));
  m.def(
      "_fused_gru_cell",
      [](const Tensor& xw, const Tensor& gh, const Tensor& h) {
        return Unwrap(F::GruCellFused(xw, gh, h));
      },
      py::arg("xw"), py::arg("gh"), py::arg("h"));
}

}  // namespace
OFL_PY_BINDING(BindRnn);
}  // namespace python
}  // namespace oneflow_like
