// Bindings of lazy mode: tracing scopes and compiled graphs (used by flow.nn.Graph).
#include "compiler/dump.h"
#include "oneflow_like/artifact/graph_artifact.h"
#include "oneflow_like/framework/trace_dtypes.h"
#include "oneflow_like/lazy/graph.h"
#include "oneflow_like/lazy/trace.h"
#include "python/csrc/binding.h"

namespace oneflow_like {
namespace python {
namespace {

// graph.plugin_report(): backends (ops, bytes, flops), partitions, CPU fallbacks with reasons.
py::dict PluginReportToDict(const hlo::plugin::PluginReport& r) {
  py::list backends, partitions, fallbacks;
  for (const auto& b : r.backends)
    backends.append(py::dict(py::arg("name") = b.name, py::arg("ops") = b.ops,
                             py::arg("bytes") = b.bytes, py::arg("flops") = b.flops));
  for (const auto& p : r.partitions)
    partitions.append(py::dict(py::arg("name") = p.name, py::arg("plugin") = p.plugin,
                               py::arg("entry_point") = p.entry_point, py::arg("ops") = p.ops,
                               py::arg("inputs") = p.inputs, py::arg("outputs") = p.outputs,
                               py::arg("bytecode_bytes") = p.bytecode_bytes));
  for (const auto& f : r.fallbacks)
    fallbacks.append(
        py::dict(py::arg("op") = f.op, py::arg("opcode") = f.opcode, py::arg("reason") = f.reason));
  return py::dict(py::arg("backends") = backends, py::arg("partitions") = partitions,
                  py::arg("fallbacks") = fallbacks,
                  py::arg("text") = r.backends.empty() ? std::string() : r.ToString());
}

// One attribute value as a Python object (ints, floats, bools, lists, dtype names, strings).
py::object AttrToPy(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, DType>)
          return py::str(DTypeLongName(x));
        else
          return py::cast(x);
      },
      v);
}

// Python value `v` as an attribute of the recorded value's type (flow.func.vmap's replay).
AttrValue AttrFromPy(const AttrValue& like, py::handle v, const char* op, const char* name) {
  try {
    return std::visit(
        [&](const auto& x) -> AttrValue {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, DType>)
            return Unwrap(DTypeFromName(v.cast<std::string>()));
          else
            return v.cast<T>();
        },
        like);
  } catch (const py::cast_error&) {
    throw py::type_error(std::string("[") + op + "] attribute " + name + ": cannot take a Python " +
                         std::string(py::str(v.get_type())));
  }
}

struct PyTrace {
  std::shared_ptr<lazy::Trace> trace = lazy::Trace::Create();
  std::unique_ptr<lazy::TraceScope> scope;
  bool eager_replay = false;   // vmap's recording: complex ops record (trace_dtypes.h)
  bool outer_complex = false;  // the enclosing trace's setting, restored on exit
};

void BindLazy(py::module_& m, TensorClass&) {
  py::class_<PyTrace>(m, "_Trace")
      // eager_replay: the trace is only replayed eagerly (flow.func.vmap), never compiled, so
      // it records complex ops as well.
      .def(py::init([](bool eager_replay) {
             auto t = std::make_unique<PyTrace>();
             t->eager_replay = eager_replay;
             return t;
           }),
           py::arg("eager_replay") = false)
      .def("add_input",
           [](PyTrace& t, const Tensor& example) { return t.trace->AddInput(example); })
      .def("set_outputs", [](PyTrace& t, std::vector<Tensor> outs) { t.trace->SetOutputs(outs); })
      .def(
          "__enter__",
          [](PyTrace& t) {
            if (t.scope) throw py::value_error("[nn.Graph] trace already active");
            t.scope = std::make_unique<lazy::TraceScope>(t.trace);
            t.outer_complex = TraceRecordsComplex();
            SetTraceRecordsComplex(t.eager_replay);
            return &t;
          },
          py::return_value_policy::reference)
      .def("__exit__",
           [](PyTrace& t, py::args) {
             if (t.scope) SetTraceRecordsComplex(t.outer_complex);
             t.scope.reset();
             return false;
           })
      .def("num_ops", [](PyTrace& t) { return t.trace->ops().size(); })
      // The recorded program as data (flow.onnx.export reads it): ops as (name, attrs, input
      // value ids, output value ids); values as (kind, shape, dtype name, input/capture/op index).
      .def("ops",
           [](PyTrace& t) {
             py::list out;
             for (const lazy::TracedOp& op : t.trace->ops()) {
               py::dict attrs;
               for (const auto& kv : op.attrs.items()) attrs[kv.first] = AttrToPy(kv.second);
               out.append(py::make_tuple(op.op->name, attrs, op.inputs, op.outputs));
             }
             return out;
           })
      .def("values",
           [](PyTrace& t) {
             static const char* kinds[] = {"input", "captured", "op"};
             py::list out;
             for (const lazy::TracedValue& v : t.trace->values())
               out.append(py::make_tuple(
                   kinds[v.kind],
                   std::vector<int64_t>(v.meta.shape.dims().begin(), v.meta.shape.dims().end()),
                   DTypeLongName(v.meta.dtype), v.index));
             return out;
           })
      // Per op: (recorded from an in-place call, autograd recorded a node there, per input
      // whether it required grad).
      .def("op_flags",
           [](PyTrace& t) {
             py::list out;
             for (const lazy::TracedOp& op : t.trace->ops())
               out.append(
                   py::make_tuple(op.inplace, op.differentiable, py::cast(op.input_requires_grad)));
             return out;
           })
      // Runs recorded op `index` eagerly on `inputs` with its recorded attributes, those named
      // in `attrs` replaced (same names and types): flow.func.vmap replays a rewritten trace.
      .def(
          "dispatch",
          [](PyTrace& t, size_t index, const std::vector<Tensor>& inputs, py::dict attrs) {
            if (t.scope) throw py::value_error("[vmap] replay while the trace is still recording");
            const auto& ops = t.trace->ops();
            if (index >= ops.size()) throw py::index_error("[vmap] no such traced op");
            const lazy::TracedOp& rec = ops[index];
            AttrMap a = rec.attrs;
            for (auto kv : attrs) {
              std::string name = py::str(kv.first);
              const char* key = nullptr;
              for (const auto& item : rec.attrs.items())
                if (name == item.first) key = item.first;
              if (!key)
                throw py::key_error("[" + std::string(rec.op->name) + "] has no attribute " + name);
              a.Set(key, AttrFromPy(*rec.attrs.Find(key), kv.second, rec.op->name, key));
            }
            return Unwrap(Dispatch(*rec.op, inputs, a));
          },
          py::arg("index"), py::arg("inputs"), py::arg("attrs") = py::dict())
      .def("captured", [](PyTrace& t) { return t.trace->captured(); })
      .def("output_values", [](PyTrace& t) { return t.trace->output_values(); })
      .def("__str__", [](PyTrace& t) { return t.trace->ToString(); });
  py::class_<lazy::CompiledGraph, std::shared_ptr<lazy::CompiledGraph>>(m, "_CompiledGraph")
      .def("run",
           [](lazy::CompiledGraph& g, std::vector<Tensor> inputs) { return Unwrap(g.Run(inputs)); })
      .def_property_readonly("compile_seconds",
                             [](lazy::CompiledGraph& g) { return g.info().compile_seconds; })
      .def_property_readonly("lower_seconds",
                             [](lazy::CompiledGraph& g) { return g.info().lower_seconds; })
      .def_property_readonly("hlo_before",
                             [](lazy::CompiledGraph& g) { return g.info().hlo_before; })
      .def_property_readonly("hlo_after", [](lazy::CompiledGraph& g) { return g.info().hlo_after; })
      .def_property_readonly("thunks", [](lazy::CompiledGraph& g) { return g.info().thunks; })
      // Graphviz DOT of the optimized module: fusions as clusters, value bytes on edges.
      .def_property_readonly(
          "dot", [](lazy::CompiledGraph& g) { return hlo::ModuleToDot(g.compiled_module()); })
      // Buffer assignment: the temp arena (the simulated peak of the chosen schedule, packed
      // best-fit), its lower bound (the largest set of temporaries live at once) and all bytes
      // the executable owns (arena + constants; parameters/outputs are the caller's).
      .def_property_readonly(
          "arena_bytes", [](lazy::CompiledGraph& g) { return g.buffer_assignment().temp_bytes(); })
      .def_property_readonly(
          "lower_bound_bytes",
          [](lazy::CompiledGraph& g) { return g.buffer_assignment().lower_bound_bytes(); })
      .def_property_readonly(
          "total_buffer_bytes",
          [](lazy::CompiledGraph& g) { return g.buffer_assignment().total_bytes(); })
      .def_property_readonly("num_lowered",
                             [](lazy::CompiledGraph& g) { return g.info().lower.lowered; })
      // (tensors the graph updates in place, tensors it assigns): in place when the compiler
      // proved no reader of the old value runs after the update (compile.h, donated).
      .def_property_readonly("in_place_assignments",
                             [](lazy::CompiledGraph& g) { return g.in_place_counts(); })
      // The device the graph runs on ("cpu", "cuda:0"), and for a device graph the compiler's
      // figures and why its ops all became kernel calls ("" when its HLO compiled).
      .def_property_readonly("device", [](lazy::CompiledGraph& g) { return g.device().ToString(); })
      .def_property_readonly("device_stats",
                             [](lazy::CompiledGraph& g) { return g.info().device_stats; })
      .def_property_readonly("device_fallback",
                             [](lazy::CompiledGraph& g) { return g.info().device_fallback; })
      .def_property_readonly("kernel_call_ops",
                             [](lazy::CompiledGraph& g) { return g.info().lower.kernel_call_ops; })
      .def_property_readonly("plugin_report", [](lazy::CompiledGraph& g) {
        return PluginReportToDict(g.info().plugin_report);
      });
  // python -m oneflow_like.apply_plugin: AOT plugin compilation of an .oflx artifact.
  m.def("_artifact_apply_plugins",
        [](const std::string& in, std::vector<std::string> plugins, const std::string& out) {
          StatusOr<hlo::plugin::PluginReport> report = InvalidArgument("not run");
          {
            py::gil_scoped_release nogil;
            report = artifact::ApplyPlugins(in, plugins, out);
          }
          return PluginReportToDict(Unwrap(std::move(report)));
        });
  // plugins: None = ONEFLOW_LIKE_PLUGINS, else a list of compiler plugin library paths.
  m.def(
      "_compile_trace",
      [](PyTrace& t, const std::string& name, py::object plugins) {
        if (t.scope) throw py::value_error("[nn.Graph] compile after the trace scope is closed");
        lazy::PluginPaths paths;
        if (!plugins.is_none()) paths = plugins.cast<std::vector<std::string>>();
        py::gil_scoped_release nogil;
        return Unwrap(lazy::CompiledGraph::Compile(t.trace, name, paths));
      },
      py::arg("trace"), py::arg("name"), py::arg("plugins") = py::none());
}

}  // namespace
OFL_PY_BINDING(BindLazy);
}  // namespace python
}  // namespace oneflow_like
