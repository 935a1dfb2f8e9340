// flow.profiler's C++ side: starts and stops a recording session and hands the raw events to
// python/oneflow_like/profiler, which builds the trace, key_averages and the Chrome JSON.
#include "oneflow_like/base/trace_recorder.h"
#include "python/csrc/binding.h"
#include "vm/virtual_machine.h"

namespace oneflow_like {
namespace python {
namespace {

// Event names come from C++ and Python (record_function); decode leniently so one bad byte
// cannot make the whole trace unreadable.
py::str Utf8(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

void Start(bool record_shapes, bool profile_memory) {
  if (profiler::Enabled())
    throw py::value_error("[profiler] a profiler is already recording; profilers do not nest");
  profiler::Start(record_shapes, profile_memory);
}

// Stops recording after the VM drained, so every instruction issued while recording is in.
void Stop() {
  Status drained;
  {
    py::gil_scoped_release release;
    drained = vm::VirtualMachine::Get()->SyncAll();
  }
  profiler::Stop();
  Check(drained);
}

// (events, track_names, dropped). An event: (type, track, begin_ns, end_ns, flow_id, call_id,
// value, name, category, args) with type 0 = span, 1 = flow start, 2 = counter.
py::tuple Collect() {
  profiler::Collected c;
  {
    py::gil_scoped_release release;
    c = profiler::Collect();
  }
  py::list events;
  for (const auto& e : c.events) {
    py::str name = e.static_name != nullptr ? Utf8(e.static_name) : Utf8(e.name);
    events.append(py::make_tuple(static_cast<int>(e.type), e.track, e.begin_ns, e.end_ns, e.flow_id,
                                 e.call_id, e.value, name, Utf8(e.category), Utf8(e.args)));
  }
  py::list tracks;
  for (const auto& [track, name] : c.track_names) tracks.append(py::make_tuple(track, Utf8(name)));
  return py::make_tuple(events, tracks, c.dropped);
}

void BindProfiler(py::module_& m, TensorClass&) {
  m.def("_profiler_start", &Start, py::arg("record_shapes"), py::arg("profile_memory"));
  m.def("_profiler_stop", &Stop);
  m.def("_profiler_collect", &Collect);
  m.def("_profiler_enabled", [] { return profiler::Enabled(); });
  m.def("_profiler_now_ns", [] { return profiler::NowNs(); });
  m.def("_profiler_thread_track", [] { return profiler::ThisThreadTrack(); });
  m.def("_profiler_stream_track", [](int device_type, int index, int role) {
    return profiler::StreamTrack(device_type, index, role);
  });
}

}  // namespace
OFL_PY_BINDING(BindProfiler);
}  // namespace python
}  // namespace oneflow_like
