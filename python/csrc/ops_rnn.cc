// Bindings of the fused recurrent ops, generated from oneflow_like/opdefs/rnn.def (private:
// nn/modules/rnn.py calls them): one function per OFL_RNN_API line, _C._fused_lstm_cell(gates, c)
// -> (h', c'), _C._fused_gru_cell(xw, gh, h) -> h' and _C._rnn_seq(inputs, **attrs) -> [y, hy(,
// cy)]; plus flow._C._rnn_table() for the op-table
// tests.
#include "oneflow_like/opdefs/rnn.h"
#include "oneflow_like/ops/rnn.h"
#include "python/csrc/binding.h"
#include "python/csrc/op_tables_py.h"

namespace oneflow_like {
namespace python {
namespace {
namespace F = functional;

// One binder per sig column.
struct RnnBinder {
  py::module_& m;
  // (gates, c) -> (h', c')
  template <typename Fn>
  void lstm(const char* name, Fn f) {
    m.def(
        name,
        [f](const Tensor& gates, const Tensor& c) {
          auto hc = Unwrap(f(gates, c));
          return py::make_tuple(hc.first, hc.second);
        },
        py::arg("gates"), py::arg("c"));
  }
  // (xw, gh, h) -> h'
  template <typename Fn>
  void gru(const char* name, Fn f) {
    m.def(
        name,
        [f](const Tensor& xw, const Tensor& gh, const Tensor& h) { return Unwrap(f(xw, gh, h)); },
        py::arg("xw"), py::arg("gh"), py::arg("h"));
  }
  // (inputs, *, the RnnSeqAttrs fields) -> [y, hy(, cy)]
  template <typename Fn>
  void seq(const char* name, Fn f) {
    const opdefs::RnnSeqAttrs d;
    m.def(
        name,
        [f](const std::vector<Tensor>& inputs, const std::string& mode, int64_t hidden_size,
            int64_t proj_size, int64_t num_layers, bool bidirectional, bool has_bias,
            double dropout, bool train, std::vector<int64_t> batch_sizes) {
          opdefs::RnnSeqAttrs a;
          a.mode = mode, a.hidden_size = hidden_size, a.proj_size = proj_size;
          a.num_layers = num_layers, a.bidirectional = bidirectional, a.has_bias = has_bias;
          a.dropout = dropout, a.train = train, a.batch_sizes = std::move(batch_sizes);
          return Unwrap(f(TensorList(inputs.begin(), inputs.end()), a));
        },
        py::arg("inputs"), py::kw_only(), py::arg("mode") = d.mode,
        py::arg("hidden_size") = d.hidden_size, py::arg("proj_size") = d.proj_size,
        py::arg("num_layers") = d.num_layers, py::arg("bidirectional") = d.bidirectional,
        py::arg("has_bias") = d.has_bias, py::arg("dropout") = d.dropout,
        py::arg("train") = d.train, py::arg("batch_sizes") = d.batch_sizes);
  }
};

// One row per table entry, for flow._C._rnn_table().
constexpr char kOpCols[] = "name|out|grad|save|#gates";
constexpr char kApiCols[] = "name|sig|entry";
// clang-format off
#define OFL_ATTRS(...)
#define OFL_RNN_API(...)
#define OFL_RNN(name, Name, Attrs, gates, out, grad, save) \
  {#name "|" #out "|" #grad "|" #save "|" #gates, &AttrsDict<opdefs::Attrs>},
#define OFL_RNN_GRAD(name, Name, Attrs, out) \
  {#name "|" #out "|" "NoGrad" "|" "none" "|" "0", &AttrsDict<opdefs::Attrs>},
#define OFL_RNN_SEQ(name, Name, Attrs) \
  {#name "|" "seq" "|" "RnnSeqGrad" "|" "inputs" "|" "0", &AttrsDict<opdefs::Attrs>},
#define OFL_RNN_SEQ_GRAD(name, Name, Attrs) \
  {#name "|" "seq_grad" "|" "NoGrad" "|" "none" "|" "0", &AttrsDict<opdefs::Attrs>},
const TableRow kOpRows[] = {
#include "oneflow_like/opdefs/rnn.def"
};
#undef OFL_RNN
#undef OFL_RNN_GRAD
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_RNN_API
#define OFL_RNN(...)
#define OFL_RNN_GRAD(...)
#define OFL_RNN_SEQ(...)
#define OFL_RNN_SEQ_GRAD(...)
#define OFL_RNN_API(pyname, sig, entry) {#pyname "|" #sig "|" #entry},
const TableRow kApiRows[] = {
#include "oneflow_like/opdefs/rnn.def"
};
#undef OFL_RNN_API
// clang-format on

void BindRnn(py::module_& m, TensorClass&) {
  RnnBinder b{m};
  // clang-format off
#define OFL_RNN_API(pyname, sig, entry) b.sig(#pyname, F::entry);
#include "oneflow_like/opdefs/rnn.def"
#undef OFL_RNN_API
#undef OFL_RNN_GRAD
#undef OFL_RNN
#undef OFL_RNN_SEQ
#undef OFL_RNN_SEQ_GRAD
#undef OFL_ATTRS
  // clang-format on
  DefTable(m, "_rnn_table", kOpCols, kOpRows, kApiCols, kApiRows);
}

}  // namespace
OFL_PY_BINDING(BindRnn);
}  // namespace python
}  // namespace oneflow_like
